package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/ghworkflow"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/sandbox/image"
)

// workflowProposals is one workflow's proposals, as --format json shows
// them.
type workflowProposals struct {
	File      string           `json:"file"`
	Error     string           `json:"error,omitempty"`
	Proposals []imageProposal  `json:"proposals"`
	Tools     []ghworkflow.Job `json:"jobs,omitempty"`
}

type imageProposal struct {
	ghworkflow.Proposal
	// SandboxImage is the blueprint's sandbox.image value.
	SandboxImage string `json:"sandbox_image,omitempty"`
	// Next says how to pin an unpinned proposal.
	Next string `json:"next,omitempty"`
}

const imageProposeHelp = `[--workflow FILE] [--resolve] [REPO]

Reads the repository's GitHub Actions workflows (.github/workflows/*.yml,
or the one --workflow names) and proposes, job by job, the sandbox.image
whose toolchain matches CI's: the job's container image, or the official
golang, node or python image of the version actions/setup-go, setup-node
or setup-python installs (a matrix: the newest, said in a note). A
registry image must be pinned by digest; --resolve asks the registry for
the digest of this machine's platform, otherwise the proposal says how.
Exit 1 when a workflow cannot be read or nothing names a toolchain.

flags:`

// cmdSandboxImage is `sandgate sandbox image propose`.
func cmdSandboxImage(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "propose" {
		fmt.Fprintln(stderr, "sandgate sandbox image: the command is `sandgate sandbox image propose [--workflow FILE] [REPO]`")
		return exitUsage
	}
	fs := newFlags("sandbox image propose", imageProposeHelp, stdout, stderr)
	format := fs.format("text", "json")
	workflow := fs.String("workflow", "", "one workflow file (default: REPO/.github/workflows/*.yml and *.yaml)")
	resolve := fs.Bool("resolve", false, "ask the registry for each proposed tag's digest (needs the network)")
	pos, code, ok := fs.parseN(args[1:], 0, 1)
	if !ok {
		return code
	}
	repo := "."
	if len(pos) == 1 {
		repo = pos[0]
	}
	files, err := workflowFiles(repo, *workflow)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate sandbox image propose:", termtext.Line(err.Error()))
		return exitFailed
	}
	out := proposeAll(repo, files, *resolve)
	if *format == "json" {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
	} else {
		printProposals(stdout, out)
	}
	found := false
	for _, w := range out {
		if w.Error != "" {
			return exitFailed
		}
		for _, p := range w.Proposals {
			found = found || p.Image != ""
		}
	}
	if !found {
		return exitFailed
	}
	return exitOK
}

// workflowFiles lists the workflows to read.
func workflowFiles(repo, one string) ([]string, error) {
	if one != "" {
		return []string{one}, nil
	}
	var files []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(repo, ".github", "workflows", pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no workflow in %s (.github/workflows/*.yml); name one with --workflow", filepath.Join(repo, ".github", "workflows"))
	}
	sort.Strings(files)
	return files, nil
}

// proposeAll reads each workflow and proposes; a version file a setup
// step names (go-version-file: go.mod) is read through an os.Root on the
// repository, so a workflow cannot make it read outside.
func proposeAll(repo string, files []string, resolve bool) []workflowProposals {
	root, _ := os.OpenRoot(repo)
	read := func(name string) ([]byte, error) {
		if root == nil {
			return nil, fs.ErrNotExist
		}
		return root.ReadFile(name)
	}
	out := []workflowProposals{}
	for _, f := range files {
		wp := workflowProposals{File: f, Proposals: []imageProposal{}}
		data, err := os.ReadFile(f)
		var w *ghworkflow.Workflow
		if err == nil {
			w, err = ghworkflow.Parse(f, data, read)
		}
		if err != nil {
			wp.Error = err.Error()
			out = append(out, wp)
			continue
		}
		wp.Tools = w.Jobs
		for _, p := range ghworkflow.Propose(w) {
			wp.Proposals = append(wp.Proposals, pin(p, resolve))
		}
		out = append(out, wp)
	}
	return out
}

// pin resolves an unpinned proposal's digest when asked, or says how.
func pin(p ghworkflow.Proposal, resolve bool) imageProposal {
	ip := imageProposal{Proposal: p}
	if p.Image != "" && !p.Pinned && resolve {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		d, err := image.Resolve(ctx, p.Image)
		cancel()
		if err == nil {
			ip.Image, ip.Pinned = p.Image+"@"+d, true
		} else {
			ip.Notes = append(ip.Notes, "could not resolve the digest: "+err.Error())
		}
	}
	if ip.Image != "" && !ip.Pinned {
		ip.Next = fmt.Sprintf("resolve and pin the digest: run again with --resolve, or `crane digest --platform linux/%s %s`", goruntime.GOARCH, ip.Image)
	}
	ip.SandboxImage = ip.Proposal.Value()
	return ip
}

// printProposals writes the proposals as text; everything taken from a
// workflow goes through termtext, since a workflow is untrusted.
func printProposals(w io.Writer, out []workflowProposals) {
	for _, wp := range out {
		fmt.Fprintln(w, termtext.Name(wp.File))
		if wp.Error != "" {
			fmt.Fprintln(w, "  error:", termtext.Line(wp.Error))
			continue
		}
		if len(wp.Proposals) == 0 {
			fmt.Fprintln(w, "  no job names a container or sets up go, node or python")
		}
		for _, p := range wp.Proposals {
			fmt.Fprintf(w, "  job %s", termtext.Line(p.Job))
			if p.From != "" {
				fmt.Fprintf(w, " (%s at %s)", p.From, termtext.Line(p.At))
			}
			fmt.Fprintln(w, ":")
			if p.SandboxImage != "" {
				fmt.Fprintf(w, "    sandbox:\n      image: %s\n", termtext.Line(p.SandboxImage))
			} else {
				fmt.Fprintln(w, "    no image to propose")
			}
			if p.Next != "" {
				fmt.Fprintln(w, "    "+termtext.Line(p.Next))
			}
			for _, n := range p.Notes {
				fmt.Fprintln(w, "    note: "+termtext.Line(n))
			}
		}
	}
	fmt.Fprintln(w, strings.TrimSpace(`
A proposal holds the toolchain CI installs; the image must also hold what
the blueprint's commands use (a shell, git for the gates). See the README's
"Box image".`))
}
