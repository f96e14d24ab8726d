package secrets

import "strings"

// replaceForms masks the union of every occurrence of every form in s,
// overlapping ones included: occurrences that share a byte merge into one
// run, replaced by the marker of the run's first occurrence (of those
// that start there, the longest; of equals, the first form). Where no two
// occurrences overlap, or one only contains another, this is what
// replacing each occurrence from left to right, longest first, gives.
// The occurrences are merged as they are found, each form's next one at
// a time, so memory does not grow with their number (a command that
// prints a credential it was given over and over).
func (st *state) replaceForms(s string) string {
	o := occurrences{s: s, forms: st.forms, next: make([]int, len(st.forms))}
	for k := range st.forms {
		o.find(k, 0)
	}
	k := o.first()
	if k < 0 {
		return s
	}
	var b strings.Builder
	at := 0
	start, end, marker := o.next[k], o.next[k]+len(st.forms[k].text), st.forms[k].marker
	o.find(k, start+1)
	for {
		k = o.first()
		if k >= 0 && o.next[k] < end {
			end = max(end, o.next[k]+len(st.forms[k].text))
			o.find(k, o.next[k]+1)
			continue
		}
		b.WriteString(s[at:start])
		b.WriteString(marker)
		at = end
		if k < 0 {
			break
		}
		start, end, marker = o.next[k], o.next[k]+len(st.forms[k].text), st.forms[k].marker
		o.find(k, start+1)
	}
	b.WriteString(s[at:])
	return b.String()
}

// occurrences walks each form's occurrences in s in order.
type occurrences struct {
	s     string
	forms []form
	next  []int // where each form occurs next, -1 when no more
}

// find sets form k's next occurrence to the first at or after from.
func (o *occurrences) find(k, from int) {
	t := o.forms[k].text
	o.next[k] = -1
	if from+len(t) <= len(o.s) {
		if j := strings.Index(o.s[from:], t); j >= 0 {
			o.next[k] = from + j
		}
	}
}

// first is the form whose next occurrence starts first (the longest of
// those starting there, the first form of equals), or -1.
func (o *occurrences) first() int {
	best := -1
	for k, n := range o.next {
		if n < 0 {
			continue
		}
		if best < 0 || n < o.next[best] || n == o.next[best] && len(o.forms[k].text) > len(o.forms[best].text) {
			best = k
		}
	}
	return best
}
