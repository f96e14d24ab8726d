// Package cliflag holds flag.Value types that more than one of the
// project's commands take (sandgate and sandgate-temporal), so that a
// flag means the same in each.
package cliflag
