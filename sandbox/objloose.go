package sandbox

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxLooseWalk bounds the loose commits one import reads.
const maxLooseWalk = 100_000

// looseCommits walks back from commit through the commits the object
// directory objects holds loose (not yet packed: the newest ones) and
// returns them (want) and their parents it does not hold loose (have:
// packed, where the walk stops). It reads only loose commit headers, so
// it costs the commits made since the last repack, not the history: the
// first import needs exactly these on top of the packs it copied.
func looseCommits(objects, commit string) (want, have []string, err error) {
	seen := map[string]bool{commit: true}
	queue := []string{commit}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		parents, loose, err := readLooseCommit(objects, c)
		if err != nil {
			return nil, nil, err
		}
		if !loose {
			if c != commit {
				have = append(have, c)
			}
			continue
		}
		if want = append(want, c); len(want) > maxLooseWalk {
			return nil, nil, fmt.Errorf("%s holds more than %d loose commits: run git gc there", objects, maxLooseWalk)
		}
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return want, have, nil
}

// readLooseCommit reads the parents of commit c from its loose object
// file, if objects holds one (never through a symlink).
func readLooseCommit(objects, c string) (parents []string, loose bool, err error) {
	f, err := openNoFollow(filepath.Join(objects, c[:2], c[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, nil // unreadable (a symlink, say): left to git, as if packed
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return nil, false, fmt.Errorf("loose object %s: %w", c, err)
	}
	defer z.Close()
	r := bufio.NewReader(io.LimitReader(z, 1<<20))
	head, err := r.ReadString(0)
	if err != nil {
		return nil, false, fmt.Errorf("loose object %s: %w", c, err)
	}
	if !strings.HasPrefix(head, "commit ") {
		return nil, false, fmt.Errorf("loose object %s is not a commit", c)
	}
	for {
		line, err := r.ReadBytes('\n')
		if p, ok := bytes.CutPrefix(line, []byte("parent ")); ok {
			id := string(bytes.TrimSpace(p))
			if !commitName.MatchString(id) {
				return nil, false, fmt.Errorf("loose commit %s names a parent %q", c, id)
			}
			parents = append(parents, id)
		} else if !bytes.HasPrefix(line, []byte("tree ")) || err != nil {
			return parents, true, nil
		}
	}
}
