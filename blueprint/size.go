package blueprint

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// sizeUnits are the units a byte size may carry, largest first so that
// "MiB" is not read as "B".
var sizeUnits = []struct {
	name  string
	bytes int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// Bounds of sandbox.disk: below 16 MiB a filesystem has no room left for
// files; 16 TiB is far past any sensible box.
const (
	minDisk = 16 << 20
	maxDisk = 16 << 40
)

// ParseSize reads a byte size such as 512MiB or 4GiB.
func ParseSize(s string) (int64, error) {
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(s, u.name)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 || num[0] == '+' {
			break
		}
		if n > maxDisk/u.bytes {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return n * u.bytes, nil
	}
	hint := ""
	// 4GB or 4G: the binary unit is almost certainly what was meant.
	if num := strings.TrimSuffix(strings.TrimSuffix(s, "B"), "b"); len(num) > 1 {
		if u := strings.ToUpper(num[len(num)-1:]); strings.Contains("KMGT", u) {
			if _, err := strconv.ParseUint(num[:len(num)-1], 10, 64); err == nil {
				hint = fmt.Sprintf(" (did you mean %s%siB?)", num[:len(num)-1], u)
			}
		}
	}
	return 0, fmt.Errorf("expected a size like 512MiB or 4GiB (units B, KiB, MiB, GiB, TiB), got %q%s", s, hint)
}

// size decodes a byte size within the bounds of sandbox.disk.
func (d *decoder) size(n *yaml.Node, path string) (int64, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return 0, false
	}
	v, err := ParseSize(s)
	if err == nil && (v < minDisk || v > maxDisk) {
		err = fmt.Errorf("%s is outside 16MiB..16TiB", s)
	}
	if err != nil {
		d.r.errorf(posOf(n), path, "%v", err)
		return 0, false
	}
	return v, true
}
