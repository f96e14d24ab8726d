// Package alert sends a run's alerts to the sinks the operator configures:
// a generic JSON webhook and Slack's incoming-webhook format.
//
// The events are the ones a person should hear about while the run is
// still going: the egress proxy's alerts (sign-up, token, mail and chat
// endpoints; denied hosts), a token minted or revoked, a push or review to
// a repository other than the run's, and a canary hit in the test gate.
//
// Delivery never holds the run up. Raise only takes a lock: an event is
// held briefly (Hold) so repeats of the same kind and key fold into it as a
// count, released at a bounded rate, and handed to one goroutine per sink
// with a bounded queue (the oldest is dropped when it is full, and the
// drop is itself reported with a count). A sink's worker retries network
// errors, 5xx, 408 and 429 with exponential backoff and jitter, honouring
// Retry-After, and gives up after Attempts. Close drains what is left for
// at most Drain and then abandons it, so a dead receiver cannot keep a run
// from ending.
//
// Every event is written to the run's alerts-delivered.jsonl (synced)
// before any sink sees it, and every attempt after it, so an alert a
// crashed harness never delivered is visible there; Open with resume sends
// the ones still owed to a sink of the same name again.
//
// Everything sent is redacted: the run's credentials (secrets.Redactor)
// and anything shaped like a token. Deliveries go from the harness, never
// from the box, only to http(s) URLs, and never to link-local or cloud
// metadata addresses (checked on the URL and again on the address dialed).
package alert
