package sandbox

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/secrets"
)

// TestAttackLiveQueueGapThenWholeCredential: the queue leaves out a chunk
// (the consumer is behind) and the next chunk starts with a whole
// credential, one with a '/' in it (an AWS secret key's shape). Through
// a redacting stream no piece of it reaches Live: the mask the gap puts
// on the chunk's start must not stop at the '/' and write the rest in
// clear (red before: '[redacted: may be part of a credential]/K7MDENG+...').
func TestAttackLiveQueueGapThenWholeCredential(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	var out bytes.Buffer
	w := secrets.New(map[string]string{"AWS_SECRET_ACCESS_KEY": secret}).Stream(&out)
	q := &liveQueue{wake: make(chan struct{}, 1), done: make(chan struct{})} // drained below, by hand
	q.Write([]byte("line one\n"))
	q.push(bytes.Repeat([]byte("x"), liveMax)) // past liveMax: left out
	q.push([]byte(secret + " line two\n"))
	close(q.wake)
	q.drain(w)
	w.Close()
	got := out.String()
	if !strings.HasPrefix(got, "line one\n") || !strings.Contains(got, " line two\n") {
		t.Fatalf("live got %q", got)
	}
	for i := 0; i+4 <= len(secret); i++ {
		if p := secret[i : i+4]; strings.Contains(got, p) {
			t.Fatalf("BREACH: Live got %q of the credential: %q", p, got)
		}
	}
}
