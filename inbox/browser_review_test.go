package inbox_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/wait"
)

// The pages a decision leads to, by what only they show: the review
// page again (after a decision, or refused), the error page, approve's
// confirmation page.
const (
	reviewPage  = "#diff"
	errorPage   = "#error"
	confirmPage = "button.confirm.approve"
)

// decideIn opens the review page, types note and presses the verdict's
// button (approve or reject) as a person would, and waits for the page it
// leads to, the one that shows next: the next step must not cut that
// navigation short.
func decideIn(t *testing.T, b *browsertest.Browser, w *world, note, verdict, next string) {
	t.Helper()
	b.Do(t, chromedp.Navigate(w.ts.URL+"/review/0/rev-1"), chromedp.WaitReady(chromedp.CSS("body")))
	if !browsertest.Eval[bool](t, b, `document.querySelector("form.decide textarea[name=note]") !== null`) {
		t.Fatalf("the review page has no decision form: %q", browsertest.Eval[string](t, b, `document.body.innerText`))
	}
	if note != "" {
		b.Type(t, "form.decide textarea[name=note]", note)
	}
	b.ClickThrough(t, "form.decide button."+verdict, next)
}

// untilDecisions waits for the n-th recorded decision and returns it.
func untilDecisions(t *testing.T, w *world, n int) string {
	t.Helper()
	wait.Until(t, "the decision recorded", func() bool { return len(w.acts.list()) >= n })
	got := w.acts.list()
	if len(got) != n {
		t.Fatalf("decisions %v, want %d", got, n)
	}
	return got[n-1]
}

// TestBrowserRejectNeedsANoteApproveConfirms: in the browser, reject with
// an empty or blank note is refused (the page says why, nothing is
// recorded); with a note it is recorded; approve shows a confirmation
// page (not a dialog) and decides only once that is confirmed.
func TestBrowserRejectNeedsANoteApproveConfirms(t *testing.T) {
	w := newWorld(t, "")
	b := browsertest.Start(t)
	for _, note := range []string{"", "   "} {
		decideIn(t, b, w, note, "reject", errorPage)
		if h := browsertest.Eval[string](t, b, `document.querySelector("section.error h1").innerText`); !strings.Contains(h, "no note") {
			t.Errorf("reject with note %q: the page says %q", note, h)
		}
		if got := w.acts.list(); len(got) != 0 {
			t.Fatalf("reject with note %q was recorded: %v", note, got)
		}
	}
	decideIn(t, b, w, "the tests still fail", "reject", reviewPage)
	if got := untilDecisions(t, w, 1); got != `decide reviews rev-1 false "the tests still fail" tester` {
		t.Errorf("reject recorded as %s", got)
	}
	decideIn(t, b, w, "ship it", "approve", confirmPage)
	if got := browsertest.Eval[string](t, b, `document.querySelector("section.confirm").innerText`); !strings.Contains(got, "Approve") || !strings.Contains(got, "ship it") {
		t.Errorf("the confirmation page reads %q", got)
	}
	if got := w.acts.list(); len(got) != 1 {
		t.Fatalf("approve decided before it was confirmed: %v", got)
	}
	b.ClickThrough(t, confirmPage, reviewPage)
	if got := untilDecisions(t, w, 2); got != `decide reviews rev-1 true "ship it" tester` {
		t.Errorf("approve recorded as %s", got)
	}
	if n := b.Dialogs.Load(); n != 0 {
		t.Errorf("%d dialogs: the confirmation should be a page", n)
	}
}

// TestBrowserProxyHeaderNamesThePerson: behind a trusted reverse proxy
// (here the browser itself, on 127.0.0.1, adding X-Forwarded-User as an
// SSO proxy would) a decision made in the browser is recorded under the
// header's name, not the server's --by. The attack: the same header from
// an address that is not a trusted proxy names no one and is refused.
func TestBrowserProxyHeaderNamesThePerson(t *testing.T) {
	loop := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	elsewhere := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	b := browsertest.Start(t)
	_, err := chromedp.Call(b.Ctx, network.Enable, network.EnableParams{})
	must(t, err)
	_, err = chromedp.Call(b.Ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Forwarded-User": "Carol Danvers"}})
	must(t, err)

	w := newWorldWith(t, func(o *inbox.Options) {
		o.People = &inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: loop}
	})
	decideIn(t, b, w, "not like this", "reject", reviewPage)
	if got := untilDecisions(t, w, 1); got != `decide reviews rev-1 false "not like this" Carol Danvers` {
		t.Errorf("recorded as %s, want Carol Danvers", got)
	}

	untrusted := newWorldWith(t, func(o *inbox.Options) {
		o.People = &inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: elsewhere}
	})
	b.Do(t, chromedp.Navigate(untrusted.ts.URL+"/review/0/rev-1"), chromedp.WaitReady(chromedp.CSS("body")))
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("form.decide").length`); n != 0 {
		t.Error("an untrusted address's header opened the review page")
	}
	if got := untrusted.acts.list(); len(got) != 0 {
		t.Errorf("an untrusted address decided: %v", got)
	}
}
