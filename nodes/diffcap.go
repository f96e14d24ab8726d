package nodes

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// DiffCap fails when the change against the base commit is too large.
type DiffCap struct {
	maxLines, maxFiles int
	exclude            []string
}

var _ runtime.Node = (*DiffCap)(nil)

func newDiffCap(spec *blueprint.Node) (runtime.Node, error) {
	d := &DiffCap{}
	d.maxLines, _ = spec.Config["max_lines"].(int)
	d.maxFiles, _ = spec.Config["max_files"].(int)
	d.exclude, _ = spec.Config["exclude"].([]string)
	return d, nil
}

// matchGlob matches slash paths against a glob; "**/" matches any
// directory prefix and a pattern without a slash matches the base name.
func matchGlob(pattern, p string) bool {
	if strings.HasPrefix(pattern, "**/") {
		rest := strings.TrimPrefix(pattern, "**/")
		for s := p; ; {
			if ok, _ := path.Match(rest, s); ok {
				return true
			}
			i := strings.IndexByte(s, '/')
			if i < 0 {
				return false
			}
			s = s[i+1:]
		}
	}
	if strings.HasSuffix(pattern, "/**") {
		return strings.HasPrefix(p, strings.TrimSuffix(pattern, "**"))
	}
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(p))
		return ok
	}
	ok, _ := path.Match(pattern, p)
	return ok
}

func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if matchGlob(pat, p) {
			return true
		}
	}
	return false
}

type fileSize struct {
	name     string
	add, del int
	lines    int
}

// Run implements runtime.Node.
func (d *DiffCap) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, fp, start, err := beginGate(in)
	if err != nil {
		return nil, err
	}
	p, c, err := w.candidate()
	if err != nil {
		return nil, err
	}
	patch, err := p.base.PatchContext(ctx, c)
	if err != nil {
		return nil, err
	}
	var files []fileSize
	added, deleted := 0, 0
	for _, s := range patch.Stats() {
		if matchAny(d.exclude, s.Name) {
			continue
		}
		files = append(files, fileSize{s.Name, s.Addition, s.Deletion, s.Addition + s.Deletion})
		added, deleted = added+s.Addition, deleted+s.Deletion
	}
	lines := added + deleted
	res := &runtime.Result{Outputs: map[string]any{"lines": lines, "added": added, "deleted": deleted, "files": len(files)}}
	var over []string
	if d.maxLines > 0 && lines > d.maxLines {
		over = append(over, fmt.Sprintf("%d changed lines, cap %d", lines, d.maxLines))
	}
	if d.maxFiles > 0 && len(files) > d.maxFiles {
		over = append(over, fmt.Sprintf("%d changed files, cap %d", len(files), d.maxFiles))
	}
	g := GateResult{Pass: len(over) == 0}
	if !g.Pass {
		g.Reason = strings.Join(over, "; ")
		sort.Slice(files, func(i, j int) bool { return files[i].lines > files[j].lines })
		var b strings.Builder
		fmt.Fprintf(&b, "The change is too large: %s (%d added, %d deleted). Make a smaller change: edit only what the task needs, prefer exact small edits to rewriting files.\nLargest files:\n", g.Reason, added, deleted)
		for i, f := range files {
			if i == 5 {
				break
			}
			fmt.Fprintf(&b, "  %s: +%d -%d\n", f.name, f.add, f.del)
		}
		res.Feedback = b.String()
	}
	return gate(in, w, "diff", fp, start, g, res)
}
