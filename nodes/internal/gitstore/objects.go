package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
)

// objectStore reads and writes the promotion repository's objects at a
// cost that follows the change, not the history.
//
// Reads go through one long-lived `git cat-file --batch`, which finds an
// object by bisecting the mmapped pack indexes and follows alternates to
// any depth (a `--shared` or `--reference` clone borrows its objects from
// another repository). go-git's filesystem storage, which promotion used
// before, loads every pack index whole into memory on the first read and
// hashes its offsets on the first delta: on a 650k-object history a
// one-line change took a minute per step.
//
// Writes are loose objects written in Go: no process, no index.
type objectStore struct {
	gitDir string

	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// reads counts objects read, so tests can prove a step reads what
	// the change touches and nothing more.
	reads atomic.Int64
	trees map[plumbing.Hash]*object.Tree
}

// objectReads counts every object any store read, for tests.
var objectReads atomic.Int64

func newObjectStore(gitDir string) *objectStore {
	return &objectStore{gitDir: gitDir, trees: map[plumbing.Hash]*object.Tree{}}
}

// gitEnv is the environment of the harness's own git processes: no user
// or system configuration (no one's hooks, drivers or rewrites).
func gitEnv() []string {
	env := []string{"LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}
	if v, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+v)
	}
	return env
}

// start launches cat-file; the caller holds mu.
func (s *objectStore) start() error {
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command("git", "--git-dir="+s.gitDir, "cat-file", "--batch")
	cmd.Env = gitEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr feedback.Capped
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start git cat-file: %w", err)
	}
	s.cmd, s.in, s.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	return nil
}

// Close stops cat-file.
func (s *objectStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.in.Close()
	err := s.cmd.Wait()
	s.cmd = nil
	return err
}

// open asks for an object and returns its type, size and a reader of its
// content. The store stays locked until the reader is closed, which
// drains what was not read.
func (s *objectStore) open(h plumbing.Hash) (string, int64, io.ReadCloser, error) {
	s.mu.Lock()
	if err := s.start(); err != nil {
		s.mu.Unlock()
		return "", 0, nil, err
	}
	s.reads.Add(1)
	objectReads.Add(1)
	typ, size, err := s.request(h)
	if err != nil {
		s.kill()
		s.mu.Unlock()
		return "", 0, nil, err
	}
	return typ, size, &objectReader{s: s, r: io.LimitReader(s.out, size)}, nil
}

// request writes one request and reads the header; the caller holds mu.
func (s *objectStore) request(h plumbing.Hash) (string, int64, error) {
	if _, err := fmt.Fprintf(s.in, "%s\n", h); err != nil {
		return "", 0, fmt.Errorf("git cat-file: %w", err)
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		return "", 0, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" {
		return "", 0, fmt.Errorf("object %s: %w", h, plumbing.ErrObjectNotFound)
	}
	if len(f) != 3 || f[0] != h.String() {
		return "", 0, fmt.Errorf("git cat-file: unexpected header %q", line)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	return f[1], size, err
}

// kill drops a cat-file whose stream is out of step; the caller holds mu.
func (s *objectStore) kill() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

type objectReader struct {
	s    *objectStore
	r    io.Reader
	done bool
}

func (o *objectReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func (o *objectReader) Close() error {
	if o.done {
		return nil
	}
	o.done = true
	defer o.s.mu.Unlock()
	if _, err := io.Copy(io.Discard, o.r); err != nil {
		o.s.kill()
		return err
	}
	if b, err := o.s.out.ReadByte(); err != nil || b != '\n' {
		o.s.kill()
		return errors.New("git cat-file: missing object terminator")
	}
	return nil
}

// tree reads a tree object, once per hash.
func (s *objectStore) tree(h plumbing.Hash) (*object.Tree, error) {
	s.mu.Lock()
	t := s.trees[h]
	s.mu.Unlock()
	if t != nil {
		return t, nil
	}
	typ, _, r, err := s.open(h)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("object %s is a %s, not a tree", h, typ)
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	obj.Write(data)
	t = &object.Tree{}
	if err := t.Decode(obj); err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	s.mu.Lock()
	s.trees[h] = t
	s.mu.Unlock()
	return t, nil
}

// commitTree reads a commit's tree hash.
func (s *objectStore) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	typ, _, r, err := s.open(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer r.Close()
	line, err := bufio.NewReader(io.LimitReader(r, 64)).ReadString('\n')
	if typ != "commit" || err != nil || !strings.HasPrefix(line, "tree ") {
		return plumbing.ZeroHash, fmt.Errorf("object %s is not a commit (%s)", h, typ)
	}
	return plumbing.NewHash(strings.TrimSpace(line[5:])), nil
}

// entry finds path's entry in tree root, reading only the trees on the
// path; ok is false when there is none.
func (s *objectStore) entry(root plumbing.Hash, path string) (object.TreeEntry, bool, error) {
	parts := strings.Split(path, "/")
	h := root
	for i, name := range parts {
		t, err := s.tree(h)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		var found *object.TreeEntry
		for j := range t.Entries {
			if t.Entries[j].Name == name {
				found = &t.Entries[j]
				break
			}
		}
		if found == nil {
			return object.TreeEntry{}, false, nil
		}
		if i == len(parts)-1 {
			return *found, true, nil
		}
		if found.Mode != filemode.Dir {
			return object.TreeEntry{}, false, nil
		}
		h = found.Hash
	}
	return object.TreeEntry{}, false, nil
}

// blobOpener streams a blob's content.
func (s *objectStore) blobOpener(h plumbing.Hash) opener {
	return func() (io.ReadCloser, error) {
		typ, _, r, err := s.open(h)
		if err == nil && typ != "blob" {
			r.Close()
			err = fmt.Errorf("object %s is a %s, not a blob", h, typ)
		}
		return r, err
	}
}

// size reads an object's size.
func (s *objectStore) size(h plumbing.Hash) (int64, error) {
	_, n, r, err := s.open(h)
	if err != nil {
		return 0, err
	}
	r.Close()
	return n, nil
}

// write stores an encoded object (tree or commit) as a loose object.
func (s *objectStore) write(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	h := obj.Hash()
	r, _ := obj.Reader()
	return h, s.writeLoose(h, obj.Type(), obj.Size(), r)
}

// writeLoose writes content whose hash is already known as a loose object:
// compressed into a temporary file, then renamed into place, so a reader
// never sees half an object.
func (s *objectStore) writeLoose(h plumbing.Hash, typ plumbing.ObjectType, size int64, content io.Reader) error {
	hex := h.String()
	dst := filepath.Join(s.gitDir, "objects", hex[:2], hex[2:])
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "tmp_obj_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	zw := zlib.NewWriter(bw)
	hasher := plumbing.NewHasher(typ, size)
	fmt.Fprintf(zw, "%s %d\x00", typ, size)
	n, err := io.Copy(io.MultiWriter(zw, hasher), content)
	if err != nil {
		return err
	}
	if n != size || hasher.Sum() != h {
		return fmt.Errorf("object %s changed while it was written", h)
	}
	if err := errors.Join(zw.Close(), bw.Flush(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// gitText runs a read-only git command in the promotion repository.
func gitText(ctx context.Context, gitDir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Env = gitEnv()
	var out bytes.Buffer
	var stderr feedback.Capped
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}
