package alert

import (
	"regexp"
	"time"

	"github.com/sandgate/sandgate/secrets"
)

// The kinds of event sandgate raises.
const (
	KindEgressDenied     = "egress_denied"
	KindEgressSensitive  = "egress_sensitive"
	KindCredentialMinted = "credential_minted"
	KindCredentialEnded  = "credential_revoked"
	KindRevokeFailed     = "credential_revoke_failed"
	KindForeignPush      = "foreign_push"
	KindForeignReview    = "foreign_review"
	KindCanary           = "canary"
	// KindDropped reports alerts dropped because a queue was full.
	KindDropped = "alerts_dropped"
)

// Event is one alert, as the JSON webhook receives it.
type Event struct {
	ID   string    `json:"id"`
	Kind string    `json:"kind"`
	Run  string    `json:"run"`
	Node string    `json:"node,omitempty"`
	Time time.Time `json:"time"`
	// Text is a short sentence for a person.
	Text   string            `json:"text"`
	Fields map[string]string `json:"fields,omitempty"`
	// Key tells events of one kind apart for de-duplication (a host, a
	// repository); events of one kind and key within Window are sent once.
	Key string `json:"key,omitempty"`
	// Count is how many events this one stands for: repeats folded in.
	Count int `json:"count"`
}

// tokenShapes are credentials recognisable by their form alone, for the
// ones the run's redactor does not know by value (a token the box made
// up, a key pasted into a URL).
var tokenShapes = regexp.MustCompile(`(?i)` +
	`\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|(A3T[A-Z0-9]|AKIA|ASIA)[A-Z0-9]{16}|glpat-[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)` +
	`|hooks\.slack\.com/[A-Za-z0-9/_-]+` +
	`|\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=-]{16,}` +
	`|([?&;](access_token|token|key|api_key|apikey|secret|password|passwd|sig|signature|code|client_secret|auth)=)[^&#\s"]+` +
	`|(://[^/\s:@]+:)[^/\s@]+@`)

// scrub removes token-shaped text from s, keeping the name of a query
// parameter or the user of a URL so a person still sees what was there.
func scrub(s string) string {
	return tokenShapes.ReplaceAllStringFunc(s, func(m string) string {
		sub := tokenShapes.FindStringSubmatch(m)
		switch {
		case sub[4] != "": // a query parameter's name
			return sub[4] + "[redacted]"
		case sub[6] != "": // a URL's user
			return sub[6] + "[redacted]@"
		}
		return "[redacted]"
	})
}

// redact returns e with its text, key and fields redacted by r and scrub.
func (e Event) redact(r *secrets.Redactor) Event {
	clean := func(s string) string {
		if r != nil {
			s = r.String(s)
		}
		return scrub(s)
	}
	e.Text, e.Key = clean(e.Text), clean(e.Key)
	if len(e.Fields) > 0 {
		f := make(map[string]string, len(e.Fields))
		for k, v := range e.Fields {
			f[clean(k)] = clean(v)
		}
		e.Fields = f
	}
	return e
}
