// Package imagetest builds, in a test, what a box image test needs: a
// static program that is not the host's, for tests of sandbox.image in
// the sandbox and in the nodes.
package imagetest

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// toolSrc is the program the test image holds: `--version` names the
// image; `probe` tries what a command in the box must not be able to do
// and prints one line per try.
const toolSrc = `package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("uname (sandgate test image) 9.9.9")
		return
	}
	for _, p := range os.Args[2:] {
		if _, err := os.ReadFile(p); err == nil {
			fmt.Println("read", p)
		}
		if _, err := os.Stat(p); err == nil {
			fmt.Println("exists", p)
		}
	}
	for _, p := range []string{"/usr/bin/planted", "/opt/imgbin/planted", "/planted"} {
		if err := os.WriteFile(p, []byte("x"), 0o755); err == nil {
			fmt.Println("wrote", p)
		}
	}
	if err := os.WriteFile("/work/ok", []byte("x"), 0o644); err == nil {
		fmt.Println("workspace writable")
	}
	fmt.Println("PATH=" + os.Getenv("PATH"))
}
`

// BuildTool compiles toolSrc as a static binary.
func BuildTool(t *testing.T) []byte { return BuildGo(t, toolSrc) }

// BuildGo compiles src, a one-file main package, as a static binary.
func BuildGo(t *testing.T, src string) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/imgtool\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "tool.bin"), ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build a program for the image: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tool.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ToolLayout writes an OCI layout (tag "t") of a linux image holding
// BuildTool's program as /opt/imgbin/imgtool and /usr/bin/uname, with
// PATH=/opt/imgbin:/usr/bin: `oci:DIR:t` for sandbox.image. The host
// has no imgtool, so a command that finds it ran in the image.
func ToolLayout(t *testing.T) string {
	t.Helper()
	tool := BuildTool(t)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"usr/", "usr/bin/", "opt/", "opt/imgbin/"} {
		must(t, tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}))
	}
	for _, f := range []string{"usr/bin/uname", "opt/imgbin/imgtool"} {
		must(t, tw.WriteHeader(&tar.Header{Name: f, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(tool))}))
		_, err := tw.Write(tool)
		must(t, err)
	}
	must(t, tw.Close())
	layer := buf.Bytes()
	return writeLayout(t, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer)), nil }, []string{"PATH=/opt/imgbin:/usr/bin"})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
