package promote

import (
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/runtime"
)

// CommitType declares git_commit nodes; they run with the box held
// exclusively, so the change cannot move between the verdict check and
// the commit.
func CommitType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[GitCommitConfig](blueprint.NodeType{Name: "git_commit", Stage: "promote", Doc: "commits the workspace change (as git add -A would stage it) on the run's branch",
		Outputs: map[string]blueprint.Kind{"commit": blueprint.KindString, "branch": blueprint.KindString, "parent": blueprint.KindString,
			"attempt": blueprint.KindInt, "ignored": blueprint.KindStringList, "ignored_count": blueprint.KindInt}}), New: gate.Quietly(newGitCommit, false)}
}

// PushType declares git_push nodes, whose token goes only to GitHub or
// under a prefix in allowed (the operator's --allow-endpoint).
func PushType(allowed []string) runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[GitPushConfig](blueprint.NodeType{Name: "git_push", Stage: "promote", Doc: "pushes the committed branch with credentials kept outside the sandbox",
		Outputs: map[string]blueprint.Kind{"ref": blueprint.KindString, "pushed": blueprint.KindBool, "remote": blueprint.KindString}}),
		New: gate.Quietly(func(spec *blueprint.Node) (runtime.Node, error) { return newGitPush(spec, allowed) }, false)}
}
