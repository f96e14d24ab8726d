//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"

	"github.com/sandgate/sandgate/sandbox"
)

func ExampleStart() {
	ws, _ := os.MkdirTemp("", "ws-")
	state, _ := os.MkdirTemp("", "state-")
	defer os.RemoveAll(ws)
	defer os.RemoveAll(state)
	box, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: ws, StateDir: state})
	if err != nil {
		fmt.Println("no sandbox here:", err) // fail closed: nothing ran
		return
	}
	defer box.Close() // the kill switch
	res, err := box.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "echo hello from $(hostname) in $PWD"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Output))
	// Output: hello from sandbox in /work
}
