package blueprint

import "fmt"

// closest returns the candidate nearest to s by edit distance, or "" when
// none is near enough to be a plausible typo.
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := levenshtein(s, c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := len(s)/3 + 1
	if limit > 3 {
		limit = 3
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// didYouMean formats a suggestion suffix, or "" when there is none.
func didYouMean(s string, candidates []string) string {
	if c := closest(s, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// DidYouMean returns " (did you mean \"x\"?)" for the candidate closest
// to s, or "" when none is a plausible typo; callers outside the package
// use it for names a person typed (a node id on the command line).
func DidYouMean(s string, candidates []string) string { return didYouMean(s, candidates) }
