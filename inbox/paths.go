package inbox

import (
	"os"
	"strconv"

	"github.com/sandgate/sandgate/inbox/index"
)

func itoa(n int) string { return strconv.Itoa(n) }

// openDir opens dir/name as a root of its own. os.Root refuses names that
// leave dir, also through a symlink, so a run id can only ever name a
// directory inside its runs directory.
func openDir(dir, name string) (*os.Root, error) {
	if !index.ValidName(name) {
		return nil, index.ErrBadName
	}
	parent, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return parent.OpenRoot(name)
}

// readTail reads at most the last limit bytes of a regular file inside r,
// and how many bytes come before them.
func readTail(r *os.Root, name string, limit int64) ([]byte, int64, error) {
	f, st, err := index.OpenRegular(r, name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	from := max(st.Size()-limit, 0)
	b := make([]byte, st.Size()-from)
	n, err := f.ReadAt(b, from)
	if err != nil && n < len(b) {
		return nil, 0, err
	}
	return b[:n], from, nil
}
