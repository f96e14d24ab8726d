package agent

import "github.com/sandgate/sandgate/nodes/internal/wspath"

// workDir is where the workspace is mounted inside the box.
const workDir = "/work"

// confine maps a model-supplied path to a path inside the workspace; ""
// and "." are the root. wspath.Clean holds the rules.
func confine(p string) (string, error) {
	if p == "" {
		return workDir, nil
	}
	clean, err := wspath.Clean(p)
	if err != nil {
		return "", err
	}
	if clean == "." {
		return workDir, nil
	}
	return workDir + "/" + clean, nil
}
