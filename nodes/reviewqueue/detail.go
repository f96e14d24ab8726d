package reviewqueue

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sandgate/sandgate/runtime"
)

// ChangedFile is one file of a change with its added and deleted lines.
type ChangedFile struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// changedFiles counts each file's added and deleted lines in a git diff,
// reading hunk headers for their lengths so a content line that looks like
// a header ("--- x" removed, "+++ y" added) counts as content.
func changedFiles(diff string) []ChangedFile {
	var out []ChangedFile
	var cur *ChangedFile
	oldLeft, newLeft := 0, 0
	for _, line := range strings.Split(diff, "\n") {
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(line, "+"):
				cur.Added++
				newLeft--
			case strings.HasPrefix(line, "-"):
				cur.Deleted++
				oldLeft--
			case strings.HasPrefix(line, `\`): // "\ No newline at end of file"
			default:
				oldLeft--
				newLeft--
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			out = append(out, ChangedFile{Path: diffGitPath(line)})
			cur = &out[len(out)-1]
		case cur == nil:
		case strings.HasPrefix(line, "+++ ") && line != "+++ /dev/null":
			cur.Path = stripPrefix(unquote(line[4:]), "b/")
		case strings.HasPrefix(line, "--- ") && line != "--- /dev/null" && cur.Path == "":
			cur.Path = stripPrefix(unquote(line[4:]), "a/")
		case strings.HasPrefix(line, "Binary files "):
			cur.Binary = true
		case strings.HasPrefix(line, "@@ "):
			oldLeft, newLeft = hunkLengths(line)
		}
	}
	return out
}

// diffGitPath is the b/ path of a "diff --git a/x b/x" line when it can be
// told apart (paths with " b/" in them are named again on the +++ line).
func diffGitPath(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if strings.HasPrefix(rest, `"`) {
		if i := strings.Index(rest, `" `); i > 0 {
			return stripPrefix(unquote(rest[i+2:]), "b/")
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// hunkLengths reads "@@ -a,b +c,d @@": b old and d new lines (1 when the
// count is left out).
func hunkLengths(line string) (int, int) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return 0, 0
	}
	count := func(s string) int {
		_, n, found := strings.Cut(s[1:], ",")
		if !found {
			return 1
		}
		v, _ := strconv.Atoi(n)
		return v
	}
	return count(f[1]), count(f[2])
}

// unquote undoes git's C-style quoting of unusual path names, and drops
// the tab git ends a ---/+++ line with when the name has a space.
func unquote(s string) string {
	s = strings.TrimSuffix(s, "\t")
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

func stripPrefix(s, p string) string { return strings.TrimPrefix(s, p) }

// runSummary finds the agent's summary in a run directory: run.json's
// attempts once the run ended, else its journal.
func runSummary(runDir string) string {
	if runDir == "" {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(runDir, "run.json")); err == nil {
		var sum runtime.Summary
		if json.Unmarshal(b, &sum) == nil {
			for i := len(sum.Attempts) - 1; i >= 0; i-- {
				if s, ok := sum.Attempts[i].Outputs["summary"].(string); ok && s != "" {
					return s
				}
			}
		}
	}
	return AgentSummary(runDir)
}
