package find

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

func TestPaginate(t *testing.T) {
	cases := []struct{ total, page, per, from, to, clamped, pages int }{
		{0, 1, 50, 0, 0, 1, 1},
		{0, 99, 50, 0, 0, 1, 1},
		{320, 99, 50, 300, 320, 7, 7},
		{320, 2, 50, 50, 100, 2, 7},
		{320, -3, 50, 0, 50, 1, 7},
		{100, 2, 50, 50, 100, 2, 2},
		{101, 3, 50, 100, 101, 3, 3},
	}
	for _, c := range cases {
		from, to, p, pages := Paginate(c.total, c.page, c.per)
		if from != c.from || to != c.to || p != c.clamped || pages != c.pages {
			t.Errorf("Paginate(%d, %d, %d) = %d %d %d %d, want %d %d %d %d", c.total, c.page, c.per, from, to, p, pages, c.from, c.to, c.clamped, c.pages)
		}
	}
}

func TestParseRoundTrips(t *testing.T) {
	for _, raw := range []string{"", "q=TestAdd+calc&status=failed", "blueprint=fix&from=2026-01-02&to=2026-01-03&sort=cost&dir=asc&page=3"} {
		v, _ := url.ParseQuery(raw)
		q := Parse(v, 50)
		if got := q.Values().Encode(); got != v.Encode() {
			t.Errorf("%q: parsed and written back as %q", raw, got)
		}
	}
	q := Parse(url.Values{"sort": {"<script>"}, "page": {"x"}, "from": {"yesterday"}}, 50)
	if q.Sort != "started" || q.Page != 1 || !q.From.IsZero() {
		t.Errorf("bad values kept: %+v", q)
	}
}

func TestInRangeIncludesBothDays(t *testing.T) {
	q := Parse(url.Values{"from": {"2026-01-02"}, "to": {"2026-01-03"}}, 50)
	day := func(d, h int) time.Time { return time.Date(2026, 1, d, h, 0, 0, 0, time.Local) }
	for _, c := range []struct {
		t  time.Time
		in bool
	}{{day(1, 23), false}, {day(2, 0), true}, {day(3, 23), true}, {day(4, 0), false}} {
		if q.InRange(c.t) != c.in {
			t.Errorf("%v in range: %v", c.t, !c.in)
		}
	}
}

func TestSortedByFlips(t *testing.T) {
	q := Query{Sort: "started", Page: 4}
	if s := q.SortedBy("cost"); s.Sort != "cost" || s.Asc || s.Page != 1 {
		t.Errorf("%+v", s)
	}
	if s := q.SortedBy("started"); !s.Asc {
		t.Errorf("same column did not flip: %+v", s)
	}
}

func TestMatchNeedsEveryWord(t *testing.T) {
	text := "fix testadd in calc.go"
	if !Match([]string{"testadd", "calc"}, text) || Match([]string{"testadd", "parser"}, text) || !Match(nil, text) {
		t.Error("Match")
	}
}

func ExampleQuery_URL() {
	q := Parse(url.Values{"q": {"TestAdd"}, "status": {"failed"}, "page": {"2"}}, 50)
	fmt.Println(q.WithPage(3).URL())
	fmt.Println(q.SortedBy("cost").URL())
	// Output:
	// /?page=3&q=TestAdd&status=failed
	// /?q=TestAdd&sort=cost&status=failed
}
