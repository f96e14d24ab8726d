package checks

import (
	"os"
	"strings"

	"github.com/sandgate/sandgate/internal/ghworkflow"
)

// pinScript prints, each after a \x1e and its name, the files that pin
// tool versions: the repository's own pins, the version files a setup
// action may read, and the GitHub Actions workflows.
const pinScript = `for f in go.mod go.work .tool-versions .nvmrc .node-version .python-version .github/workflows/*.yml .github/workflows/*.yaml; do [ -f "$f" ] && printf '\036%s\n' "$f" && head -c 65536 "$f"; done; true`

// workflowVersions reads the versions the printed workflows set up
// (actions/setup-go, setup-node, setup-python; a matrix gives its
// newest), one want per tool: the box matches when it has any version
// some job sets up. A workflow that does not parse pins nothing here:
// `sandgate sandbox image propose` names its error.
func workflowVersions(output string) []toolWant {
	files := map[string]string{}
	var workflows []string
	for _, chunk := range strings.Split(output, "\x1e")[1:] {
		name, body, _ := strings.Cut(chunk, "\n")
		files[name] = body
		if strings.HasPrefix(name, ".github/workflows/") {
			workflows = append(workflows, name)
		}
	}
	read := func(name string) ([]byte, error) {
		if b, ok := files[name]; ok {
			return []byte(b), nil
		}
		return nil, os.ErrNotExist
	}
	byTool := map[string]int{}
	var wants []toolWant
	for _, name := range workflows {
		w, err := ghworkflow.Parse(name, []byte(files[name]), read)
		if err != nil {
			continue
		}
		for _, t := range ghworkflow.Versions(w) {
			if i, ok := byTool[t.Name]; ok {
				wants[i].anyOf = append(wants[i].anyOf, t.Version)
				continue
			}
			byTool[t.Name] = len(wants)
			wants = append(wants, toolWant{tool: t.Name, version: t.Version, source: "workflow " + t.At})
		}
	}
	return wants
}
