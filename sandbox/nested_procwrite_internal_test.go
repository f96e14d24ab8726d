//go:build linux

package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestNestedUserProcWrites: in nested-user mode /proc is Landlock-writable
// (the forking thread writes uid_map there). A command must still not be
// able to see init or another command, nor turn that write access on them:
// raise their OOM score (so the kernel kills init or a gate's test first),
// renice their autogroup, or clear their page bits.
func TestNestedUserProcWrites(t *testing.T) {
	b := nestedBox(t)
	victim := make(chan *Result, 1)
	go func() {
		res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", "touch /work/victim-up; sleep 3.777; echo survived"}, Timeout: time.Minute})
		if err != nil {
			t.Errorf("victim: %v", err)
		}
		victim <- res
	}()
	for i := 0; i < 500; i++ {
		if res, _ := b.Exec(context.Background(), Command{Args: []string{"test", "-e", "/work/victim-up"}, Timeout: 10 * time.Second}); res != nil && res.ExitCode == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	script := `me=$(readlink /proc/self/ns/pid)
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  grep -q "^PPid:" $d/status 2>/dev/null || continue
  [ "$(readlink $d/ns/pid 2>/dev/null)" = "$me" ] && continue
  echo "BREACH-seen $p $(tr '\0' ' ' <$d/cmdline 2>/dev/null)"
  echo 1000 >$d/oom_score_adj && [ "$(cat $d/oom_score_adj)" = 1000 ] && echo "BREACH-oom $p"
  echo 19 >$d/autogroup && echo "BREACH-autogroup $p"
  echo 1 >$d/clear_refs && echo "BREACH-clear_refs $p"
done
for f in $(find /proc/sys /proc/sysrq-trigger -writable 2>/dev/null | head -5); do echo "BREACH-writable $f"; done
ls /proc/sys/kernel >/dev/null || echo "no /proc/sys/kernel"
echo done`
	res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "BREACH") {
			t.Error(l)
		}
	}
	if !strings.Contains(out, "done") {
		t.Fatalf("the attack did not run:\n%s", out)
	}
	if res := <-victim; res == nil || !strings.Contains(string(res.Output), "survived") {
		t.Errorf("victim: %+v", res)
	}
}
