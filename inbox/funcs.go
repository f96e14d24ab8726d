package inbox

import (
	"fmt"
	"html/template"
	"path"
	"strings"
	"time"
)

var funcs = template.FuncMap{
	"ms":      fmtMS,
	"ago":     ago,
	"cost":    fmtCost,
	"base":    path.Base,
	"join":    strings.Join,
	"labels":  labelList,
	"slashes": breakAfterSlashes,
	"pct": func(n, d int) int {
		if d == 0 {
			return 0
		}
		return n * 100 / d
	},
	"deref": func(b *bool) bool { return b != nil && *b },
	"since": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return fmtMS(time.Since(t).Milliseconds())
	},
	"date": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format("2006-01-02")
	},
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
}

// breakAfterSlashes escapes s and lets a narrow table wrap it only after
// a "/" (a branch such as sandgate/billing-lint), not in the middle of a
// word; a segment too long for the cell still wraps (see code.path in
// style.css). Each part is escaped here because the result is trusted
// HTML.
func breakAfterSlashes(s string) template.HTML {
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = template.HTMLEscapeString(p)
	}
	return template.HTML(strings.Join(parts, "/<wbr>"))
}

func fmtMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func fmtCost(c *float64) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("$%.2f", *c)
}
