package ghworkflow

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// exactRE is a version an image tag can name: 1, 1.23, 1.23.4.
var exactRE = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,4}){0,2}$`)

// version reads one written version: "1.23.4", "v20", "1.23.x" (the
// newest patch: the image tag without it). A range, an alias ("stable",
// "lts/*") or anything else is left unresolved with a note.
func version(tool, s string) (string, string) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if tool == "go" {
		v = strings.TrimPrefix(v, "go")
	}
	for strings.HasSuffix(v, ".x") || strings.HasSuffix(v, ".*") {
		v = v[:len(v)-2]
	}
	if exactRE.MatchString(v) {
		return v, ""
	}
	return "", "not one version (a range or an alias such as stable or lts/*): pin one in the workflow, or choose the image yourself"
}

// versionLess orders dotted versions numerically.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		x, y := -1, -1
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// fromFile reads a *-version-file the way the setup action does: go.mod
// or go.work's toolchain line, else its go line; .nvmrc, .node-version,
// .python-version and .tool-versions' line for the tool.
func (p *parser) fromFile(tool, name string) (string, string) {
	if p.read == nil {
		return "", fmt.Sprintf("reads %s, which was not given", name)
	}
	clean := path.Clean(strings.TrimPrefix(name, "./"))
	if path.IsAbs(clean) || strings.HasPrefix(clean, "../") || clean == ".." {
		return "", "the version file is outside the repository"
	}
	b, err := p.read(clean)
	if err != nil {
		return "", fmt.Sprintf("cannot read %s", clean)
	}
	if len(b) > 1<<16 {
		b = b[:1<<16]
	}
	var goLine, toolchain, first string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case len(f) == 2 && f[0] == "go":
			goLine = f[1]
		case len(f) == 2 && f[0] == "toolchain":
			toolchain = f[1]
		case len(f) >= 2 && (f[0] == tool || f[0] == tool+"js" || tool == "go" && f[0] == "golang"):
			first = f[1] // .tool-versions
		case first == "" && len(f) == 1:
			first = f[0]
		}
	}
	switch base := path.Base(clean); {
	case tool == "go" && (base == "go.mod" || base == "go.work") && toolchain != "":
		return version(tool, toolchain)
	case tool == "go" && (base == "go.mod" || base == "go.work") && goLine != "":
		return version(tool, goLine)
	case first != "":
		return version(tool, first)
	}
	return "", fmt.Sprintf("%s names no %s version", clean, tool)
}
