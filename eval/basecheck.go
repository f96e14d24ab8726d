package eval

import (
	"context"
	"strings"
	"sync"
)

// baseGrades remembers, for one evaluation, each base's grading: tasks
// of a set often share a repository, its base tree, its held-out tests
// and their names (the shipped set: ten tasks on calc), and the base
// grades the same for each. A grading is a box and a sealed go test of
// the held-out tests (seconds of compiling); the second task of a base
// takes the first one's result. A grading that errs is not kept.
type baseGrades struct {
	mu   sync.Mutex
	byID map[string]*baseGrade
}

type baseGrade struct {
	mu  sync.Mutex // held while the base is graded, so a twin waits
	out *graded
}

// get returns key's grading, running grade when none is kept.
func (b *baseGrades) get(key string, grade func() (*graded, error)) (*graded, error) {
	b.mu.Lock()
	if b.byID == nil {
		b.byID = map[string]*baseGrade{}
	}
	g := b.byID[key]
	if g == nil {
		g = &baseGrade{}
		b.byID[key] = g
	}
	b.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.out != nil {
		return g.out, nil
	}
	out, err := grade()
	if err == nil {
		g.out = out
	}
	return out, err
}

// baseKey names what a base's grading depends on: the base's tree, the
// held-out files and the declared tests (the grader's policy is the
// evaluation's own).
func baseKey(ctx context.Context, gitDir, base, hidden string, names []string) (string, error) {
	tree, err := git(ctx, gitDir, "rev-parse", "--verify", "--end-of-options", base+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.Join(append([]string{tree, hidden}, names...), "\x00"), nil
}
