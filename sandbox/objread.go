package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// objReader reads objects from one of the harness's repositories through
// a long-lived `git cat-file --batch`, and checks each against its name:
// the content must hash to the id it was asked for. A repository can
// hold objects whose content does not match their name (a pack index
// that lies), and snapshots are shared by commit across repositories, so
// what a snapshot checks out is verified, never taken on trust.
type objReader struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	newHash func() hash.Hash
}

// errMissing is an object the repository does not have.
type errMissing struct{ id string }

func (e errMissing) Error() string { return "object " + e.id + " is missing" }

func newObjReader(ctx context.Context, gitDir, format string) (*objReader, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+gitDir, "cat-file", "--batch")
	cmd.Env = ownGitEnv("")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start git cat-file: %w", err)
	}
	r := &objReader{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), newHash: sha1.New}
	if format == "sha256" {
		r.newHash = sha256.New
	}
	return r, nil
}

func (r *objReader) Close() error {
	r.in.Close()
	_, _ = io.Copy(io.Discard, r.out)
	_ = r.cmd.Wait() // killed after a broken reply, which was reported
	return nil
}

// errCorrupt is an object whose content does not hash to its name.
type errCorrupt struct{ id, got string }

func (e errCorrupt) Error() string {
	return fmt.Sprintf("object %s is corrupt: its content hashes to %s", e.id, e.got)
}

// object is one reply of cat-file.
type object struct {
	typ  string
	size int64
	data []byte // the content, when asked to keep it
	err  error  // errMissing or errCorrupt; the stream is still in step
}

// getMany reads the objects ids in order, verifying each, and calls each
// with every reply. Requests are written while replies are read, so a
// whole tree level costs one round trip. An error that leaves cat-file's
// stream out of step kills it and is returned.
func (r *objReader) getMany(ids []string, keep bool, each func(i int, o object) error) error {
	errc := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(r.in, 64<<10)
		for _, id := range ids {
			w.WriteString(id + "\n")
		}
		errc <- w.Flush()
	}()
	var first error
	for i, id := range ids {
		o, err := r.reply(id, keep)
		if err != nil {
			_ = r.cmd.Process.Kill()
			<-errc
			return err
		}
		if first == nil {
			first = each(i, o)
		}
	}
	if err := <-errc; err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	return first
}

// reply reads one reply to a request for id.
func (r *objReader) reply(id string, keep bool) (object, error) {
	line, err := r.out.ReadString('\n')
	if err != nil {
		return object{}, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" {
		return object{err: errMissing{id}}, nil
	}
	if len(f) != 3 || f[0] != id {
		return object{}, fmt.Errorf("git cat-file: unexpected reply %q to %s", line, id)
	}
	o := object{typ: f[1]}
	if o.size, err = strconv.ParseInt(f[2], 10, 64); err != nil || o.size < 0 {
		return object{}, fmt.Errorf("git cat-file: bad size in %q", line)
	}
	h := r.newHash()
	fmt.Fprintf(h, "%s %d\x00", o.typ, o.size)
	var dst io.Writer = h
	var buf bytes.Buffer
	if keep {
		dst = io.MultiWriter(h, &buf)
	}
	if _, err := io.CopyN(dst, r.out, o.size); err != nil {
		return object{}, fmt.Errorf("git cat-file: %s: %w", id, err)
	}
	if b, err := r.out.ReadByte(); err != nil || b != '\n' {
		return object{}, errors.New("git cat-file: missing object terminator")
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != id {
		o.err = errCorrupt{id, got}
	}
	o.data = buf.Bytes()
	return o, nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode string // 100644, 100755, 120000, 40000, 160000
	id   string
}

func (e treeEntry) isTree() bool { return e.mode == "40000" }

// isFile: a blob checked out as a file or a symlink.
func (e treeEntry) isFile() bool { return e.mode != "40000" && e.mode != "160000" }

// parseTree reads a tree object's entries. A name git would never check
// out (empty, ".", "..", ".git" in any case, or holding a slash) makes
// the tree corrupt: such names could point the snapshot's own writes
// outside its directory.
func parseTree(id string, data []byte, idLen int) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data[:min(len(data), 8)], ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul < sp || len(data) < nul+1+idLen {
			return nil, fmt.Errorf("tree %s is corrupt", id)
		}
		mode, name := string(data[:sp]), string(data[sp+1:nul])
		switch mode {
		case "100644", "100755", "120000", "40000", "160000":
		default:
			return nil, fmt.Errorf("tree %s: entry %q has mode %s, which git does not check out", id, name, mode)
		}
		if name == "" || name == "." || name == ".." || strings.EqualFold(name, ".git") || strings.ContainsRune(name, '/') {
			return nil, fmt.Errorf("tree %s: entry %q is a name git refuses to check out", id, name)
		}
		out[name] = treeEntry{mode: mode, id: hex.EncodeToString(data[nul+1 : nul+1+idLen])}
		data = data[nul+1+idLen:]
	}
	return out, nil
}
