package ghworkflow

import (
	"fmt"
	"regexp"
	"strings"
)

// Proposal is the sandbox.image proposed for one job.
type Proposal struct {
	Job string `json:"job"`
	// Image is the registry reference to use, without the docker://
	// transport and without a digest unless the workflow pins one ("" when
	// the workflow names nothing that maps to an image).
	Image string `json:"image,omitempty"`
	// From says what the image comes from: "container" or a tool name.
	From string `json:"from,omitempty"`
	At   string `json:"at,omitempty"`
	// Pinned: Image names its digest, so it is a sandbox.image as it is.
	Pinned bool     `json:"pinned"`
	Notes  []string `json:"notes,omitempty"`
}

// Value is the sandbox.image line: docker://Image, with digest when
// pinned, or with a placeholder that sandbox.image refuses until the
// digest is resolved.
func (p Proposal) Value() string {
	if p.Image == "" {
		return ""
	}
	if p.Pinned {
		return "docker://" + p.Image
	}
	return "docker://" + p.Image + "@sha256:<digest>"
}

// officialImages names the Docker Official Image of each tool, tagged by
// version.
var officialImages = map[string]string{"go": "golang", "node": "node", "python": "python"}

// refRE is a registry reference an image line may carry: a name, an
// optional tag, an optional digest; nothing else (no spaces, no
// expressions, no control characters).
var refRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._:/-]{0,253}[a-z0-9])?(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$`)

// digestRE finds the digest of a pinned reference.
var digestRE = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

// Propose proposes an image for every job that names a toolchain, in the
// workflow's order. A job's container wins over its setup steps (they
// then install into the container). Without a container, the first
// setup step's tool gives the official image; the job's other tools are
// noted, since no official image holds two toolchains.
func Propose(w *Workflow) []Proposal {
	var out []Proposal
	for _, j := range w.Jobs {
		p := Proposal{Job: j.ID}
		switch {
		case j.Container != "":
			p.From, p.At = "container", j.ContainerAt
			ref := strings.TrimPrefix(strings.TrimSpace(j.Container), "docker://")
			if _, isExpr := expression(ref); isExpr || !refRE.MatchString(ref) {
				p.Notes = append(p.Notes, "the container image is not a literal registry reference: name it yourself")
				break
			}
			p.Image, p.Pinned = ref, digestRE.MatchString(ref)
		case len(j.Tools) > 0:
			t := j.Tools[0]
			p.From, p.At = t.Name, t.At
			if t.Version == "" {
				p.Notes = append(p.Notes, fmt.Sprintf("%s version %q: %s", t.Name, t.Written, t.Note))
				break
			}
			p.Image = officialImages[t.Name] + ":" + t.Version
			if t.Note != "" {
				p.Notes = append(p.Notes, t.Name+": "+t.Note)
			}
		default:
			continue
		}
		for _, t := range j.Tools[min(len(j.Tools), boolInt(j.Container == "")):] {
			if j.Container != "" {
				p.Notes = append(p.Notes, fmt.Sprintf("the job also installs %s %s into its container (%s): the image must hold it too", t.Name, orWritten(t), t.At))
			} else if t.Name != p.From {
				p.Notes = append(p.Notes, fmt.Sprintf("the job also sets up %s %s (%s): no official image holds both; build one that does and name it with oci:DIR", t.Name, orWritten(t), t.At))
			}
		}
		out = append(out, p)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func orWritten(t Tool) string {
	if t.Version != "" {
		return t.Version
	}
	return fmt.Sprintf("%q", t.Written)
}

// Versions returns every resolved tool version of the workflow's jobs,
// once each, in order: the parity node takes the box as matching a tool
// when it has any of them (jobs may pin different versions: a lint job
// on one Go, the tests on another).
func Versions(w *Workflow) []Tool {
	seen := map[string]bool{}
	var out []Tool
	for _, j := range w.Jobs {
		for _, t := range j.Tools {
			if k := t.Name + " " + t.Version; t.Version != "" && !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	return out
}
