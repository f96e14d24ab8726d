package nodes

import (
	"net/mail"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/sandbox"
)

// The checks below are the node types' blueprint.NodeType.Check hooks. They
// run when a blueprint loads (sandgate validate, and run before anything
// runs) and again in guard before a factory builds the node, so a
// configuration is refused at its field, with a caret, and never accepted by
// validation only to be refused by the factory.

// checkDiffCap refuses a diff_cap without a cap: it would pass any change.
func checkDiffCap(n *blueprint.Node, _ *yaml.Node) []blueprint.Diagnostic {
	caps := []string{"max_lines", "max_files", "max_bytes"}
	for _, f := range caps {
		if v, _ := n.Config[f].(int); v > 0 {
			return nil
		}
	}
	for _, f := range caps {
		if _, set := n.Config[f]; set {
			return []blueprint.Diagnostic{n.ErrorAt(f, -1, "diff_cap needs a positive max_lines, max_files or max_bytes: a zero cap checks nothing")}
		}
	}
	return []blueprint.Diagnostic{n.ErrorAt("", -1, "diff_cap needs max_lines, max_files or max_bytes: without a cap it passes any change")}
}

// checkTest refuses rerun_failed where the harness cannot re-run single
// tests: it re-runs failures with go test's -run.
func checkTest(n *blueprint.Node, _ *yaml.Node) []blueprint.Diagnostic {
	rerun, _ := n.Config["rerun_failed"].(int)
	format, _ := n.Config["format"].(string)
	if rerun > 0 && format != "go-json" && !commandOf(n.Config["run"], "run").isGoTest() {
		return []blueprint.Diagnostic{n.ErrorAt("rerun_failed", -1, "rerun_failed needs go test -json (format: go-json): failures are re-run with go test -run")}
	}
	if hidden, _ := n.Config["hidden"].(string); hidden != "" {
		if _, err := hiddenFiles(hidden); err != nil {
			return []blueprint.Diagnostic{n.ErrorAt("hidden", -1, "%v", err)}
		}
	}
	report, _ := n.Config["report"].(string)
	if report == "" {
		return nil
	}
	if rerun > 0 {
		return []blueprint.Diagnostic{n.ErrorAt("rerun_failed", -1, "rerun_failed reads go test -json output and cannot be combined with report: %s", report)}
	}
	if _, ok := reportPath(report); !ok {
		return []blueprint.Diagnostic{n.ErrorAt("report", -1, "%q must be a file under %s/: a gate may not write in the workspace it judges", report, sandbox.TmpDir)}
	}
	return nil
}

// reportPath is a report's cleaned path, and whether it is a file in the
// box's scratch directory.
func reportPath(report string) (string, bool) {
	r := path.Clean(report)
	return r, strings.HasPrefix(r, sandbox.TmpDir+"/")
}

// checkReview refuses a GitHub review without the repository to open the
// pull request in.
func checkReview(n *blueprint.Node, _ *yaml.Node) []blueprint.Diagnostic {
	queue, _ := n.Config["queue"].(string)
	repo, set := n.Config["repo"].(string)
	if queue != "github" || strings.Contains(repo, "/") {
		return nil
	}
	if set {
		return []blueprint.Diagnostic{n.ErrorAt("repo", -1, "want owner/name for queue github, got %q", repo)}
	}
	return []blueprint.Diagnostic{n.ErrorAt("queue", -1, "queue github needs repo: owner/name")}
}

// checkGitCommit refuses an author that is not "Name <email>" and a branch
// name git would refuse, before any agent work is spent.
func checkGitCommit(n *blueprint.Node, _ *yaml.Node) []blueprint.Diagnostic {
	var ds []blueprint.Diagnostic
	if a, _ := n.Config["author"].(string); a != "" {
		if _, err := mail.ParseAddress(a); err != nil {
			ds = append(ds, n.ErrorAt("author", -1, "want \"Name <email>\", got %q: %v", a, err))
		}
	}
	// A templated branch is checked once rendered, when the node runs.
	if b, _ := n.Config["branch"].(string); b != "" && !strings.Contains(b, "${{") && !validBranch(b) {
		ds = append(ds, n.ErrorAt("branch", -1, "invalid branch name %q", b))
	}
	return ds
}
