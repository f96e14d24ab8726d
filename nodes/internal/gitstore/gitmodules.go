package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/wspath"
	"github.com/sandgate/sandgate/sandbox"
)

// maxGitmodules bounds the .gitmodules file the harness reads to check.
const maxGitmodules = 1 << 20

// checkGitmodules refuses a .gitmodules whose submodules git's fsck would
// flag or that could run or fetch anything on checkout: names or paths
// with .. or .git, URLs that are not plainly relative (an absolute URL,
// an option such as --upload-pack, a newline smuggled in a percent
// escape), and update commands. Anything the strict reader below cannot
// parse is refused too.
func checkGitmodules(c sandbox.Change) error {
	if c.Size > maxGitmodules {
		return fmt.Errorf(".gitmodules larger than %d bytes", maxGitmodules)
	}
	var buf bytes.Buffer
	if err := CopyContent(&buf, c); err != nil {
		return err
	}
	section := ""
	for i, line := range strings.Split(buf.String(), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		var err error
		if line[0] == '[' {
			section, err = gitmodulesSection(line)
		} else if section != "" {
			err = gitmodulesKey(line)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return nil
}

// gitmodulesSection returns the submodule name of a section header, or
// "-" for sections git ignores in .gitmodules.
func gitmodulesSection(line string) (string, error) {
	if !strings.HasSuffix(line, "]") {
		return "", errors.New("unsupported section header")
	}
	inner := strings.TrimSpace(line[1 : len(line)-1])
	if !strings.HasPrefix(strings.ToLower(inner), "submodule") || strings.EqualFold(inner, "submodule") {
		return "-", nil
	}
	name, ok := strings.CutPrefix(inner[len("submodule"):], " ")
	if !ok || len(name) < 2 || name[0] != '"' || name[len(name)-1] != '"' ||
		strings.ContainsAny(name[1:len(name)-1], "\"\\") || strings.ContainsFunc(name, isControl) {
		return "", errors.New(`unsupported submodule header (want [submodule "name"])`)
	}
	name = name[1 : len(name)-1]
	for _, comp := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if comp == ".." {
			return "", fmt.Errorf("submodule name %q has a .. component", name)
		}
	}
	if name == "" {
		return "", errors.New("empty submodule name")
	}
	return name, nil
}

// gitmodulesKey checks one key = value line of a submodule section.
func gitmodulesKey(line string) error {
	key, raw, ok := strings.Cut(line, "=")
	key = strings.ToLower(strings.TrimSpace(key))
	if key != "url" && key != "path" && key != "update" {
		return nil
	}
	if !ok || strings.ContainsAny(raw, "\"\\") {
		return fmt.Errorf("unsupported syntax in %q (quotes, escapes and bare keys are refused)", line)
	}
	val := raw
	if i := strings.IndexAny(val, "#;"); i >= 0 {
		val = val[:i]
	}
	val = strings.TrimSpace(val)
	switch key {
	case "url":
		return safeSubmoduleURL(val)
	case "path":
		if strings.HasPrefix(val, "-") || wspath.GitUnsafe(val, false) != "" {
			return fmt.Errorf("unsafe submodule path %q", val)
		}
	case "update":
		if strings.HasPrefix(val, "!") {
			return fmt.Errorf("submodule update command %q", val)
		}
	}
	return nil
}

// safeSubmoduleURL accepts only ./ or ../ URLs free of control characters,
// also after percent-decoding.
func safeSubmoduleURL(u string) error {
	if !strings.HasPrefix(u, "./") && !strings.HasPrefix(u, "../") {
		return fmt.Errorf("submodule URL %q is not relative (./ or ../)", u)
	}
	dec, err := url.PathUnescape(u)
	if err != nil {
		return fmt.Errorf("submodule URL %q: %w", u, err)
	}
	for _, s := range []string{u, dec} {
		if strings.ContainsFunc(s, isControl) || strings.Contains(s, `\`) {
			return fmt.Errorf("submodule URL %q holds control characters or backslashes", u)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
