// Package crossbuild holds one test: the whole module builds for macOS
// and Windows. It has no code of its own. The test lives here, not in
// cmd/sandgate, because its cold cross builds take minutes of their own
// (11 on a loaded 2-core machine): as a package of its own they run in
// a go test slot beside cmd/sandgate's tests instead of inside that
// package's 30-minute timeout.
package crossbuild
