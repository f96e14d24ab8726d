package wspath

import "strings"

// GitUnsafe says why git would refuse p, a path about to be promoted, or "".
// link says p is a symbolic link.
func GitUnsafe(p string, link bool) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return "not a relative path"
	}
	parts := strings.Split(p, "/")
	for i, comp := range parts {
		switch {
		case comp == "":
			return "empty path component"
		case comp == "." || comp == "..":
			return "a " + comp + " component"
		case strings.IndexByte(comp, 0) >= 0:
			return "NUL byte"
		case IsDotGit(comp):
			return "inside a .git directory (git refuses .git in any letter case or file-system spelling)"
		case link && i == len(parts)-1 && IsDotGitmodules(comp):
			return ".gitmodules must not be a symbolic link"
		}
	}
	return ""
}

// IsDotGit reports a name some file system git supports resolves to .git:
// any letter case, NTFS trailing dots and spaces, alternate data streams
// and the 8.3 short name GIT~1, HFS+ ignorable code points. NTFS also
// splits names on backslashes.
func IsDotGit(name string) bool {
	if hfsDotGeneric(name, "git") {
		return true
	}
	for _, part := range strings.Split(name, `\`) {
		if ntfsDotGit(part) {
			return true
		}
	}
	return false
}

// IsDotGitmodules is IsDotGit for .gitmodules (NTFS short name GI7EBA~N).
func IsDotGitmodules(name string) bool {
	if hfsDotGeneric(name, "gitmodules") {
		return true
	}
	for _, part := range strings.Split(name, `\`) {
		if ntfsDotGeneric(part, "gitmodules", "gi7eba") {
			return true
		}
	}
	return false
}

// ntfsDotGit follows git's is_ntfs_dotgit.
func ntfsDotGit(name string) bool {
	var rest string
	switch {
	case len(name) >= 4 && name[0] == '.' && strings.EqualFold(name[1:4], "git"):
		rest = name[4:]
	case len(name) >= 5 && strings.EqualFold(name[:3], "git") && name[3:5] == "~1":
		rest = name[5:]
	default:
		return false
	}
	return onlySpacesAndPeriods(rest)
}

// onlySpacesAndPeriods: NTFS drops trailing dots and spaces, and a colon
// starts an alternate data stream of the same file.
func onlySpacesAndPeriods(rest string) bool {
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ':':
			return true
		case ' ', '.':
		default:
			return false
		}
	}
	return true
}

// ntfsDotGeneric follows git's is_ntfs_dot_generic.
func ntfsDotGeneric(name, dotName, shortPrefix string) bool {
	n := len(dotName)
	if len(name) > n && name[0] == '.' && strings.EqualFold(name[1:1+n], dotName) {
		return onlySpacesAndPeriods(name[1+n:])
	}
	if len(name) >= 8 && strings.EqualFold(name[:6], dotName[:6]) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' {
		return onlySpacesAndPeriods(name[8:])
	}
	sawTilde := false
	i := 0
	for ; i < 8; i++ {
		if i >= len(name) {
			return false
		}
		c := name[i]
		switch {
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if i >= len(name) || name[i] < '1' || name[i] > '9' {
				return false
			}
			sawTilde = true
		case i >= 6 || c&0x80 != 0:
			return false
		case lowerASCII(c) != shortPrefix[i]:
			return false
		}
	}
	return onlySpacesAndPeriods(name[min(i, len(name)):])
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hfsDotGeneric follows git's is_hfs_dot_generic: HFS+ ignores some code
// points entirely and folds case, so ".g\u200bit" is ".git".
func hfsDotGeneric(name, needle string) bool {
	var rs []rune
	for _, r := range name {
		if !hfsIgnorable(r) {
			rs = append(rs, r)
		}
	}
	if len(rs) != len(needle)+1 || rs[0] != '.' {
		return false
	}
	for i, r := range rs[1:] {
		if r > 127 || lowerASCII(byte(r)) != needle[i] {
			return false
		}
	}
	return true
}

func hfsIgnorable(r rune) bool {
	return (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff
}
