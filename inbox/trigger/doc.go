// Package trigger starts runs from outside the inbox: `sandgate serve
// --triggers FILE` answers GitHub webhooks (an issue labelled, a comment
// `/sandgate <blueprint> [key=value…]`) and Slack slash commands.
//
// Every request is authenticated by its own signature before anything of
// it is read: GitHub's X-Hub-Signature-256 (HMAC-SHA256 of the raw body
// under the webhook secret), Slack's v0 signature over the timestamp and
// the raw body, compared with hmac.Equal. GitHub deliveries carry no
// timestamp, so their ids are remembered (a bounded file in the state
// directory) and a delivery seen before starts nothing; a Slack request
// older than five minutes is refused. Who may start what comes from the
// trigger file (Config): repositories, users, teams and channels, and the
// blueprints each may run; everything else is refused with a reason, on
// the issue or in Slack, except an unsigned request, which gets 401 and
// nothing else. A cap on the trigger-started runs alive at once keeps a
// storm of events from starting a storm of boxes.
//
// What a person wrote (an issue's title and body, a command's values) is
// data: it reaches the run only as a blueprint input value, checked
// against the input's type and pattern, and the run is started by the
// embedder's Starter (sandgate serve passes each input as one
// `--input=K=V` argument). Replies quote none of it back.
//
// The package knows nothing of sandboxes or the nodes: the CLI injects
// the Starter and the GitHub client.
package trigger
