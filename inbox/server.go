package inbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox/index"
)

// Actions carry out the inbox's two state changes. They are injected so
// this package stays free of the nodes facade and the sandbox: the CLI
// resumes a run or decides a review its own way.
type Actions interface {
	// Answer resumes the handed-off run in runDir at node with the
	// person's note.
	Answer(ctx context.Context, runDir, node, note, by string) error
	// Decide approves or rejects entry id of the review queue queueDir.
	Decide(ctx context.Context, queueDir, id string, approve bool, note, by string) error
}

// Options configure a Server.
type Options struct {
	RunsDirs   []string
	ReviewDirs []string
	// Token, when set, is required on every request (Bearer header, or the
	// cookie set by visiting any page with ?token=).
	Token   string
	Actions Actions
	// Types parse each run's saved blueprint.yaml for its graph; without
	// them the graph shows only the nodes the journal names.
	Types blueprint.TypeSet
	// By names whoever answers and decides in this server when People
	// name no one: on loopback without tokens, or with Token (default
	// "inbox").
	By string
	// Blueprints holds the blueprints (NAME.yaml) a person may start from
	// the inbox, when Actions is also a Starter: the shipped ones, an
	// embedder's own, a directory's (sandgate serve --blueprints-dir).
	// Their form is generated from their inputs; types come from Types.
	Blueprints fs.FS
	// People, when set, name the person behind each request (named
	// tokens, a trusted proxy's header); the name is the recorded "by".
	People *People
	// Index, when set, is shared (else the server makes its own).
	Index *index.Index
	// Poll is how often a live page's stream looks for new events
	// (default 250ms).
	Poll time.Duration
	// Hooks are served at exactly their paths ("/hooks/github") for POST,
	// without the inbox's sign-in and CSRF checks: each carries its own
	// signature (inbox/trigger). No other path skips them.
	Hooks map[string]http.Handler
	// MaxStreams caps the live streams served at once (default 64): each
	// holds a connection and polls a journal, so an unbounded number is a
	// way to exhaust the server.
	MaxStreams int
}

// Server is the inbox's HTTP handler.
type Server struct {
	opts    Options
	index   *index.Index
	csrfKey []byte
	tmpl    *template.Template
	handler http.Handler
	// streams holds a token per live stream being served.
	streams chan struct{}
	// acting are the runs an action is being carried out on (act).
	acting sync.Map
	// pend is the nav's counts, shared (livelist.go).
	pend pendingCache
}

//go:embed assets
var assets embed.FS

// New builds a server over the given directories.
func New(opts Options) (*Server, error) {
	if len(opts.RunsDirs) == 0 && len(opts.ReviewDirs) == 0 {
		return nil, errors.New("inbox: no runs or review directories")
	}
	if opts.By == "" {
		opts.By = "inbox"
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 64
	}
	s := &Server{opts: opts, index: opts.Index, csrfKey: make([]byte, 32), streams: make(chan struct{}, opts.MaxStreams)}
	if s.index == nil {
		s.index = index.NewIndex(opts.RunsDirs...)
	}
	if _, err := rand.Read(s.csrfKey); err != nil {
		return nil, err
	}
	// pending is the server's own: the nav of every page shows its counts.
	t, err := template.New("").Funcs(funcs).Funcs(template.FuncMap{"pending": s.pendingNow, "runLink": s.runLink,
		"who": func() template.HTML { return whoMarker }}).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("inbox: templates: %w", err)
	}
	s.tmpl = t
	s.handler = s.hooks(s.secure(s.routes()))
	return s, nil
}

// Index is the server's run index.
func (s *Server) Index() *index.Index { return s.index }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// A write may change what waits (an answer, a decision): the
		// page it redirects to must not show the count from before.
		defer s.forgetPending()
	}
	s.handler.ServeHTTP(w, r)
}

func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", s.runsPage)
	m.HandleFunc("GET /run/{root}/{id}", s.runPage)
	m.HandleFunc("GET /run/{root}/{id}/live", s.liveFragment)
	m.HandleFunc("GET /run/{root}/{id}/events", s.eventStream)
	m.HandleFunc("GET /run/{root}/{id}/file/{path...}", s.runFile)
	m.HandleFunc("POST /run/{root}/{id}/answer", s.answer)
	m.HandleFunc("GET /run/{root}/{id}/confirm/{action}", s.confirmPage)
	m.HandleFunc("POST /run/{root}/{id}/act/{action}", s.act)
	m.HandleFunc("GET /events", s.changesStream)
	m.HandleFunc("GET /start", s.startList)
	m.HandleFunc("GET /start/{name}", s.startForm)
	m.HandleFunc("POST /start/{name}", s.start)
	m.HandleFunc("GET /handoffs", s.handoffsPage)
	m.HandleFunc("GET /reviews", s.reviewsPage)
	m.HandleFunc("GET /review/{q}/{id}", s.reviewPage)
	m.HandleFunc("POST /review/{q}/{id}/decide", s.decide)
	return m
}

// Serve serves on ln until ctx ends, then shuts down gracefully, waiting
// at most grace for requests in flight; live streams end at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	streams, stopStreams := context.WithCancel(context.Background())
	defer stopStreams()
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return streams }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stopStreams()
	if s.opts.Index == nil { // the index is the server's own: let its watcher go
		defer s.index.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("inbox: shutdown: %w", err)
	}
	return nil
}

// render executes a template into a buffer first, so a failure is a clean
// 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "inbox: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(s.signedIn(b.Bytes(), r))
}

// whoMarker stands in the layout's header where the signed-in person's
// name goes; the templates are shared by every request, so the name is
// put in after rendering. Page text cannot forge the marker: everything
// but the layout is escaped, and "<" never survives escaping.
const whoMarker = "<!--sandgate:who-->"

// signedIn puts the name decisions on r are recorded under in the place
// of the layout's marker, so a wrong sign-in shows on every page.
func (s *Server) signedIn(page []byte, r *http.Request) []byte {
	who := ""
	if p := s.person(r); p != "" {
		who = `<span class="who" title="decisions are recorded under this name">signed in as <b>` + template.HTMLEscapeString(p) + `</b></span>`
	}
	return bytes.Replace(page, []byte(whoMarker), []byte(who), 1)
}

// fail shows an action's error as a page (the text escaped like any
// other), with a link back to where the person was.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, title string, err error, back string) {
	var b bytes.Buffer
	if terr := s.tmpl.ExecuteTemplate(&b, "error.html", map[string]any{"Title": title, "Err": err.Error(), "Back": back}); terr != nil {
		http.Error(w, "inbox: "+title+": "+err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(s.signedIn(b.Bytes(), r))
}

// runRoot resolves the {root} and {id} of a request to a runs directory
// and the run's directory opened as an os.Root.
func (s *Server) runRoot(r *http.Request) (int, string, *runDir, error) {
	root, err := strconv.Atoi(r.PathValue("root"))
	if err != nil || root < 0 || root >= len(s.opts.RunsDirs) {
		return 0, "", nil, index.ErrBadName
	}
	id := r.PathValue("id")
	d, err := openRun(s.opts.RunsDirs[root], id)
	return root, id, d, err
}

func notFound(w http.ResponseWriter, err error) {
	code := http.StatusNotFound
	if errors.Is(err, index.ErrBadName) {
		code = http.StatusBadRequest
	}
	http.Error(w, "inbox: "+err.Error(), code)
}
