package nodes

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/alert"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// AlertSink is where a run's alerts go: a JSON webhook (AlertJSON) or a
// Slack incoming webhook (AlertSlack). See the README's "Alerts".
type AlertSink = alert.Sink

// The formats of an AlertSink.
const (
	AlertJSON  = alert.FormatJSON
	AlertSlack = alert.FormatSlack
)

// AlertEvent is one alert as a JSON sink receives it.
type AlertEvent = alert.Event

// AlertsFile is the run directory's record of every alert and delivery.
const AlertsFile = alert.File

// CheckAlertSink refuses a sink the harness will not post to.
func CheckAlertSink(s AlertSink) error { return s.Check() }

// openAlerts starts the run's alert dispatcher (nil without sinks) and
// returns o with the proxy's alerts going to it as well.
func openAlerts(ctx context.Context, o EnvOptions, sinks []AlertSink, runDir string, redact *secrets.Redactor, resume bool) (*alert.Dispatcher, EnvOptions, error) {
	d, err := alert.Open(runDir, alert.Options{Sinks: sinks, Redact: redact, Repos: runRepos(ctx, o.Repo), Resume: resume})
	if err != nil || d == nil {
		return nil, o, err
	}
	next := o.OnAlert
	o.OnAlert = func(a sandbox.Alert) {
		d.Raise(proxyEvent(a))
		if next != nil {
			next(a)
		}
	}
	return d, o, nil
}

// proxyEvent is the egress proxy's alert as an event, keyed by its host so
// a box retrying one address pages once.
func proxyEvent(a sandbox.Alert) alert.Event {
	e := alert.Event{Kind: alert.KindEgressSensitive, Key: targetHost(a.Target), Time: a.Time,
		Text:   "the box asked for " + a.Method + " " + a.Target + ": " + a.Reason,
		Fields: map[string]string{"method": a.Method, "target": a.Target, "reason": a.Reason}}
	if a.Denied {
		e.Kind = alert.KindEgressDenied
	}
	return e
}

// targetHost is the host (and port) a proxy target names: an absolute
// URL's, a CONNECT authority, or host+path's.
func targetHost(t string) string {
	if _, rest, ok := strings.Cut(t, "://"); ok {
		t = rest
	}
	if i := strings.IndexAny(t, "/?#"); i >= 0 {
		t = t[:i]
	}
	return strings.ToLower(t)
}

// credentialNotify turns the credential ledger's entries into alerts.
func credentialNotify(d *alert.Dispatcher) func(event, node, purpose, repo, errText string) {
	return func(event, node, purpose, repo, errText string) {
		e := alert.Event{Node: node, Key: repo + " " + purpose,
			Fields: map[string]string{"purpose": purpose, "repository": repo}}
		switch event {
		case "minted":
			e.Kind, e.Text = alert.KindCredentialMinted, "a "+purpose+" token was minted for "+repo
		case "revoke_failed":
			e.Kind, e.Text = alert.KindRevokeFailed, "revoking a minted token failed: "+errText
		default:
			e.Kind, e.Text = alert.KindCredentialEnded, "a minted token was "+event
		}
		d.Raise(e)
	}
}

// runRepos are the run's own repositories: owner/name of each remote of
// the user's repository (a path for a local one), and the repository.
func runRepos(ctx context.Context, repo string) []string {
	if repo == "" {
		return nil
	}
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "config", "--get-regexp", `^remote\..*\.url$`).Output()
	if err != nil {
		return nil // no remotes: nothing to tell a foreign repository by
	}
	var repos []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		_, u, _ := strings.Cut(line, " ")
		if r := gitremote.RepoOf(u); r != "" {
			repos = append(repos, r)
		} else if filepath.IsAbs(u) {
			repos = append(repos, u)
		}
	}
	if len(repos) > 0 {
		if abs, err := filepath.Abs(repo); err == nil {
			repos = append(repos, abs)
		}
	}
	return repos
}
