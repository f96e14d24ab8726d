package inbox

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sandgate/sandgate/inbox/find"
	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
)

// reviewEntry is a queue entry as the inbox shows it: the entry itself
// (entry.json, read through the queue's own type) and which of the
// inbox's queues holds it.
type reviewEntry struct {
	reviewqueue.Entry
	Queue int `json:"-"`
}

func (s *Server) queue(r *http.Request) (int, *os.Root, string, error) {
	q, err := strconv.Atoi(r.PathValue("q"))
	if err != nil || q < 0 || q >= len(s.opts.ReviewDirs) {
		return 0, nil, "", index.ErrBadName
	}
	id := r.PathValue("id")
	root, err := openDir(s.opts.ReviewDirs[q], id)
	return q, root, id, err
}

func readEntry(root *os.Root) (*reviewEntry, error) {
	b, _, err := index.ReadCapped(root, "entry.json", 1<<20)
	if err != nil {
		return nil, err
	}
	var e reviewEntry
	return &e, json.Unmarshal(b, &e)
}

// reviewsPerPage is how many entries the review queue shows at once.
const reviewsPerPage = 50

// reviewsPage lists the queues' entries, filtered by status and words
// (id, title, branch), a page at a time.
func (s *Server) reviewsPage(w http.ResponseWriter, r *http.Request) {
	q := find.Parse(r.URL.Query(), reviewsPerPage)
	words := q.Words()
	var match []*reviewEntry
	for _, e := range s.reviewEntries() {
		if (q.Status == "" || e.Status == q.Status) && find.Match(words, strings.ToLower(e.ID+"\x00"+e.Title+"\x00"+e.Branch)) {
			match = append(match, e)
		}
	}
	from, to, page, pages := find.Paginate(len(match), q.Page, q.PerPage)
	sel := index.Selection{Total: len(match), Page: page, Pages: pages}
	s.render(w, r, "reviews.html", map[string]any{"Entries": match[from:to], "Total": len(match), "Query": q,
		"Statuses": []string{"pending", "approved", "rejected"}, "Paging": paging(q, sel, "/reviews")})
}

// reviewURL is the review page of the entry made from the run in runDir.
func (s *Server) reviewURL(runDir string) string {
	for _, e := range s.reviewEntries() {
		if e.RunDir == runDir {
			return "/review/" + strconv.Itoa(e.Queue) + "/" + url.PathEscape(e.ID)
		}
	}
	return ""
}

// reviewEntries lists every queue's entries, newest first.
func (s *Server) reviewEntries() []*reviewEntry {
	var entries []*reviewEntry
	for q, dir := range s.opts.ReviewDirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range ents {
			root, err := openDir(dir, de.Name())
			if err != nil {
				continue
			}
			if e, err := readEntry(root); err == nil {
				e.Queue, e.ID = q, de.Name()
				entries = append(entries, e)
			}
			root.Close()
		}
	}
	slices.SortFunc(entries, func(a, b *reviewEntry) int { return b.Created.Compare(a.Created) })
	return entries
}

type diffLine struct{ Class, Text string }

type reviewPageData struct {
	Entry   *reviewEntry
	Summary string
	Files   []string
	Diff    []diffLine
	Verify  *verifyTable
	CSRF    string
	RunLink string
}

func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request) {
	q, root, id, err := s.queue(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer root.Close()
	e, err := readEntry(root)
	if err != nil {
		notFound(w, err)
		return
	}
	e.Queue, e.ID = q, id
	p := reviewPageData{Entry: e, CSRF: s.csrfToken(w, r), RunLink: s.runLink(e.RunDir)}
	if b, _, err := index.ReadCapped(root, "summary.md", fileCap); err == nil {
		p.Summary = string(b)
	}
	if b, _, err := index.ReadCapped(root, "diff.patch", 4<<20); err == nil {
		p.Files, p.Diff = parseDiff(string(b))
	}
	p.Verify = verifyOf(&runDir{Root: root})
	s.render(w, r, "review.html", p)
}

// runLink finds the inbox page of a run directory, if it is one of ours.
func (s *Server) runLink(dir string) string {
	for i, rd := range s.opts.RunsDirs {
		if rest, ok := strings.CutPrefix(dir, rd+string(os.PathSeparator)); ok && index.ValidName(rest) {
			return "/run/" + strconv.Itoa(i) + "/" + url.PathEscape(rest)
		}
	}
	return ""
}

// parseDiff splits a unified diff into classed lines and its file names.
func parseDiff(d string) ([]string, []diffLine) {
	var files []string
	var lines []diffLine
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "diff --git "):
			c = "file"
			if i := strings.LastIndex(l, " b/"); i >= 0 {
				files = append(files, l[i+3:])
			}
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "index "):
			c = "meta"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		lines = append(lines, diffLine{Class: c, Text: l})
	}
	return files, lines
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	q, root, id, err := s.queue(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer root.Close()
	verdict := r.PostFormValue("verdict")
	if verdict != "approve" && verdict != "reject" {
		http.Error(w, "inbox: verdict must be approve or reject", http.StatusBadRequest)
		return
	}
	if s.opts.Actions == nil {
		http.Error(w, "inbox: this server cannot decide reviews", http.StatusNotImplemented)
		return
	}
	back := "/review/" + strconv.Itoa(q) + "/" + url.PathEscape(id)
	note := r.PostFormValue("note")
	if verdict == "reject" && strings.TrimSpace(note) == "" {
		s.fail(w, r, http.StatusBadRequest, "reject "+id+": no note", errors.New("say why in the note: it is what the agent or the author is told"), back)
		return
	}
	// Approving lands the change: asked once more, on a page of its own.
	if verdict == "approve" && r.PostFormValue("confirm") != "yes" {
		e, err := readEntry(root)
		if err != nil {
			notFound(w, err)
			return
		}
		e.Queue, e.ID = q, id
		s.render(w, r, "approve-confirm.html", map[string]any{"Entry": e, "Note": note, "CSRF": s.csrfToken(w, r), "Back": back})
		return
	}
	err = s.opts.Actions.Decide(r.Context(), s.opts.ReviewDirs[q], id, verdict == "approve", note, s.person(r))
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, verdict+" "+id+" failed", err, back)
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
