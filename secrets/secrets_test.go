package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestIsCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "GH_TOKEN": true, "FOO_TOKEN": true, "gh_token": true, "GHTOKEN": true,
		"AWS_SECRET_ACCESS_KEY": true, "OPENAI_API_KEY": true, "OPENAI_APIKEY": true, "PGPASSWORD": true,
		"DB_PASS": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "NPM_CONFIG_TOKEN": true, "githubToken": true,
		"MONKEY": false, "TURKEY_COUNT": false, "KEYBOARD_LAYOUT": false, "TOKENIZERS_PARALLELISM": false,
		"PASSAGE": false, "GOFLAGS": false, "PATH": false, "HOME": false, "SANDGATE_TEST_MODEL_KEY": true,
	} {
		if got := IsCredentialName(name); got != want {
			t.Errorf("IsCredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEndpointAllowed(t *testing.T) {
	allowed := []string{"http://127.0.0.1:8080/v1/", "https://github.com", "https://ghe.example/api/v3", "not a url", "file:///tmp"}
	for url, want := range map[string]bool{
		"http://127.0.0.1:8080/v1": true, "http://127.0.0.1:8080/v1/": true, "http://127.0.0.1:8080/v1/chat": true,
		"http://127.0.0.1:8080/v1evil": false, "https://127.0.0.1:8080/v1": false, "http://127.0.0.1:8081/v1": false,
		"http://127.0.0.1:8080/v1/../admin": false, "http://127.0.0.1:8080/": false, "": false,
		"https://github.com/org/repo.git": true, "https://GitHub.com:443/org/repo.git": true, "https://github.com": true,
		"https://x-access-token:t@github.com/org/r.git": true, "http://github.com/org/r.git": false,
		"https://github.com@evil.example/x.git": false, "https://github.com.evil.example/x.git": false,
		"https://github.com:8443/x.git": false, "https://evil.example/x.git": false,
		"https://ghe.example/api/v3/repos": true, "https://ghe.example/api/v3": true, "https://ghe.example/api": false,
		"https://ghe.example/api/v3%2f..%2f..": false,
		"/srv/git/r.git":                       false, "file:///tmp/r.git": false, "git@github.com:org/r.git": false, "ssh://github.com/org/r.git": false,
		"https://github.com\\@evil.example/x": false,
	} {
		if got := EndpointAllowed(url, allowed); got != want {
			t.Errorf("EndpointAllowed(%q) = %v, want %v", url, got, want)
		}
	}
}

func TestRedactorSpellingsAndShortValues(t *testing.T) {
	r := FromEnv([]string{"GITHUB_TOKEN=canary-gh-<&>\"x", "SHORT_TOKEN=abc", "PLAIN=canary-plain-1", "MY_KEY_VAR=zz", "HOME=/root"}, "PLAIN")
	if got := strings.Join(r.Names(), ","); got != "GITHUB_TOKEN,PLAIN" {
		t.Fatalf("names %s", got)
	}
	gh := "canary-gh-<&>\"x"
	j, _ := json.Marshal(map[string]string{"out": "token is " + gh})
	q := fmt.Sprintf("%q", "token "+gh)
	in := "raw " + gh + " json " + string(j) + " quoted " + q + " plain canary-plain-1 short abc"
	out := r.String(in)
	for _, leak := range []string{"canary-gh", "canary-plain", `\u003c`} {
		if strings.Contains(out, leak) {
			t.Fatalf("%q survived: %s", leak, out)
		}
	}
	if strings.Count(out, "[redacted GITHUB_TOKEN]") != 3 || !strings.Contains(out, "[redacted PLAIN]") || !strings.Contains(out, "short abc") {
		t.Fatalf("redacted: %s", out)
	}
}

func TestRedactJSONKeepsDocumentsValid(t *testing.T) {
	r := New(map[string]string{"NUM_TOKEN": "123456"})
	doc := []byte(`{"seq":91234567,"output":"tok=123456","list":["123456"]}` + "\n")
	out := r.JSON(doc)
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("invalid JSON after redaction: %v\n%s", err, out)
	}
	if v["output"] != "tok=[redacted NUM_TOKEN]" || fmt.Sprint(v["seq"]) != "9.1234567e+07" || !bytes.HasSuffix(out, []byte("\n")) {
		t.Fatalf("got %s", out)
	}
	if got := r.JSON([]byte(`{"a":1}`)); string(got) != `{"a":1}` {
		t.Fatalf("untouched document changed: %s", got)
	}
}

func TestWriterAndNil(t *testing.T) {
	var nilR *Redactor
	if nilR.String("x") != "x" || nilR.Writer(&bytes.Buffer{}) == nil {
		t.Fatal("nil redactor")
	}
	var buf bytes.Buffer
	w := New(map[string]string{"A_TOKEN": "secret-value"}).Writer(&buf)
	n, err := fmt.Fprintf(w, "the value secret-value\n")
	if err != nil || n != len("the value secret-value\n") || buf.String() != "the value [redacted A_TOKEN]\n" {
		t.Fatalf("%d %v %q", n, err, buf.String())
	}
	// The destination stays reachable: the CLI asks it whether it is a
	// terminal.
	if u, ok := w.(interface{ Unwrap() io.Writer }); !ok || u.Unwrap() != io.Writer(&buf) {
		t.Fatal("the redacting writer does not unwrap to its destination")
	}
}
