package testgate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/sandbox"
)

// maxReportBytes caps a report file read by the harness.
const maxReportBytes = 64 << 20

// readReport reads the report file at path (under /tmp in the box) once
// the test command has ended. A gate may not write in the workspace it
// judges, so reports live in the box's scratch space, which only the box
// sees; they are read with the system's own stat and cat, run by init
// while the gate holds the box alone and no process of the test command is
// left (its PID namespace died with it), so nothing can swap the file
// between the two. It must be a regular file written at or after since.
func readReport(ctx context.Context, w *workspace.Workspace, path string, since time.Time) ([]byte, error) {
	st, err := w.Command(ctx, sandbox.Command{Args: []string{"stat", "-c", "%F|%Y|%s", "--", path}, Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	if st.ExitCode != 0 {
		return nil, fmt.Errorf("report %s: the test command did not write it", path)
	}
	f := strings.Split(strings.TrimSpace(string(st.Output)), "|")
	if len(f) != 3 || !strings.HasPrefix(f[0], "regular") {
		return nil, fmt.Errorf("report %s is not a regular file (%s)", path, f[0])
	}
	mtime, err1 := strconv.ParseInt(f[1], 10, 64)
	size, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("report %s: unreadable stat output %q", path, st.Output)
	}
	// File times come from the kernel's coarse clock; allow it a second.
	if written := time.Unix(mtime, 0); written.Before(since.Add(-time.Second).Truncate(time.Second)) {
		return nil, fmt.Errorf("report %s was last written at %s, before this test run started (%s): it is not this run's",
			path, written.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	if size > maxReportBytes {
		return nil, fmt.Errorf("report %s is larger than %d MiB", path, maxReportBytes>>20)
	}
	cat, err := w.Command(ctx, sandbox.Command{Args: []string{"cat", "--", path}, Timeout: time.Minute, OutputBytes: maxReportBytes + 1})
	if err != nil {
		return nil, err
	}
	if cat.ExitCode != 0 || cat.Dropped > 0 || int64(len(cat.Output)) != size {
		return nil, fmt.Errorf("report %s changed while it was read", path)
	}
	return cat.Output, nil
}
