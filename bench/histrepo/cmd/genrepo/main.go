// Command genrepo writes a large-history repository for benchmarks:
//
//	go run ./bench/histrepo/cmd/genrepo -files 5000 -commits 35000 -per 6 /tmp/big
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sandgate/sandgate/bench/histrepo"
)

func main() {
	var s histrepo.Spec
	flag.IntVar(&s.Files, "files", 5000, "files in the tree")
	flag.IntVar(&s.Commits, "commits", 35000, "commits after the first")
	flag.IntVar(&s.PerCommit, "per", 6, "files each commit changes")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: genrepo [-files N] [-commits N] [-per N] DIR")
		os.Exit(2)
	}
	t0 := time.Now()
	if err := histrepo.Generate(context.Background(), flag.Arg(0), s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: ~%d objects in %s\n", flag.Arg(0), s.Objects(), time.Since(t0).Round(time.Millisecond))
}
