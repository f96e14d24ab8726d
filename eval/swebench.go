package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// SWE-bench import: each instance becomes a task on a local clone of its
// repository. The instance's test_patch is applied at import, in a scratch
// directory holding only the files it touches at the base commit, and
// the patched test files become the task's hidden directory: at grading
// they replace whatever the change did to those paths, as SWE-bench
// reverts test files before applying its test patch.

type sweInstance struct {
	InstanceID       string          `json:"instance_id"`
	Repo             string          `json:"repo"`
	BaseCommit       string          `json:"base_commit"`
	ProblemStatement string          `json:"problem_statement"`
	FailToPass       json.RawMessage `json:"FAIL_TO_PASS"`
	PassToPass       json.RawMessage `json:"PASS_TO_PASS"`
	TestPatch        string          `json:"test_patch"`
}

// Skipped is an instance the import left out, and why.
type Skipped struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// ImportResult is what ImportSWEBench wrote.
type ImportResult struct {
	File     string
	Imported int
	Skipped  []Skipped
}

type importedTask struct {
	ID         string            `yaml:"id"`
	Repo       string            `yaml:"repo"`
	Commit     string            `yaml:"commit"`
	Inputs     map[string]string `yaml:"inputs"`
	Hidden     string            `yaml:"hidden"`
	FailToPass []string          `yaml:"fail_to_pass"`
	PassToPass []string          `yaml:"pass_to_pass,omitempty"`
}

// ImportSWEBench converts the instances of a JSONL file whose Go
// repositories are under reposDir into outDir/tasks.yaml and
// outDir/hidden/<id>/.
func ImportSWEBench(file, reposDir, outDir string) (*ImportResult, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := os.MkdirAll(filepath.Join(outDir, "hidden"), 0o755); err != nil {
		return nil, err
	}
	res := &ImportResult{File: filepath.Join(outDir, "tasks.yaml")}
	var tasks []importedTask
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var in sweInstance
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			res.Skipped = append(res.Skipped, Skipped{ID: fmt.Sprintf("%s:%d", file, line), Reason: err.Error()})
			continue
		}
		t, why := importOne(&in, reposDir, outDir)
		if why != "" {
			res.Skipped = append(res.Skipped, Skipped{ID: in.InstanceID, Reason: why})
			continue
		}
		tasks = append(tasks, *t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	b, err := yaml.Marshal(map[string]any{"tasks": tasks})
	if err != nil {
		return nil, err
	}
	res.Imported = len(tasks)
	return res, os.WriteFile(res.File, append([]byte("# imported from "+file+" by sandgate eval import-swebench\n"), b...), 0o644)
}

var badID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// importOne converts one instance, or says why it cannot.
func importOne(in *sweInstance, reposDir, outDir string) (*importedTask, string) {
	ctx := context.Background()
	id := strings.Trim(badID.ReplaceAllString(in.InstanceID, "-"), "-._")
	if id == "" || in.BaseCommit == "" || strings.HasPrefix(in.BaseCommit, "-") {
		return nil, "no instance_id or base_commit"
	}
	repo := findRepo(reposDir, in.Repo)
	if repo == "" {
		return nil, fmt.Sprintf("repository %s is not available locally (want %s or %s)", in.Repo,
			filepath.Join(reposDir, strings.ReplaceAll(in.Repo, "/", "__")), filepath.Join(reposDir, filepath.Base(in.Repo)))
	}
	if _, err := git(ctx, repo, "cat-file", "-e", in.BaseCommit+"^{commit}"); err != nil {
		return nil, fmt.Sprintf("base commit %s is not in %s", in.BaseCommit, repo)
	}
	if _, err := git(ctx, repo, "cat-file", "-e", in.BaseCommit+":go.mod"); err != nil {
		return nil, "not a Go repository (no go.mod at the base commit)"
	}
	f2p, p2p := testList(in.FailToPass), testList(in.PassToPass)
	if len(f2p) == 0 {
		return nil, "FAIL_TO_PASS names no Go test"
	}
	hidden := filepath.Join(outDir, "hidden", id)
	if err := hiddenFromPatch(ctx, repo, in.BaseCommit, in.TestPatch, hidden); err != nil {
		return nil, "test_patch: " + err.Error()
	}
	rel, err := filepath.Rel(outDir, repo)
	if err != nil {
		rel, _ = filepath.Abs(repo)
	}
	return &importedTask{ID: id, Repo: rel, Commit: in.BaseCommit, Inputs: map[string]string{"task": in.ProblemStatement},
		Hidden: filepath.Join("hidden", id), FailToPass: f2p, PassToPass: p2p}, ""
}

func findRepo(dir, name string) string {
	for _, c := range []string{strings.ReplaceAll(name, "/", "__"), filepath.Base(name)} {
		p := filepath.Join(dir, c)
		if st, err := os.Stat(p); err == nil && st.IsDir() && c != "." && c != ".." {
			return p
		}
	}
	return ""
}

// testList reads a test list given as a JSON list or, as the dataset
// stores it, a JSON string holding one; names that are not Go test names
// are dropped.
func testList(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil || json.Unmarshal([]byte(s), &list) != nil {
			return nil
		}
	}
	var out []string
	for _, n := range list {
		if testPattern.MatchString(n) {
			out = append(out, n)
		}
	}
	return out
}

var patchPath = regexp.MustCompile(`(?m)^\+\+\+ b/(.+)$`)

// hiddenFromPatch applies the patch to the files it touches at base, in
// a scratch directory, and keeps the results in dst.
func hiddenFromPatch(ctx context.Context, repo, base, patch, dst string) error {
	var paths []string
	for _, m := range patchPath.FindAllStringSubmatch(patch, -1) {
		p := strings.TrimSpace(m[1])
		if strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../") {
			return fmt.Errorf("path %q leaves the repository", p)
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return fmt.Errorf("no file is added or changed")
	}
	scratch, err := os.MkdirTemp("", "sg-swe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	var existing []string
	for _, p := range paths {
		if _, err := git(ctx, repo, "cat-file", "-e", base+":"+p); err == nil {
			existing = append(existing, p)
		}
	}
	if len(existing) > 0 {
		gd, err := git(ctx, repo, "rev-parse", "--absolute-git-dir")
		if err != nil {
			return err
		}
		if err := archive(ctx, gd, base, scratch, existing...); err != nil {
			return err
		}
	}
	patchFile := filepath.Join(scratch, ".sg-test.patch")
	if err := os.WriteFile(patchFile, []byte(patch), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "git", "apply", "--whitespace=nowarn", patchFile)
	cmd.Dir = scratch
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git apply: %w: %s", err, strings.TrimSpace(string(out)))
	}
	_ = os.RemoveAll(dst)
	// Read through a root, and only regular files: a patch can add a
	// symlink to a host file, which must not become a held-out file.
	root, err := os.OpenRoot(scratch)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		fi, err := root.Lstat(filepath.FromSlash(p))
		if err != nil {
			continue // deleted by the patch
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("path %q: the patch makes it a symlink or special file, not a regular file", p)
		}
		b, err := root.ReadFile(filepath.FromSlash(p))
		if err != nil {
			return err
		}
		out := filepath.Join(dst, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
