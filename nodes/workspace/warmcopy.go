package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// What the warm step copies: Go build cache entries only, checked. The
// layer it copies from was written by the toolchain alone, but the copy
// does not take that on trust: the warm cache sits beneath every judge
// box, so a stray file there would be evidence a gate sees.
//
// Go's cache (cmd/go/internal/cache) holds, in directories 00 to ff:
//   - outputs, <id>-d, whose id is the SHA-256 of their content: checked
//     by hashing;
//   - index entries, <action id>-a, one line "v1 <action> <output> <size>
//     <time>" naming an output: checked for form, for the action id that
//     names the file, and for the output it names being present (copied
//     now, or in a cache beneath) at that size.
//
// Anything else (trim.txt, README, fuzz corpora, symlinks, devices,
// whiteouts) is left behind.

const (
	hexIDLen   = 2 * sha256.Size
	entryLen   = 2 + 1 + hexIDLen + 1 + hexIDLen + 1 + 20 + 1 + 20 + 1
	maxEntryGB = 1 << 30 // an output larger than this is not copied
)

// harvest copies the cache entries in up (a warm box's cache layer) into
// dst, outputs first; lowers are where an index entry's output may be
// instead (dst and the caches beneath it). It returns how many entries it
// copied and their bytes.
func harvest(up, dst string, lowers []string) (n int, total int64, err error) {
	outputs, indexes, err := entries(up)
	if err != nil {
		return 0, 0, err
	}
	sizes := map[string]int64{}
	for _, rel := range outputs {
		size, ok, err := copyOutput(up, dst, rel)
		if err != nil {
			return n, total, err
		}
		if ok {
			sizes[filepath.Base(rel)], n, total = size, n+1, total+size
		}
	}
	for _, rel := range indexes {
		line, ok := readIndex(filepath.Join(up, rel), filepath.Base(rel))
		if !ok || !outputPresent(line, sizes, lowers) {
			continue
		}
		if err := place(filepath.Join(dst, rel), []byte(line.raw)); err != nil {
			return n, total, err
		}
		n, total = n+1, total+int64(len(line.raw))
	}
	return n, total, nil
}

// entries lists up's files that are named like cache outputs and index
// entries, in their right directory, as paths relative to up.
func entries(up string) (outputs, indexes []string, err error) {
	dirs, err := os.ReadDir(up)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 || !isHex(d.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(up, d.Name()))
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			name := f.Name()
			if !f.Type().IsRegular() || len(name) != hexIDLen+2 || !isHex(name[:hexIDLen]) || name[:2] != d.Name() {
				continue
			}
			switch name[hexIDLen:] {
			case "-d":
				outputs = append(outputs, filepath.Join(d.Name(), name))
			case "-a":
				indexes = append(indexes, filepath.Join(d.Name(), name))
			}
		}
	}
	return outputs, indexes, nil
}

// copyOutput copies one output whose content hashes to its name; ok is
// false for one that does not (it is left behind).
func copyOutput(up, dst, rel string) (size int64, ok bool, err error) {
	f, err := openBoxFile(filepath.Join(up, rel))
	if err != nil {
		return 0, false, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxEntryGB {
		return 0, false, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(filepath.Join(dst, rel)), ".warm-*")
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err == nil {
			tmp, err = os.CreateTemp(filepath.Dir(filepath.Join(dst, rel)), ".warm-*")
		}
	}
	if err != nil {
		return 0, false, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(tmp, h), io.LimitReader(f, maxEntryGB+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, false, fmt.Errorf("copy %s into the warm cache: %w", rel, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != filepath.Base(rel)[:hexIDLen] {
		return 0, false, nil
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return 0, false, err
	}
	return size, true, os.Rename(tmp.Name(), filepath.Join(dst, rel))
}

// indexLine is a parsed index entry.
type indexLine struct {
	output string
	size   int64
	raw    string
}

// readIndex reads an index entry and checks its form and that it is the
// entry of the action its file is named after.
func readIndex(path, name string) (indexLine, bool) {
	f, err := openBoxFile(path)
	if err != nil {
		return indexLine{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, entryLen+1))
	if err != nil || len(b) != entryLen || b[len(b)-1] != '\n' {
		return indexLine{}, false
	}
	fields := strings.Split(string(b[:len(b)-1]), " ")
	if len(fields) < 5 || fields[0] != "v1" || fields[1] != name[:hexIDLen] || !isHex(fields[2]) || len(fields[2]) != hexIDLen {
		return indexLine{}, false
	}
	nums := strings.Fields(strings.Join(fields[3:], " "))
	if len(nums) != 2 {
		return indexLine{}, false
	}
	size, err1 := strconv.ParseInt(nums[0], 10, 64)
	_, err2 := strconv.ParseInt(nums[1], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return indexLine{}, false
	}
	return indexLine{output: fields[2], size: size, raw: string(b)}, true
}

// outputPresent reports whether the output an index entry names is
// copied now or in one of lowers, at the entry's size.
func outputPresent(l indexLine, copied map[string]int64, lowers []string) bool {
	name := l.output + "-d"
	if size, ok := copied[name]; ok {
		return size == l.size
	}
	for _, dir := range lowers {
		if st, err := os.Lstat(filepath.Join(dir, name[:2], name)); err == nil && st.Mode().IsRegular() {
			return st.Size() == l.size
		}
	}
	return false
}

// place writes b as the file path, read-only, replacing it atomically.
func place(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warm-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, bytes.NewReader(b))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444)
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// isHex reports whether s is lower-case hexadecimal.
func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}
