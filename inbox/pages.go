package inbox

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox/draw"
	"github.com/sandgate/sandgate/inbox/find"
	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/internal/lines"
	"github.com/sandgate/sandgate/runtime"
)

const perPage = 50

type listPage struct {
	index.Selection
	Query                find.Query
	Statuses, Blueprints []string
	PrevURL, NextURL     string
	Sorts                []sortLink
	RunsDirs             []string
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	q := find.Parse(r.URL.Query(), perPage)
	all := s.index.Runs()
	p := listPage{Selection: index.Select(all, q), Query: q, Sorts: sortLinks(q),
		Statuses: []string{"running", "succeeded", "handed_off", "failed", "canceled", string(runtime.StatusInterrupted)}, Blueprints: index.Blueprints(all), RunsDirs: s.opts.RunsDirs}
	pg := paging(q, p.Selection, "/")
	p.PrevURL, p.NextURL = pg.PrevURL, pg.NextURL
	s.render(w, r, "runs.html", p)
}

type attemptDetail struct {
	*index.Attempt
	Files   []string
	Outputs string
	// Diffs are the diffs the attempt left in its directory.
	Diffs []*diffView
}

type runPageData struct {
	Root        int
	ID, Dir     string
	View        *index.View
	Run         *index.Run
	Graph       *draw.DAG
	GraphNote   string
	Waterfall   *draw.Waterfall
	Verify      *verifyTable
	Attempts    []attemptDetail
	Commands    []map[string]any
	MoreCmds    int
	Audit       string
	AuditCut    bool
	Alerts      []map[string]any
	Transcripts []transcript
	Handoff     string
	Answer      *answerForm
	CLI         *handoffCLI
	CSRF        string
	Live        bool
	Offset      int64
	// Actions are what the run's state allows; Done what people did.
	Actions []runAction
	Done    []actionRecord
	Patch   bool
	Review  string
	// Running are the ends of the running attempts' transcripts.
	Running []transcript
	// Change is the current candidate's diff: change.patch, else the
	// last candidate a gate judged (full page only); Candidates the
	// candidates each gate attempt judged, oldest first.
	Change     *diffView
	Candidates []candidateView
	// DurationMS is the run's working time: for a running run the
	// journal's time so far plus the time since its latest event, so the
	// header agrees with the running attempt's time in the timeline.
	DurationMS int64
}

// loadRun builds everything the run page and its live fragment show.
func (s *Server) loadRun(root int, id string, d *runDir, full bool) *runPageData {
	var offset int64
	if st, err := d.Stat("events.jsonl"); err == nil {
		offset = st.Size()
	}
	v := d.events()
	p := &runPageData{Root: root, ID: id, Dir: d.path, View: v, Run: s.index.Get(root, id), Live: v.Status == "running", Offset: offset}
	bp, err := d.blueprint(s.opts.Types)
	if err != nil {
		bp, p.GraphNote = nil, "blueprint.yaml: "+lines.First(err.Error())
	}
	p.Graph = layoutDAG(bp, v)
	p.Actions, p.Done = offered(v.Status, s.launcher() != nil), actionsOf(d)
	_, perr := d.Stat("change.patch")
	p.Patch = perr == nil
	p.Review = s.reviewURL(d.path)
	p.Running = runningTranscripts(d, v)
	if spans := d.traceSpans(); len(spans) > 0 && !p.Live {
		p.Waterfall = draw.Build(spans, "trace.json", time.Now())
	} else {
		p.Waterfall = draw.Build(attemptSpans(v), "journal", time.Now())
	}
	now := time.Now()
	p.DurationMS = v.DurationMS()
	if p.Live && !v.Last.IsZero() && now.After(v.Last) {
		p.DurationMS += now.Sub(v.Last).Milliseconds()
	}
	for _, a := range v.Attempts {
		if a.End.IsZero() && !a.Start.IsZero() {
			a.DurationMS = now.Sub(a.Start).Milliseconds() // running: so far
		}
		ad := attemptDetail{Attempt: a, Files: d.attemptFiles(a.Node, a.N)}
		if len(a.Outputs) > 0 {
			ad.Outputs = prettyJSON(a.Outputs)
		}
		p.Attempts = append(p.Attempts, ad)
	}
	// Newest first, within one budget: an agent's proposals are
	// drawn in the live part, refreshed at every change.
	budget := candidatesBudget
	for i := len(p.Attempts) - 1; i >= 0; i-- {
		p.Attempts[i].Diffs = d.attemptDiffs(p.Attempts[i].Files, &budget)
	}
	// The hand-off is in the live part too: a run answered on this page
	// may hand off again while it is open.
	if v.Status == "handed_off" {
		p.Handoff, _ = d.text("handoff.md")
		p.Answer, p.CLI = handoffOf(d, root, bp, "")
	}
	if !full {
		return p
	}
	p.Verify = verifyOf(d)
	p.Commands, p.MoreCmds = d.jsonLines("commands.jsonl", 500)
	p.Audit, p.AuditCut = d.text("audit.log")
	p.Alerts, _ = d.jsonLines("alerts.jsonl", 500)
	p.Transcripts = transcripts(d, v)
	p.Change = d.readDiff("change.patch")
	p.Candidates = d.candidates(v)
	if p.Change == nil && len(p.Candidates) > 0 {
		p.Change = p.Candidates[len(p.Candidates)-1].Diff
	}

	return p
}

func answerNodes(bp *blueprint.Blueprint) []string {
	if bp == nil {
		return nil
	}
	var out []string
	for _, id := range bp.Order {
		if !blueprint.IsTerminal(bp.Nodes[id].Type) {
			out = append(out, id)
		}
	}
	return out
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	root, id, d, err := s.runRoot(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer d.Close()
	p := s.loadRun(root, id, d, true)
	p.CSRF = s.csrfToken(w, r)
	if p.Answer != nil {
		p.Answer.CSRF = p.CSRF
	}
	s.render(w, r, "run.html", p)
}

func (s *Server) liveFragment(w http.ResponseWriter, r *http.Request) {
	root, id, d, err := s.runRoot(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer d.Close()
	p := s.loadRun(root, id, d, false)
	if p.Answer != nil {
		p.Answer.CSRF = s.csrfToken(w, r)
	}
	s.render(w, r, "live", p)
}

// runFile serves one file of a run as plain text: never as HTML, whatever
// it contains.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	_, _, d, err := s.runRoot(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer d.Close()
	name := r.PathValue("path")
	if path.Clean(name) != name || !index.ValidRel(name) {
		notFound(w, index.ErrBadName)
		return
	}
	b, cut, err := index.ReadCapped(d.Root, name, 8<<20)
	if err != nil {
		notFound(w, fmt.Errorf("%s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(b)
	if cut {
		_, _ = w.Write([]byte("\n… (cut at 8 MiB)\n"))
	}
}

type handoffItem struct {
	Run      *index.Run
	Markdown string
	Answer   *answerForm
	CLI      *handoffCLI
}

// handoffsPerPage keeps the hand-offs page to a few forms.
const handoffsPerPage = 10

func (s *Server) handoffsPage(w http.ResponseWriter, r *http.Request) {
	q := find.Parse(r.URL.Query(), handoffsPerPage)
	q.Status, q.Blueprint, q.Sort = "handed_off", "", "started"
	sel := index.Select(s.index.Runs(), q)
	var items []handoffItem
	csrf := s.csrfToken(w, r)
	for _, run := range sel.Runs {
		d, err := openRun(s.opts.RunsDirs[run.Root], run.ID)
		if err != nil {
			continue
		}
		it := handoffItem{Run: run}
		it.Markdown, _ = d.text("handoff.md")
		bp, _ := d.blueprint(s.opts.Types)
		it.Answer, it.CLI = handoffOf(d, run.Root, bp, csrf)
		d.Close()
		items = append(items, it)
	}
	q.Status = "" // the page's own filter, not in its links
	s.render(w, r, "handoffs.html", map[string]any{"Items": items, "Query": q, "Total": sel.Total, "Paging": paging(q, sel, "/handoffs")})
}

// pager is a list's page links.
type pager struct {
	Page, Pages      int
	PrevURL, NextURL string
}

func paging(q find.Query, sel index.Selection, path string) pager {
	p := pager{Page: sel.Page, Pages: sel.Pages}
	if sel.Page > 1 {
		p.PrevURL = q.WithPage(sel.Page - 1).At(path)
	}
	if sel.Page < sel.Pages {
		p.NextURL = q.WithPage(sel.Page + 1).At(path)
	}
	return p
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	_, _, d, err := s.runRoot(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer d.Close()
	node, note := r.PostFormValue("node"), r.PostFormValue("note")
	bp, err := d.blueprint(s.opts.Types)
	if err != nil || !slices.Contains(answerNodes(bp), node) {
		http.Error(w, fmt.Sprintf("inbox: %q is not a non-terminal node of the run's blueprint", node), http.StatusBadRequest)
		return
	}
	if s.opts.Actions == nil {
		http.Error(w, "inbox: this server cannot answer hand-offs", http.StatusNotImplemented)
		return
	}
	back := "/run/" + r.PathValue("root") + "/" + url.PathEscape(r.PathValue("id"))
	if strings.TrimSpace(note) == "" {
		s.fail(w, r, http.StatusBadRequest, "answer "+d.id+": no note", errors.New("write what the node should know in the note"), back)
		return
	}
	// The answer process would refuse it: refused here, nothing is
	// started or written.
	if err := (runtime.Answer{Node: node, Note: note, By: s.person(r)}).CheckSize(); err != nil {
		s.fail(w, r, http.StatusRequestEntityTooLarge, "answer "+d.id+": note too long", err, back)
		return
	}
	// A run that is not waiting for an answer is the request's problem
	// (409, with the reason), and nothing is started or written.
	if v := d.events(); v.Status != string(runtime.StatusHandedOff) {
		err = fmt.Errorf("%w: run %s is %s, not handed off; only a handed-off run can be answered", runtime.ErrNotAnswerable, d.id, v.Status)
	} else {
		err = s.opts.Actions.Answer(r.Context(), d.path, node, note, s.person(r))
	}
	if errors.Is(err, runtime.ErrNotAnswerable) {
		s.fail(w, r, http.StatusConflict, "answer "+d.id+": not handed off", err, back)
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "answer "+d.id+" failed", err, back)
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
