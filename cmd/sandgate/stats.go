package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/internal/termtext"
)

const statsHelp = `[--since 7d] [--blueprint NAME] [--runs-dir DIR]... [--format text|json]

Aggregates the runs of one or more runs directories (default: the current
repository's): success, hand-off and failure rates of finished runs,
median and p90 duration, cost per succeeded run (all runs' cost over the
succeeded ones), the top hand-off reasons (numbers folded to N), the nodes
that failed most and the tests the test gate found flaky.

flags:`

func cmdStats(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("stats", statsHelp, stdout, stderr)
	var runs listFlag
	fs.Var(&runs, "runs-dir", "runs directory (repeatable; default: the current repository's)")
	fs.alias("runs", "runs-dir")
	since := fs.String("since", "", "only runs started within this long ago: 7d, 12h, 90m")
	bp := fs.String("blueprint", "", "only runs of this blueprint: its name, as sandgate runs and the inbox show it")
	format := fs.format("text", "json", "table")
	top := fs.Int("top", 5, "entries in each ranked list")
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	q := index.StatsQuery{Blueprint: *bp, Top: *top}
	if *since != "" {
		d, err := parseSince(*since)
		if err != nil {
			fmt.Fprintln(stderr, "sandgate stats: --since:", err)
			return exitUsage
		}
		q.Since = time.Now().Add(-d)
	}
	if len(runs) == 0 {
		runs = listFlag{defaultRunsDir(".")}
	}
	ix := index.NewIndex(runs...)
	st := index.ComputeStats(ix.Runs(), q)
	if *format == "json" {
		b, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintln(stdout, string(termtext.JSON(b)))
		return exitOK
	}
	writeStats(stdout, st)
	return exitOK
}

// parseSince reads a duration that may be in days (7d).
func parseSince(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (7d, 12h, 90m)", s)
	}
	return d, nil
}

// writeStats prints the aggregate as aligned tables.
func writeStats(w io.Writer, s *index.Stats) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	pct := func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
	fmt.Fprintf(tw, "RUNS\tFINISHED\tRUNNING\tSUCCEEDED\tHANDED OFF\tFAILED\tCANCELED\n")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%d (%s)\t%d (%s)\t%d (%s)\t%d\n", s.Runs, s.Finished, s.Running,
		s.Succeeded, pct(s.SuccessRate), s.HandedOff, pct(s.HandoffRate), s.Failed, pct(s.FailureRate), s.Canceled)
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(tw, "MEDIAN DURATION\tP90 DURATION\tTOKENS\tCOST\tCOST PER SUCCEEDED RUN\n")
	fmt.Fprintf(tw, "%s\t%s\t%d\t$%.4f\t$%.4f\n", ms(s.MedianMS), ms(s.P90MS), s.Tokens, s.Cost, s.CostPerSuccess)
	tw.Flush()
	for _, t := range []struct {
		head string
		list []index.Count
	}{{"TOP HAND-OFF REASONS", s.HandoffReasons}, {"NODES THAT FAILED MOST", s.FailingNodes}, {"FLAKY TESTS", s.Flaky}} {
		fmt.Fprintf(w, "\n")
		fmt.Fprintf(tw, "%s\tCOUNT\n", t.head)
		if len(t.list) == 0 {
			fmt.Fprintf(tw, "(none)\t\n")
		}
		for _, c := range t.list {
			fmt.Fprintf(tw, "%s\t%d\n", termtext.Short(c.Name, maxReason), c.Count)
		}
		tw.Flush()
	}
}

func ms(v int64) string { return (time.Duration(v) * time.Millisecond).String() }
