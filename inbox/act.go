package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// Launcher starts runs; Actions may implement it. Like Actions it is
// injected, since a run needs the CLI's sandbox set-up.
type Launcher interface {
	// Rerun starts a new run like the one in runDir (its saved
	// blueprint, its inputs, its repository) in the same runs
	// directory, and returns the new run's directory.
	Rerun(ctx context.Context, runDir, by string) (string, error)
	// Resume continues an interrupted run from its journal: nodes that
	// finished are not run again.
	Resume(ctx context.Context, runDir, by string) error
}

// ActionsFile is the run file where the inbox journals who did what to a
// run (the run's own journal is the runtime's).
const ActionsFile = "actions.jsonl"

// actionRecord is one line of ActionsFile.
type actionRecord struct {
	Time   time.Time `json:"time"`
	By     string    `json:"by"`
	Action string    `json:"action"`
	// Run names the other run of a re-run: the new one on the old run,
	// the old one on the new run.
	Run string `json:"run,omitempty"`
}

// runAction is what the run page offers for a run in a given state.
type runAction struct {
	Name, Label, Explain string
	status               string
}

// offered are the actions a run's status allows. The explanations say
// what each does in the scheduler's terms, since "retry" means different
// things for different ends.
func offered(status string, launch bool) []runAction {
	var out []runAction
	switch status {
	case string(runtime.StatusRunning):
		out = append(out, runAction{Name: "cancel", Label: "Cancel", Explain: "stops the run now: it ends canceled; its running node's time and commands (commands.jsonl) are kept"})
	case string(runtime.StatusInterrupted):
		if launch {
			out = append(out, runAction{Name: "resume", Label: "Retry from where it stopped", Explain: "resumes from the journal: finished nodes are not run again, the cut-off node runs again"})
		}
	}
	if launch && status != string(runtime.StatusRunning) {
		why := "starts a new run of the same blueprint with the same inputs on a fresh copy of the repository"
		if status == string(runtime.StatusFailed) || status == string(runtime.StatusCanceled) {
			// The runtime keeps a workspace only for a hand-off, so
			// there is no state to retry a node on.
			why += "; a " + status + " run keeps no workspace, so a retry is a new run"
		}
		out = append(out, runAction{Name: "rerun", Label: "Re-run", Explain: why})
	}
	return out
}

func findAction(status string, launch bool, name string) (runAction, bool) {
	for _, a := range offered(status, launch) {
		if a.Name == name {
			return a, true
		}
	}
	return runAction{}, false
}

func (s *Server) launcher() Launcher {
	l, _ := s.opts.Actions.(Launcher)
	return l
}

// actionOf resolves the run and the action a request names, refusing an
// action the run's status does not allow (409). When ok, d is open.
func (s *Server) actionOf(w http.ResponseWriter, r *http.Request) (root int, id string, d *runDir, a runAction, back string, ok bool) {
	root, id, d, err := s.runRoot(r)
	if err != nil {
		notFound(w, err)
		return 0, "", nil, a, "", false
	}
	back = "/run/" + r.PathValue("root") + "/" + url.PathEscape(id)
	status := d.events().Status
	if a, ok = findAction(status, s.launcher() != nil, r.PathValue("action")); !ok {
		d.Close()
		s.fail(w, r, http.StatusConflict, "run "+id+" is "+status, fmt.Errorf("%q is not something a %s run can do", r.PathValue("action"), status), back)
		return 0, "", nil, a, "", false
	}
	a.status = status
	return root, id, d, a, back, true
}

// confirmPage asks before an action: a page of its own (no script, no
// dialog), whose button posts the action.
func (s *Server) confirmPage(w http.ResponseWriter, r *http.Request) {
	root, id, d, a, back, ok := s.actionOf(w, r)
	if !ok {
		return
	}
	defer d.Close()
	s.render(w, r, "confirm.html", map[string]any{"Root": r.PathValue("root"), "ID": id, "Action": a, "Status": a.status,
		"Run": s.index.Get(root, id), "CSRF": s.csrfToken(w, r), "Back": back})
}

// act carries out a confirmed action and journals who did it.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	root, id, d, a, back, ok := s.actionOf(w, r)
	if !ok {
		return
	}
	defer d.Close()
	// One action on a run at a time: a confirm clicked twice posts
	// twice, and two re-runs would start two runs.
	key := r.PathValue("root") + "/" + id
	if _, busy := s.acting.LoadOrStore(key, true); busy {
		s.fail(w, r, http.StatusConflict, a.Label+" "+id, fmt.Errorf("an action on run %s is under way; its page shows it when done", id), back)
		return
	}
	defer s.acting.Delete(key)
	by := s.person(r)
	var err error
	rec := actionRecord{Time: time.Now().UTC(), By: by, Action: a.Name}
	to := back
	switch a.Name {
	case "cancel":
		err = runtime.RequestCancel(d.path, "canceled in the inbox by "+by)
	case "resume":
		err = s.launcher().Resume(r.Context(), d.path, by)
	case "rerun":
		var dir string
		if dir, err = s.launcher().Rerun(r.Context(), d.path, by); err == nil {
			rec.Run = filepath.Base(dir)
			to = "/run/" + r.PathValue("root") + "/" + url.PathEscape(rec.Run)
			if nd, oerr := openRun(s.opts.RunsDirs[root], rec.Run); oerr == nil {
				err = journalAction(nd, actionRecord{Time: rec.Time, By: by, Action: "started as a re-run", Run: id})
				nd.Close()
			}
		}
	}
	if err == nil {
		err = journalAction(d, rec)
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, a.Label+" "+id+" failed", err, back)
		return
	}
	s.index.Refresh()
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// RecordStart journals in run id of runsDir who started it and how, as
// the inbox's start form does: the run page shows it.
func RecordStart(runsDir, id, by, action string) error {
	d, err := openRun(runsDir, id)
	if err != nil {
		return err
	}
	defer d.Close()
	return journalAction(d, actionRecord{Time: time.Now().UTC(), By: by, Action: action})
}

// journalAction appends one record to the run's ActionsFile.
func journalAction(d *runDir, rec actionRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO planted in the run fails the open instead of
	// hanging the request until someone reads it.
	f, err := d.OpenFile(ActionsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return fmt.Errorf("journal the action: %w", err)
	}
	if st, serr := f.Stat(); serr != nil || !st.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("journal the action: %s is not a regular file", ActionsFile)
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Close())
}

// actionsOf reads a run's ActionsFile for its page.
func actionsOf(d *runDir) []actionRecord {
	lines, _ := d.jsonLines(ActionsFile, 200)
	var out []actionRecord
	for _, l := range lines {
		b, _ := json.Marshal(l)
		var rec actionRecord
		if json.Unmarshal(b, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}
