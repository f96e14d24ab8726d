// Package find is the runs list's query: what a person asked for (words,
// status, blueprint, a date range, a sort column and a page), parsed from
// and written back to the URL so a view can be shared, and the paging
// arithmetic. It knows nothing of runs: the inbox matches its runs against
// a Query, with Match over each run's precomputed search text.
package find
