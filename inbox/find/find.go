package find

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Columns are the sort keys the runs list offers, in its column order.
var Columns = []string{"status", "run", "blueprint", "repository", "started", "duration", "node_runs", "tokens", "cost"}

// DateLayout is how From and To appear in the URL (an <input type=date>).
const DateLayout = "2006-01-02"

// Query is one view of the runs list.
type Query struct {
	// Text is the words to find; every word must occur (any case).
	Text              string
	Status, Blueprint string
	// From and To bound the start date, both days included (local
	// time); zero is open.
	From, To time.Time
	// Sort is one of Columns (default "started"); Asc reverses the
	// default newest/largest-first order.
	Sort    string
	Asc     bool
	Page    int
	PerPage int
}

// Parse reads a query from URL values; what it cannot read it leaves at
// its default rather than failing the page.
func Parse(v url.Values, perPage int) Query {
	q := Query{Text: strings.TrimSpace(v.Get("q")), Status: v.Get("status"), Blueprint: v.Get("blueprint"),
		Sort: v.Get("sort"), Asc: v.Get("dir") == "asc", PerPage: perPage}
	if !slices.Contains(Columns, q.Sort) {
		q.Sort = "started"
	}
	q.Page, _ = strconv.Atoi(v.Get("page"))
	q.Page = max(q.Page, 1)
	if t, err := time.ParseInLocation(DateLayout, v.Get("from"), time.Local); err == nil {
		q.From = t
	}
	if t, err := time.ParseInLocation(DateLayout, v.Get("to"), time.Local); err == nil {
		q.To = t
	}
	return q
}

// Values writes the query back as URL values, leaving out defaults so
// shared links stay short.
func (q Query) Values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"q": q.Text, "status": q.Status, "blueprint": q.Blueprint} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if !q.From.IsZero() {
		v.Set("from", q.From.Format(DateLayout))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.Format(DateLayout))
	}
	if q.Sort != "" && q.Sort != "started" {
		v.Set("sort", q.Sort)
	}
	if q.Asc {
		v.Set("dir", "asc")
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	return v
}

// URL is the runs list's address for the query.
func (q Query) URL() string { return q.At("/") }

// At is the address of the list at path for the query.
func (q Query) At(path string) string {
	if e := q.Values().Encode(); e != "" {
		return path + "?" + e
	}
	return path
}

// WithPage is the query at another page.
func (q Query) WithPage(p int) Query { q.Page = p; return q }

// SortedBy is the query sorted by col: the same column again flips the
// direction; a new column starts at the first page.
func (q Query) SortedBy(col string) Query {
	if q.Sort == col {
		q.Asc = !q.Asc
	} else {
		q.Sort, q.Asc = col, false
	}
	q.Page = 1
	return q
}

// InRange says whether t falls within From..To (days included).
func (q Query) InRange(t time.Time) bool {
	if !q.From.IsZero() && t.Before(q.From) {
		return false
	}
	return q.To.IsZero() || t.Before(q.To.AddDate(0, 0, 1))
}

// LabelPrefix marks a word of the query as a label to filter on:
// label:NAME=VALUE (that value exactly) or label:NAME (any value).
const LabelPrefix = "label:"

// Words are the query's words but its labels, lower-cased, for Match.
func (q Query) Words() []string {
	var out []string
	for _, w := range strings.Fields(q.Text) {
		if !strings.HasPrefix(w, LabelPrefix) {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// Labels are the query's label:NAME=VALUE and label:NAME words, without
// the prefix, as given (labels match exactly, case included).
func (q Query) Labels() []string {
	var out []string
	for _, w := range strings.Fields(q.Text) {
		if l, ok := strings.CutPrefix(w, LabelPrefix); ok && l != "" {
			out = append(out, l)
		}
	}
	return out
}

// HasLabels says whether labels hold every wanted NAME=VALUE (that
// value) and NAME (any value).
func HasLabels(wanted []string, labels map[string]string) bool {
	for _, w := range wanted {
		k, v, exact := strings.Cut(w, "=")
		got, ok := labels[k]
		if !ok || (exact && got != v) {
			return false
		}
	}
	return true
}

// LabelURL is the runs list's address for the runs labelled NAME=VALUE.
func LabelURL(name, value string) string {
	return Query{Text: LabelPrefix + name + "=" + value}.URL()
}

// Match says whether every word occurs in text, which must be lower-case.
func Match(words []string, text string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// Paginate clamps page to the pages total items make at per a page, and
// returns the slice bounds of that page: a page past the end shows the
// last one, never "page 99 of 7".
func Paginate(total, page, per int) (from, to, clamped, pages int) {
	per = max(per, 1)
	pages = max((total+per-1)/per, 1)
	clamped = min(max(page, 1), pages)
	from = min((clamped-1)*per, total)
	return from, min(from+per, total), clamped, pages
}
