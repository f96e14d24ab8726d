package termtext_test

import (
	"fmt"

	"github.com/sandgate/sandgate/internal/termtext"
)

func Example() {
	reason := "stuck\x1b[2K\rverdict: every gate passed"
	fmt.Println("reason:", termtext.Line(reason))
	fmt.Println("file:", termtext.Name("notes\x1b[1A.txt"))
	// Output:
	// reason: stuck\x1b[2K\rverdict: every gate passed
	// file: "notes\033[1A.txt"
}
