package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServeRefusesOpenBindWithoutToken: the inbox shows repository text and
// can resume runs, so listening beyond loopback without a token must fail
// before anything listens.
func TestServeRefusesOpenBindWithoutToken(t *testing.T) {
	t.Setenv("SANDGATE_TOKEN", "")
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		var out, errb bytes.Buffer
		code := run([]string{"serve", "--addr", addr, "--runs", t.TempDir()}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "not a loopback address") || strings.Contains(out.String(), "inbox on") {
			t.Errorf("serve --addr %s: exit %d, stdout %q, stderr %q", addr, code, out.String(), errb.String())
		}
	}
}
