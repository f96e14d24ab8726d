package trigger

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

var inputNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// parseCommand reads `<blueprint> [key=value…]`: words split at spaces, a
// value may be double-quoted to hold spaces ("..." with no escapes). The
// words are only ever names and values; nothing here is a flag or shell.
func parseCommand(text string) (string, map[string]string, error) {
	words, err := splitWords(text)
	if err != nil {
		return "", nil, err
	}
	if len(words) == 0 {
		return "", nil, errors.New(`say which blueprint: /sandgate <blueprint> [key=value…]`)
	}
	name, inputs := words[0], map[string]string{}
	if !inputNameRE.MatchString(name) {
		return "", nil, fmt.Errorf("%q is not a blueprint name", name)
	}
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		switch {
		case !ok || !inputNameRE.MatchString(k):
			return "", nil, fmt.Errorf("%q is not key=value (a key is letters, digits, '_' or '-')", w)
		case hasKey(inputs, k):
			return "", nil, fmt.Errorf("input %s given twice", k)
		}
		inputs[k] = v
	}
	return name, inputs, nil
}

// splitWords splits at spaces outside double quotes, dropping the quotes.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, has := false, false
	for _, c := range s {
		switch {
		case c == '"':
			in, has = !in, true
		case !in && (c == ' ' || c == '\t'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(c)
			has = true
		}
	}
	if in {
		return nil, errors.New("a double quote is not closed")
	}
	if has {
		out = append(out, cur.String())
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
