package gocanary

import (
	"go/parser"
	"go/token"
	"testing"
)

// TestHasBuildLine: both constraint syntaxes count before the package
// clause (go obeys a // +build line in a file without //go:build), none
// after it.
func TestHasBuildLine(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"package p\n", false},
		{"//go:build linux\n\npackage p\n", true},
		{"// +build !integration\n\npackage p\n", true},
		{"//go:build a\n// +build a\n\npackage p\n", true},
		{"// Copyright\n\n//go:build a\n\npackage p\n", true},
		{"// Package p does things.\npackage p\n", false},
		{"package p\n\n//go:build a\n", false},
		{"// +building things\n\npackage p\n", false},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", c.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := HasBuildLine(f); got != c.want {
			t.Errorf("%q: %v, want %v", c.src, got, c.want)
		}
	}
}
