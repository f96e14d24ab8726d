// Package secrets is the harness's credentials policy in one small place:
// which environment variable names hold credentials, and a redactor that
// removes their values from everything the harness writes.
//
// It imports nothing of sandgate's, so the blueprint validator, the runtime,
// the nodes and the CLI can all share it without bending import direction.
package secrets

import (
	"strings"
)

// exactParts are word parts that mark a credential only when they are the
// whole part: "KEY" in GPG_KEY or API_KEY, but not MONKEY or KEYBOARD.
var exactParts = map[string]bool{
	"KEY": true, "KEYS": true, "PASS": true, "PAT": true,
	"APIKEY": true, "ACCESSKEY": true, "PRIVATEKEY": true, "SECRETKEY": true, "AUTHKEY": true,
}

// suffixParts mark a credential when a word part ends with them, so
// GHTOKEN and PGPASSWORD count. None of them ends an ordinary English word
// used in variable names, unlike KEY (MONKEY, TURKEY).
var suffixParts = []string{"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"}

// IsCredentialName reports whether an environment variable name looks like
// it holds a credential. The name is split into word parts at every
// character that is not a letter or digit (GITHUB_TOKEN → GITHUB, TOKEN) and
// compared case-insensitively:
//
//   - a part ending in TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL(S)
//     marks a credential (FOO_TOKEN, GHTOKEN, AWS_SECRET_ACCESS_KEY,
//     PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS);
//   - KEY, KEYS, PASS and PAT mark one only as a whole part (OPENAI_API_KEY,
//     DB_PASS), as do APIKEY, ACCESSKEY, PRIVATEKEY, SECRETKEY and AUTHKEY.
//
// So MONKEY, KEYBOARD_LAYOUT, TOKENIZERS_PARALLELISM and PASSAGE are not
// credentials. Some harmless names are (GPG_KEY_ID, SORT_KEY): the operator
// passes those with --allow-env. Erring this way keeps a real credential
// from slipping into the box under an unusual name.
func IsCredentialName(name string) bool {
	for _, part := range strings.FieldsFunc(strings.ToUpper(name), notAlnum) {
		if exactParts[part] {
			return true
		}
		for _, s := range suffixParts {
			if strings.HasSuffix(part, s) {
				return true
			}
		}
	}
	return false
}

func notAlnum(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

// EndpointAllowed reports whether url is one of the endpoints the operator
// allowed. URLs compare exactly, ignoring trailing slashes: an operator who
// allows https://llm.internal/v1 has not allowed https://llm.internal/v1evil
// or http://llm.internal/v1.
func EndpointAllowed(url string, allowed []string) bool {
	u := strings.TrimRight(url, "/")
	if u == "" {
		return false
	}
	for _, a := range allowed {
		if strings.TrimRight(a, "/") == u {
			return true
		}
	}
	return false
}
