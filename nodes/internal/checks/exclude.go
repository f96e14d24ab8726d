package checks

import (
	"fmt"
	"path"
	"strings"
)

// excludeList is diff_cap's exclude: patterns in .gitignore's syntax, all
// anchored at the repository's root. A pattern without a slash names the
// root's entry (go.sum is the root's go.sum, never tools/go.sum): unlike
// in a .gitignore, where it would match at any depth, because what a
// pattern leaves uncounted must be exactly what its author meant, and a
// lock file's name is easy to reuse for anything. ** as a whole element
// matches any number of directories (**/go.sum is every go.sum, gen/**
// everything under gen), * and ? never match a slash, [...] is a class,
// a leading / changes nothing, a trailing / matches a directory and all
// under it, and a pattern naming a directory covers all under it. A
// pattern starting with ! counts again what an earlier one left out; the
// last pattern that matches decides.
type excludeList []excludePattern

type excludePattern struct {
	parts  []string
	negate bool
	dir    bool // a trailing slash: only directories match
}

// parseExclude reads the patterns; a malformed one is an error naming it.
func parseExclude(patterns []string) (excludeList, error) {
	var out excludeList
	for _, raw := range patterns {
		p := excludePattern{}
		s := raw
		if strings.HasPrefix(s, "!") {
			p.negate, s = true, s[1:]
		}
		s = strings.TrimPrefix(s, "/")
		if strings.HasSuffix(s, "/") {
			p.dir, s = true, strings.TrimRight(s, "/")
		}
		if s == "" {
			return nil, fmt.Errorf("exclude pattern %q names no path", raw)
		}
		p.parts = strings.Split(s, "/")
		for _, el := range p.parts {
			if el == "" {
				return nil, fmt.Errorf("exclude pattern %q has an empty path element", raw)
			}
			if _, err := path.Match(el, ""); err != nil {
				return nil, fmt.Errorf("exclude pattern %q: %w", raw, err)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// excludes reports whether the file at the slash path p is left out.
func (l excludeList) excludes(p string) bool {
	parts := strings.Split(p, "/")
	out := false
	for _, pat := range l {
		if pat.matches(parts) {
			out = !pat.negate
		}
	}
	return out
}

// matches: the pattern matches the path or one of its directories.
func (pat excludePattern) matches(parts []string) bool {
	last := len(parts)
	if pat.dir {
		last-- // the file itself is no directory
	}
	for n := 1; n <= last; n++ {
		if matchParts(pat.parts, parts[:n]) {
			return true
		}
	}
	return false
}

// matchParts matches path elements against pattern elements, ** standing
// for any number of elements. ok[j] says whether the pattern so far
// matches the first j elements: linear in each, however many ** there are.
func matchParts(pat, parts []string) bool {
	ok := make([]bool, len(parts)+1)
	ok[0] = true
	for _, el := range pat {
		next := make([]bool, len(parts)+1)
		for j := range ok {
			switch {
			case el == "**":
				next[j] = ok[j] || (j > 0 && next[j-1])
			case j > 0 && ok[j-1]:
				next[j], _ = path.Match(el, parts[j-1])
			}
		}
		ok = next
	}
	return ok[len(parts)]
}
