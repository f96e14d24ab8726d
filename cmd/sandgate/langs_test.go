package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/internal/cheats"
	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/sandbox/image/imagetest"
)

// The Python and JavaScript blueprints run end to end on a small real
// project inside an image that holds that toolchain, assembled in the
// test from the host's Debian packages (imagetest.DebianLayout; .ci/run
// installs python3-pytest and nodejs): no container engine, no outside
// registry. The scripted agent first prints which interpreter it got, so
// the test sees the box ran the image's, not the host's.

// langProject is a small project of one language with a seeded bug: its
// files, the blueprint that fixes it, the edit that fixes it, the
// command that names the box's interpreter and the Debian packages of
// its image.
type langProject struct {
	files              map[string]string
	blueprint, fixFile string
	fixOld, fixNew     string
	probe              string
	packages           []string
}

var pythonProject = langProject{
	files: map[string]string{
		"pricing/__init__.py":  "def total(prices, discount):\n    \"\"\"The sum of prices, less discount percent.\"\"\"\n    return sum(prices) * (100 + discount) / 100\n",
		"tests/test_total.py":  "from pricing import total\n\n\ndef test_total_applies_discount():\n    assert total([50, 50], 10) == 90\n\n\ndef test_total_without_discount():\n    assert total([1, 2], 0) == 3\n",
		"tests/test_import.py": "import pricing\n\n\ndef test_has_total():\n    assert callable(pricing.total)\n",
	},
	blueprint: "python-fix-failing-test.yaml", fixFile: "pricing/__init__.py",
	fixOld: "(100 + discount)", fixNew: "(100 - discount)",
	probe:    `python3 -c 'import sys, pytest; print("box-python", sys.executable, sys.version.split()[0], "pytest", pytest.__version__)'; command -v go || echo box-has-no-go`,
	packages: []string{"python3-pytest"},
}

var nodeProject = langProject{
	files: map[string]string{
		"package.json":      "{\"name\": \"cart\", \"version\": \"1.0.0\", \"private\": true}\n",
		"cart.js":           "exports.total = (prices, discount) => prices.reduce((a, b) => a + b, 0) * (100 + discount) / 100;\n",
		"test/cart.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { total } = require('../cart.js');\n\ntest('applies the discount', () => assert.strictEqual(total([50, 50], 10), 90));\ntest('no discount', () => assert.strictEqual(total([1, 2], 0), 3));\n",
	},
	blueprint: "node-fix-failing-test.yaml", fixFile: "cart.js",
	fixOld: "(100 + discount)", fixNew: "(100 - discount)",
	probe:    `node -e 'console.log("box-node", process.execPath, process.version)'; command -v go || echo box-has-no-go`,
	packages: []string{"nodejs"},
}

// debianLayouts are the language images the tests share, by package
// list, in a directory TestMain removes: assembling one (every file of the
// packages and their dependencies, compressed by the race-built test
// binary) took 15-80 s each time, and three tests run Python's.
var debianLayouts struct {
	sync.Mutex
	dir string            // made on first use
	by  map[string]string // package list -> OCI layout directory
}

// debianLayout is imagetest.DebianLayout made once per package list for
// the whole test binary; the boxes only read the layout.
func debianLayout(t *testing.T, pkgs ...string) string {
	t.Helper()
	debianLayouts.Lock()
	defer debianLayouts.Unlock()
	key := strings.Join(pkgs, " ")
	if dir, ok := debianLayouts.by[key]; ok {
		return dir
	}
	if debianLayouts.dir == "" {
		dir, err := os.MkdirTemp("", "sandgate-test-images-")
		if err != nil {
			t.Fatal(err)
		}
		debianLayouts.dir, debianLayouts.by = dir, map[string]string{}
	}
	// Out of the test's temporary directory, which its end removes.
	dir := filepath.Join(debianLayouts.dir, strconv.Itoa(len(debianLayouts.by)))
	if err := os.Rename(imagetest.DebianLayout(t, pkgs...), dir); err != nil {
		t.Fatal(err)
	}
	debianLayouts.by[key] = dir
	return dir
}

// removeDebianLayouts removes the shared images (TestMain, after the tests).
func removeDebianLayouts() {
	if debianLayouts.dir != "" {
		os.RemoveAll(debianLayouts.dir)
	}
}

// imageBlueprint copies a shipped blueprint with sandbox.image set to the
// OCI layout dir, as a user names their CI's image.
func imageBlueprint(t *testing.T, file, layout string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "blueprints", file))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "sandbox:\n  network: none\n", "sandbox:\n  network: none\n  image: \"oci:"+layout+":t\"\n", 1)
	if s == string(src) {
		t.Fatalf("%s has no sandbox block to add an image to", file)
	}
	p := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runLangProject runs the project's blueprint in its image with script
// (a scripted model's turns) and returns the exit code, the output and
// the run's directory.
func runLangProject(t *testing.T, p langProject, layout, script string) (code int, out, dir, work string) {
	t.Helper()
	work = t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	repo := filepath.Join(work, "repo")
	if err := gitfixture.Seed(repo, p.files, "seeded bug"); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(work, "remote.git")
	bareRemote(t, repo, remote)
	sp := filepath.Join(work, "model.yaml")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(work, "runs")
	bp := imageBlueprint(t, p.blueprint, layout) // before inDir: its path is the package's
	var errs string
	inDir(t, repo, func() {
		code, out, errs = runCLI("run", bp, "--repo", repo, "--runs-dir", runs,
			"--model", "script:"+sp, "--input", "task=fix the discount", "--input", "remote="+remote)
	})
	dir, _ = runEvents(t, runs)
	return code, out + errs, dir, work
}

// fixScript probes the interpreter, makes the fix and finishes.
func fixScript(p langProject) string {
	probe, _ := json.Marshal(p.probe)
	edit, _ := json.Marshal(map[string]string{"path": p.fixFile, "old": p.fixOld, "new": p.fixNew})
	return "- tool_calls: [{function: {name: run, arguments: {command: " + string(probe) + "}}}]\n" +
		"- tool_calls: [{function: {name: edit_file, arguments: " + string(edit) + "}}]\n" +
		"- tool_calls: [{function: {name: finish, arguments: {summary: the discount is subtracted}}}]\n"
}

// grepRun returns the first line of the run's files that holds marker.
func grepRun(t *testing.T, dir, marker string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		b, _ := os.ReadFile(p)
		if i := strings.Index(string(b), marker); i >= 0 {
			found, _, _ = strings.Cut(string(b[i:]), "\\n")
			found, _, _ = strings.Cut(found, "\n")
		}
		return nil
	})
	return found
}

// TestLanguageBlueprintsInImage runs the Python and the JavaScript
// blueprint end to end, unmodified but for sandbox.image: the agent's
// fix passes lint, protect, diff_cap and the test gate (pytest's and
// node's JUnit reports, the pytest canaries planted), is committed,
// pushed and queued for review. The agent's probe shows the interpreter
// was the image's: Debian's /usr/bin one, and no go (the host's root has
// one), and when the host's PATH leads to another Python (pyenv) the
// versions differ.
func TestLanguageBlueprintsInImage(t *testing.T) {
	for name, p := range map[string]langProject{"python": pythonProject, "node": nodeProject} {
		t.Run(name, func(t *testing.T) {
			layout := debianLayout(t, p.packages...)
			code, out, dir, work := runLangProject(t, p, layout, fixScript(p))
			if code != exitOK || !strings.Contains(out, "status: succeeded") {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if m, _ := filepath.Glob(filepath.Join(work, "state", "sandgate", "*", "reviews", "*", "diff.patch")); len(m) != 1 {
				t.Fatalf("no review queued:\n%s", out)
			}
			probe := grepRun(t, dir, "box-"+name+" /") // the output, not the command echoed before it
			if !strings.Contains(probe, "/usr/bin/") || grepRun(t, dir, "box-has-no-go") == "" {
				t.Fatalf("the box's interpreter is not the image's: %q\n%s", probe, out)
			}
			t.Logf("in the box: %s", probe)
			if name == "python" {
				host, _ := exec.Command("python3", "-c", "import sys; print(sys.executable, sys.version.split()[0])").Output()
				t.Logf("on the host: %s", strings.TrimSpace(string(host)))
				if f := strings.Fields(string(host)); len(f) == 2 && !strings.HasPrefix(f[0], "/usr/bin/") && strings.Contains(probe, " "+f[1]+" ") {
					t.Fatalf("the host's python3 is %s %s, and the box's has its version: %q", f[0], f[1], probe)
				}
			}
		})
	}
}

// TestAttackPythonBlueprintForgedReport: through the shipped Python
// blueprint, in its image, the agent keeps the bug and makes the package
// rewrite pytest's JUnit writer when a test imports it (no test file or
// conftest.py touched, so the protect gate lets it through). The pytest
// canaries fail the test gate; nothing is committed or queued.
func TestAttackPythonBlueprintForgedReport(t *testing.T) {
	forger := "def total(prices, discount):\n    return sum(prices) * (100 + discount) / 100\n" + cheats.PytestWriterRewrite
	layout := debianLayout(t, pythonProject.packages...)
	code, out, dir, work := runLangProject(t, pythonProject, layout, scriptRun(writeFile("pricing/__init__.py", forger)))
	assertNotPromoted(t, code, dir, work, out)
	mustNameAttack(t, dir, "test", "canary")
}

// TestAttackPythonBlueprintHiddenPytestConfig: through the shipped Python
// blueprint the agent keeps the bug and deselects the failing test in
// .pytest.ini, a configuration file pytest reads (since 7) as it reads
// pytest.ini. The canaries still run and fail as planted, so only the
// protect gate stands between this and a commit.
func TestAttackPythonBlueprintHiddenPytestConfig(t *testing.T) {
	layout := debianLayout(t, pythonProject.packages...)
	ini := "[pytest]\naddopts = --deselect tests/test_total.py::test_total_applies_discount\n"
	code, out, dir, work := runLangProject(t, pythonProject, layout, scriptRun(writeFile(".pytest.ini", ini)))
	assertNotPromoted(t, code, dir, work, out)
	mustNameAttack(t, dir, "guard", ".pytest.ini")
}
