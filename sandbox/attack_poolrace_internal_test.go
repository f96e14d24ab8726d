//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// PretendNotRoot makes this root harness take the path of one that is
// not (a user namespace per command) until t ends.
func PretendNotRoot(t *testing.T) {
	pretendNotRoot.Store(true)
	t.Cleanup(func() { pretendNotRoot.Store(false) })
}

// TestAttackPoolRaceSharesNothing: the next box's spare init and disk
// are begun when the box that took the last one is built, or at once by
// a take in between, or cancelled by ReleaseSpares in between. Boxes
// started at once from several goroutines, while another keeps calling
// ReleaseSpares, each get an init and a disk of their own: no two live
// boxes share an init, and none sees a file another wrote in its home
// or /tmp. Once every box is closed and the spares released, no init
// the pool made is left: none is alive, and no pooled disk image of
// this harness is left in the template directory.
func TestAttackPoolRaceSharesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("spare inits need the harness's cgroups (root)")
	}
	ReleaseSpares()
	var (
		mu     sync.Mutex
		live   = map[int]int{} // init pid → box
		pooled int
		wg     sync.WaitGroup
	)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(7 * time.Millisecond):
				ReleaseSpares()
			}
		}
	}()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < 3; r++ {
				raceBox(t, g*10+r, &mu, live, &pooled)
			}
		}(g)
	}
	wg.Wait()
	close(stop)
	ReleaseSpares()
	t.Logf("%d of 12 boxes came from the pool", pooled)
	if left := ourInits(); len(left) > 0 {
		t.Errorf("BREACH: inits left alive after every box was closed and the spares released: %v", left)
	}
	imgs, _ := filepath.Glob(filepath.Join(imageTemplateDir(), fmt.Sprintf("pool-%d-*.img", os.Getpid())))
	if len(imgs) > 0 {
		t.Errorf("pooled disks left after the spares were released: %v", imgs)
	}
}

// raceBox starts box n, checks it shares nothing with the boxes live at
// the same time, and closes it.
func raceBox(t *testing.T, n int, mu *sync.Mutex, live map[int]int, pooled *int) {
	b, err := Start(context.Background(), Options{Workspace: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Error(err)
		return
	}
	defer b.Close()
	pid := b.cmd.Process.Pid
	mu.Lock()
	if other, ok := live[pid]; ok {
		t.Errorf("BREACH: boxes %d and %d share init %d", other, n, pid)
	}
	live[pid] = n
	if b.pooled {
		*pooled++
	}
	mu.Unlock()
	defer func() { mu.Lock(); delete(live, pid); mu.Unlock() }()
	script := fmt.Sprintf(`echo %[1]d > $HOME/mark-%[1]d && echo %[1]d > /tmp/mark-%[1]d || exit 1
sleep 0.2
ls $HOME /tmp | grep mark- | grep -v '^mark-%[1]d$' | sed 's/^/BREACH: /'
true`, n)
	res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Errorf("box %d: %v %+v", n, err, res)
		return
	}
	if strings.Contains(string(res.Output), "BREACH") {
		t.Errorf("box %d sees another box's files:\n%s", n, res.Output)
	}
}

// ourInits lists the live processes this harness started as a box's
// init.
func ourInits() []int {
	var pids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		st, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) || fields[0] == "Z" {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "environ"))
		if strings.Contains(string(env), roleEnv+"=init") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}
