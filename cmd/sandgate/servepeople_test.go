package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServePeopleFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("ana-0123456789abcdef ana\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file, header string
		proxies            []string
		err                string
	}{
		{"none", "", "", nil, ""},
		{"token file", file, "", nil, ""},
		{"proxy", "", "X-Forwarded-User", []string{"10.0.0.0/8"}, ""},
		{"header without proxy", "", "X-Forwarded-User", nil, "go together"},
		{"proxy without header", "", "", []string{"10.0.0.1"}, "go together"},
		{"bad proxy", "", "X-Forwarded-User", []string{"proxy.example"}, "neither an address"},
		{"missing file", file + ".no", "", nil, "--token-file"},
	}
	for _, c := range cases {
		p, err := servePeople(c.file, c.header, c.proxies)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
		if c.name == "none" && p != nil {
			t.Errorf("no flags made People %+v", p)
		}
	}
	if code, _, errs := runCLI("serve", "--addr", "0.0.0.0:0", "--trusted-proxy-header", "X-Forwarded-User"); code != exitUsage || !strings.Contains(errs, "go together") {
		t.Errorf("serve with a header but no proxy: exit %d %s", code, errs)
	}
}
