// Package pause is the wait that polling and retry loops take between
// tries: a time, cut short when the context ends (the run's kill switch,
// a node's timeout), so that no loop outlives what it works for.
package pause
