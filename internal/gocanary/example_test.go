package gocanary_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/sandgate/sandgate/internal/gocanary"
)

// Which packages a change to a/a.go reaches: a itself and b, which
// imports it; c is untouched and keeps go test's cache.
func ExampleAffected() {
	dir, err := os.MkdirTemp("", "gocanary-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for name, src := range map[string]string{
		"go.mod": "module example.com/m\n",
		"a/a.go": "package a\n",
		"b/b.go": "package b\n\nimport _ \"example.com/m/a\"\n",
		"c/c.go": "package c\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)
	}
	dirs, all := gocanary.Affected(gocanary.DirTree(dir), []string{"a/a.go"})
	fmt.Println(slices.Sorted(maps.Keys(dirs)), all)
	// Output: [a b] false
}
