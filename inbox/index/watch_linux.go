//go:build linux

package index

import (
	"bytes"
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// watcher tells the index which runs changed since it last asked, from
// inotify: each runs directory (runs made, removed, renamed) and the
// directory of each run that may still change (its files written). The
// index reads only those; without a watcher it stats every run.
type watcher struct {
	fd   int
	wds  map[int32]string // a watch's key: "ROOT/NAME" for a run, "ROOT/" for a runs directory
	keys map[string]int32
	buf  []byte
}

const (
	dirMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	runMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
		unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW
	eventHeader = 16 // struct inotify_event without its name
)

func newWatcher() (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &watcher{fd: fd, wds: map[int32]string{}, keys: map[string]int32{}, buf: make([]byte, 64<<10)}, nil
}

// watchDir watches a runs directory for runs made and removed.
func (w *watcher) watchDir(root int, path string) error { return w.add(itoa(root)+"/", path, dirMask) }

// watchRun watches a run's directory; watching it again is a no-op.
func (w *watcher) watchRun(key, path string) error {
	if w == nil {
		return nil
	}
	if _, ok := w.keys[key]; ok {
		return nil
	}
	return w.add(key, path, runMask)
}

func (w *watcher) add(key, path string, mask uint32) error {
	wd, err := unix.InotifyAddWatch(w.fd, path, mask)
	if err != nil {
		return err
	}
	w.wds[int32(wd)], w.keys[key] = key, int32(wd)
	return nil
}

// unwatchRun stops watching a run that can no longer change.
func (w *watcher) unwatchRun(key string) {
	if w == nil {
		return
	}
	if wd, ok := w.keys[key]; ok {
		_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
		delete(w.keys, key)
		delete(w.wds, wd)
	}
}

// changes reads every pending event and returns the keys of the runs
// they name. lost is true when events were lost (the kernel's queue
// overflowed) or a runs directory itself went: only a full scan is sure.
func (w *watcher) changes() (dirty map[string]bool, lost bool) {
	dirty = map[string]bool{}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EAGAIN) || n <= 0 {
			return dirty, false
		}
		for b := w.buf[:n]; len(b) >= eventHeader; {
			wd := int32(binary.NativeEndian.Uint32(b[0:]))
			mask := binary.NativeEndian.Uint32(b[4:])
			size := eventHeader + int(binary.NativeEndian.Uint32(b[12:]))
			name := string(bytes.TrimRight(b[eventHeader:min(size, len(b))], "\x00"))
			b = b[min(size, len(b)):]
			if mask&unix.IN_Q_OVERFLOW != 0 {
				return nil, true
			}
			key, ok := w.wds[wd]
			switch {
			case !ok:
			case key[len(key)-1] == '/': // a runs directory
				if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
					return nil, true
				}
				if name != "" {
					dirty[key+name] = true
				}
			default:
				dirty[key] = true
				if mask&unix.IN_IGNORED != 0 { // the run's directory is gone
					delete(w.wds, wd)
					delete(w.keys, key)
				}
			}
		}
	}
}

func (w *watcher) close() { _ = unix.Close(w.fd) }
