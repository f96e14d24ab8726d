package gitstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// BenchmarkCommitIgnored commits a change of 10,000 new files in 100
// directories, half of them ignored (by the root .gitignore and by one in
// every other directory):
//
//	go test ./nodes -run '^$' -bench CommitIgnored -benchtime 5x
//
// "commit" is the whole commit (matching, blobs, trees); "match/git" the
// check-ignore step alone; "match/go-git" go-git's matcher on the same
// paths and rules, the alternative that was measured and not taken.
func BenchmarkCommitIgnored(b *testing.B) {
	base := map[string]string{".gitignore": "gen_*.go\n", "main.go": "package main\n"}
	for d := 0; d < 100; d += 2 {
		base[fmt.Sprintf("d%02d/.gitignore", d)] = "*.o\n!keep.o\n"
	}
	f := newIgnoreFixture(b, base, nil, func(dir string) {
		files := map[string]string{}
		for d := 0; d < 100; d++ {
			for i := 0; i < 50; i++ {
				files[fmt.Sprintf("d%02d/f%03d.go", d, i)] = fmt.Sprintf("package d\n// %d %d\n", d, i)
				ignored := fmt.Sprintf("d%02d/gen_%03d.go", d, i)
				if d%2 == 0 && i%2 == 0 {
					ignored = fmt.Sprintf("d%02d/obj%03d.o", d, i)
				}
				files[ignored] = "generated\n"
			}
		}
		write(b, dir, files)
	})
	p := f.p
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0).UTC()}
	b.Run("commit", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := p.CommitChange(p.Base(), f.changes, "bench\n", sig)
			if err != nil || len(c.Ignored) != 5000 {
				b.Fatalf("%v, %d ignored", err, len(c.Ignored))
			}
		}
	})
	b.Run("match/git", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ignored, err := p.Promoted(f.changes); err != nil || len(ignored) != 5000 {
				b.Fatalf("%v, %d ignored", err, len(ignored))
			}
		}
	})
	b.Run("match/go-git", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var ps []gitignore.Pattern
			for name, text := range base {
				if !strings.HasSuffix(name, ".gitignore") {
					continue
				}
				var domain []string
				if dir, _, ok := strings.Cut(name, "/"); ok {
					domain = []string{dir}
				}
				for _, line := range strings.Split(text, "\n") {
					if line != "" {
						ps = append(ps, gitignore.ParsePattern(line, domain))
					}
				}
			}
			m := gitignore.NewMatcher(ps)
			n := 0
			for _, c := range f.changes {
				if m.Match(strings.Split(c.Path, "/"), false) {
					n++
				}
			}
			if n != 5000 {
				b.Fatalf("%d ignored", n)
			}
		}
	})
}
