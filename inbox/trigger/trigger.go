package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Request is a run a trigger asks for, checked.
type Request struct {
	Blueprint string
	// Repo is the local repository the run works on; empty: the
	// server's.
	Repo   string
	Inputs map[string]string
	// Labels say where the run came from (trigger, by, source).
	Labels map[string]string
	// By is who asked, as the inbox records a starter.
	By string
}

// Starter starts a run and returns its directory once it has started.
type Starter interface {
	StartTriggered(ctx context.Context, req Request) (string, error)
}

// GitHub sends one request to the GitHub REST API (the project's client,
// its token and allowed endpoints the CLI's).
type GitHub interface {
	Send(ctx context.Context, method, path string, payload any) (int, []byte, error)
}

// Options configure a Handler.
type Options struct {
	Config  *Config
	Starter Starter
	// GitHub posts replies on issues; nil posts none.
	GitHub GitHub
	// Blueprints are those that can be started (NAME.yaml), parsed with
	// Types to check a trigger's inputs before anything starts.
	Blueprints fs.FS
	Types      blueprint.TypeSet
	// GitHubSecret and SlackSecret are the secrets the config's
	// variables held.
	GitHubSecret, SlackSecret []byte
	// Poll is how often a started run's journal is read for its end
	// (default 2s).
	Poll time.Duration
	// Client posts to Slack's response_url (default: 10s timeout).
	Client *http.Client
	// Logf reports what went wrong with a reply (default log.Printf).
	Logf func(format string, a ...any)
}

// Handler serves /hooks/github and /hooks/slack.
type Handler struct {
	opts Options
	seen *seenStore
	ctx  context.Context
	stop context.CancelFunc
	// wg holds the started runs' goroutines, out the refusals being
	// posted.
	wg, out sync.WaitGroup

	mu    sync.Mutex
	alive int
	// busyTold are the places told "busy" since a run last ended: a storm
	// of refusals is answered once per place.
	busyTold map[string]bool
	// strangersTold are the (repository, issue, login) told they may not
	// start runs: anyone can comment on a public issue, and is answered
	// once, not once a comment (bounded: forgotten all at once when full).
	strangersTold map[string]bool
}

// maxInput bounds one input value: an argument of a child process is at
// most 128 KiB on Linux, and an issue body is at most 65536 characters.
const maxInput = 96 << 10

// New builds the handler; the config's StateDir must be set.
func New(opts Options) (*Handler, error) {
	if opts.Config == nil || opts.Starter == nil || opts.Blueprints == nil {
		return nil, errors.New("trigger: config, starter and blueprints are required")
	}
	if opts.Config.GitHub != nil && len(opts.GitHubSecret) == 0 {
		return nil, fmt.Errorf("trigger: github.secret_env %s is not set", opts.Config.GitHub.SecretEnv)
	}
	if opts.Config.Slack != nil && len(opts.SlackSecret) == 0 {
		return nil, fmt.Errorf("trigger: slack.signing_secret_env %s is not set", opts.Config.Slack.SigningSecretEnv)
	}
	seen, err := openSeen(filepath.Join(opts.Config.StateDir, "deliveries"), 10000)
	if err != nil {
		return nil, err
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	h := &Handler{opts: opts, seen: seen, busyTold: map[string]bool{}, strangersTold: map[string]bool{}}
	h.ctx, h.stop = context.WithCancel(context.Background())
	return h, nil
}

func (h *Handler) logf(format string, a ...any) {
	if h.opts.Logf != nil {
		h.opts.Logf(format, a...)
		return
	}
	log.Printf("sandgate serve: triggers: "+format, a...)
}

// Routes are the handler's endpoints by exact path: only the configured
// ones.
func (h *Handler) Routes() map[string]http.Handler {
	out := map[string]http.Handler{}
	if h.opts.Config.GitHub != nil {
		out["/hooks/github"] = http.HandlerFunc(h.github)
	}
	if h.opts.Config.Slack != nil {
		out["/hooks/slack"] = http.HandlerFunc(h.slack)
	}
	return out
}

// Close stops watching runs and waits for replies in flight.
func (h *Handler) Close() {
	h.stop()
	h.wg.Wait()
	h.out.Wait()
	h.seen.close()
}

// Wait waits for the started runs' replies and watches to end (tests).
func (h *Handler) Wait() { h.wg.Wait(); h.out.Wait() }

// check refuses a blueprint that cannot be started or inputs it does not
// take, with the reason.
func (h *Handler) check(name string, inputs map[string]string) error {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return fmt.Errorf("%q is not a blueprint name", name)
	}
	src, err := fs.ReadFile(h.opts.Blueprints, name+".yaml")
	if err != nil {
		return fmt.Errorf("no blueprint %q to start", name)
	}
	bp, err := blueprint.Parse(name+".yaml", src, blueprint.WithTypes(h.opts.Types))
	if err != nil {
		return fmt.Errorf("blueprint %s does not load: %w", name, err)
	}
	asAny := map[string]any{}
	for k, v := range inputs {
		if _, ok := bp.Inputs[k]; !ok {
			return fmt.Errorf("blueprint %s has no input %q (it takes: %s)", name, k, strings.Join(bp.InputOrder, ", "))
		}
		if len(v) > maxInput || strings.ContainsRune(v, 0) {
			return fmt.Errorf("input %s: at most %d bytes and no NUL byte", k, maxInput)
		}
		asAny[k] = v
	}
	_, err = runtime.CheckInputs(bp, asAny)
	return err
}

// takes reports whether blueprint name has an input called in.
func (h *Handler) takes(name, in string) bool {
	src, err := fs.ReadFile(h.opts.Blueprints, name+".yaml")
	if err != nil {
		return false
	}
	bp, err := blueprint.Parse(name+".yaml", src, blueprint.WithTypes(h.opts.Types))
	return err == nil && slices.Contains(bp.InputOrder, in)
}

// reserve takes a slot for a run, or says why not. place names where a
// refusal would be answered: a place told once stays quiet until a run
// ends.
func (h *Handler) reserve(place string) (ok, tell bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.alive < h.opts.Config.MaxRuns {
		h.alive++
		return true, false
	}
	tell = !h.busyTold[place]
	h.busyTold[place] = true
	return false, tell
}

// firstRefusal reports whether login has not yet been told on issue n of
// repo that they may not start runs, and remembers it.
func (h *Handler) firstRefusal(repo string, n int, login string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := strings.ToLower(fmt.Sprintf("%s#%d@%s", repo, n, login))
	if h.strangersTold[key] {
		return false
	}
	if len(h.strangersTold) >= 10000 {
		clear(h.strangersTold)
	}
	h.strangersTold[key] = true
	return true
}

func (h *Handler) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.alive--
	clear(h.busyTold)
}

func (h *Handler) busyReason() string {
	return fmt.Sprintf("%d runs started from triggers are under way already, the most the trigger file allows (max_runs); try again when one ends", h.opts.Config.MaxRuns)
}

// launch starts req in the background on a reserved slot: say gets the
// run's link once it has started and its outcome when it ends; the slot
// is freed then.
func (h *Handler) launch(req Request, say func(context.Context, string)) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer h.release()
		ctx, cancel := context.WithTimeout(h.ctx, 2*time.Minute)
		dir, err := h.opts.Starter.StartTriggered(ctx, req)
		cancel()
		if err != nil {
			// The error carries the child's log tail and local paths:
			// the server's log gets it, not a public issue or channel.
			h.logf("start %s for %s: %v", req.Blueprint, req.By, err)
			say(h.ctx, fmt.Sprintf("sandgate could not start %s; the server's log says why", req.Blueprint))
			return
		}
		link := h.runLink(dir)
		say(h.ctx, fmt.Sprintf("sandgate started %s: %s", req.Blueprint, link))
		st, ok := h.watch(dir)
		if !ok {
			return // the server is stopping
		}
		say(h.ctx, outcome(req.Blueprint, st, link, h.opts.Config.PublicURL))
	}()
}

func (h *Handler) runLink(dir string) string {
	return h.opts.Config.PublicURL + "/run/0/" + filepath.Base(dir)
}

// watch reads the run's journal until it ends (or its harness is gone).
func (h *Handler) watch(dir string) (runtime.Status, bool) {
	tick := time.NewTicker(cmp.Or(h.opts.Poll, 2*time.Second))
	defer tick.Stop()
	for {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			// A run that could not start removes its directory.
			return runtime.StatusFailed, true
		}
		if sum, err := runtime.Summarize(dir); err == nil {
			if sum.Status != runtime.StatusRunning {
				return sum.Status, true
			}
			if alive, _ := runtime.Alive(dir); !alive && sum.Status == runtime.StatusRunning {
				// A second read: the run may have ended between the two.
				if sum, err := runtime.Summarize(dir); err == nil && sum.Status != runtime.StatusRunning {
					return sum.Status, true
				}
				return runtime.StatusInterrupted, true
			}
		}
		select {
		case <-h.ctx.Done():
			return "", false
		case <-tick.C:
		}
	}
}

// outcome is the reply when a run ends.
func outcome(name string, st runtime.Status, link, public string) string {
	switch st {
	case runtime.StatusSucceeded:
		return fmt.Sprintf("sandgate: %s succeeded: %s (changes it queued for review: %s/reviews)", name, link, public)
	case runtime.StatusHandedOff:
		return fmt.Sprintf("sandgate: %s handed off to a person: answer it at %s", name, link)
	}
	return fmt.Sprintf("sandgate: %s %s: %s", name, strings.ReplaceAll(string(st), "_", " "), link)
}

// oneLine keeps an error on one line, bounded.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// readBody reads at most limit bytes of a hook's POST body, within 30
// seconds (the server's own timeouts cover only the headers), or answers
// the request itself.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return nil, false
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(30 * time.Second))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		http.Error(w, "body too large or cut off", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return body, true
}
