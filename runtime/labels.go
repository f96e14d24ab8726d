package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Labels are names and values a person gives a run to find it by later
// (`sandgate run --label team=infra`): kept in meta.json and run.json,
// shown and filtered on by the inbox. They are the starter's words,
// never read by nodes.
//
// A name is 1–63 letters, digits, '.', '_', '-' or '/', starting with a
// letter or digit; a value is at most 200 printable characters (no
// control characters, so no line breaks or terminal escapes); a run has
// at most 32 labels.
type Labels map[string]string

const (
	maxLabels     = 32
	maxLabelName  = 63
	maxLabelValue = 200
)

// CheckLabels reports every label that breaks the rules above, in name
// order.
func CheckLabels(l map[string]string) error {
	var errs []error
	if len(l) > maxLabels {
		errs = append(errs, fmt.Errorf("labels: %d given, at most %d", len(l), maxLabels))
	}
	names := make([]string, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !validLabelName(k) {
			errs = append(errs, fmt.Errorf("label %q: a name is 1-%d letters, digits, '.', '_', '-' or '/', starting with a letter or digit", k, maxLabelName))
			continue
		}
		v := l[k]
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > maxLabelValue || strings.IndexFunc(v, badInValue) >= 0 {
			errs = append(errs, fmt.Errorf("label %s: a value is at most %d characters, none a space or a control character", k, maxLabelValue))
		}
	}
	return errors.Join(errs...)
}

func validLabelName(k string) bool {
	if k == "" || len(k) > maxLabelName {
		return false
	}
	for i, c := range k {
		alnum := c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c))
		if !alnum && (i == 0 || !strings.ContainsRune("._-/", c)) {
			return false
		}
	}
	return true
}

// ParseLabel reads one NAME=VALUE label, as `--label` takes it.
func ParseLabel(s string) (name, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("label %q: want NAME=VALUE", s)
	}
	return k, v, CheckLabels(map[string]string{k: v})
}

func badInValue(c rune) bool { return unicode.IsControl(c) || unicode.IsSpace(c) }

// String and Set make Labels a flag.Value for a repeated `--label
// NAME=VALUE`, each label checked as given (sandgate run,
// sandgate-temporal run).
func (l Labels) String() string { return fmt.Sprint(map[string]string(l)) }

// Set adds one NAME=VALUE label (ParseLabel).
func (l Labels) Set(s string) error {
	k, v, err := ParseLabel(s)
	if err != nil {
		return err
	}
	l[k] = v
	return nil
}
