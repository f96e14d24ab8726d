//go:build !race

package runtimetest_test

const raceEnabled = false
