package nodetest

import (
	"os"

	"golang.org/x/sys/unix"
)

// nextData returns the first extent of f's data at or after off, [data,
// hole), so FileHolds skips a sparse file's holes.
func nextData(f *os.File, off, _ int64) (data, hole int64, err error) {
	data, err = unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
	if err != nil {
		return 0, 0, err
	}
	hole, err = unix.Seek(int(f.Fd()), data, unix.SEEK_HOLE)
	return data, hole, err
}
