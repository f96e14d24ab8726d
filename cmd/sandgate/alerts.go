package main

import (
	"fmt"
	"net/url"
	"os"

	"github.com/sandgate/sandgate/nodes"
)

// alertFlags are the run's alert sinks. A Slack incoming-webhook URL is a
// credential (whoever holds it posts to the channel), so Slack sinks are
// named by the variable holding the URL: the run's settings record the
// name, never the URL. A generic webhook's URL is recorded as given, so
// one that carries a secret is given through --alert-webhook-env too.
type alertFlags struct {
	webhooks    listFlag // --alert-webhook URL
	webhookEnvs listFlag // --alert-webhook-env VAR
	slackEnvs   listFlag // --alert-slack-env VAR
}

func (a *alertFlags) register(fs *flagSet) {
	fs.Var(&a.webhooks, "alert-webhook", "POST each alert as JSON to this http(s) URL (repeatable; recorded in the run, so no secret in it: see --alert-webhook-env)")
	fs.Var(&a.webhookEnvs, "alert-webhook-env", "POST each alert as JSON to the URL held by this environment variable (repeatable)")
	fs.Var(&a.slackEnvs, "alert-slack-env", "post each alert to the Slack incoming-webhook URL held by this environment variable (repeatable)")
}

// args are the flags again, for a child sandgate (serve's answers and
// starts).
func (a *alertFlags) args() []string {
	var out []string
	for _, f := range []struct {
		name string
		vs   []string
	}{{"--alert-webhook", a.webhooks}, {"--alert-webhook-env", a.webhookEnvs}, {"--alert-slack-env", a.slackEnvs}} {
		for _, v := range f.vs {
			out = append(out, f.name, v)
		}
	}
	return out
}

// sinks resolves the flags into sinks, refusing an unset variable or a
// URL the harness will not post to (not http(s), link-local, metadata).
func (a *alertFlags) sinks() ([]nodes.AlertSink, error) {
	var out []nodes.AlertSink
	add := func(s nodes.AlertSink, flag string) error {
		if err := nodes.CheckAlertSink(s); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		out = append(out, s)
		return nil
	}
	for _, u := range a.webhooks {
		if err := add(nodes.AlertSink{Format: nodes.AlertJSON, URL: u, Name: "webhook " + redactedURL(u)}, "--alert-webhook"); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		flag, format, kind string
		vars               []string
	}{{"--alert-webhook-env", nodes.AlertJSON, "webhook", a.webhookEnvs}, {"--alert-slack-env", nodes.AlertSlack, "slack", a.slackEnvs}} {
		for _, v := range f.vars {
			u := os.Getenv(v)
			if u == "" {
				return nil, fmt.Errorf("%s %s: the variable is not set", f.flag, v)
			}
			if err := add(nodes.AlertSink{Format: f.format, URL: u, Name: f.kind + " $" + v}, f.flag); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// redactedURL is u without its user information and query, for a sink's
// name in the run's record.
func redactedURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// secretNames are the variables holding sink URLs: redacted wherever the
// run's credentials are.
func (a *alertFlags) secretNames() []string {
	return append(append([]string(nil), a.webhookEnvs...), a.slackEnvs...)
}
