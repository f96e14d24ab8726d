package trigger

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is the trigger file: who may start which blueprint from where.
// It names the variables secrets are read from, never a secret.
type Config struct {
	// PublicURL is where people reach the inbox; replies link runs under
	// it.
	PublicURL string
	// MaxRuns caps the trigger-started runs alive at once (starting or
	// running); a trigger over it is refused. Default 4.
	MaxRuns int
	// StateDir holds the delivery ids seen; default: beside the runs
	// directory (the CLI fills it in).
	StateDir string
	GitHub   *GitHubConfig
	Slack    *SlackConfig
}

// GitHubConfig is the trigger file's github section.
type GitHubConfig struct {
	// SecretEnv names the variable holding the webhook secret.
	SecretEnv string
	// TokenEnv names the variable holding the token replies are posted
	// with (Issues: write).
	TokenEnv string
	// BaseURL is the REST API (default https://api.github.com).
	BaseURL string
	Repos   []RepoRule
}

// RepoRule is one repository that may start runs.
type RepoRule struct {
	// Name is owner/name as GitHub spells it.
	Name string
	// Path is the local clone the runs work on; empty: the server's.
	Path string
	// Label starts LabelBlueprint when an issue gets it.
	Label, LabelBlueprint string
	// IssueInput is the input the issue's title and body go to (default
	// "task"), for a label and for a comment that does not set it.
	IssueInput string
	// Blueprints a /sandgate comment may start (the label's is added).
	Blueprints []string
	// Users are the GitHub logins who may start runs here.
	Users []string
}

// SlackConfig is the trigger file's slack section.
type SlackConfig struct {
	// SigningSecretEnv names the variable holding the app's signing
	// secret.
	SigningSecretEnv string
	// ResponseURLPrefix is where response_url may point (default
	// https://hooks.slack.com/): the signed body names it, and nothing
	// else is posted to.
	ResponseURLPrefix string
	// Teams, Channels and Users allowed (ids); all three must allow.
	Teams, Channels, Users []string
	Blueprints             []string
}

// Rule returns the rule for repository full (owner/name), compared as
// GitHub does, case-insensitively.
func (g *GitHubConfig) Rule(full string) *RepoRule {
	for i := range g.Repos {
		if strings.EqualFold(g.Repos[i].Name, full) {
			return &g.Repos[i]
		}
	}
	return nil
}

// Allows reports whether login may start runs here (logins compare
// case-insensitively, as GitHub's do).
func (r *RepoRule) Allows(login string) bool {
	return slices.ContainsFunc(r.Users, func(u string) bool { return strings.EqualFold(u, login) })
}

// Startable reports whether a comment may start blueprint name here.
func (r *RepoRule) Startable(name string) bool {
	return name != "" && (name == r.LabelBlueprint || slices.Contains(r.Blueprints, name))
}

// Startables are the blueprints a comment may start here.
func (r *RepoRule) Startables() []string {
	out := slices.Clone(r.Blueprints)
	if r.LabelBlueprint != "" && !slices.Contains(out, r.LabelBlueprint) {
		out = append(out, r.LabelBlueprint)
	}
	return out
}

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	repoNameRE = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)
)

// Load reads a trigger file. Every problem is reported, each as
// file:line:col: field: problem. known reports whether a blueprint name
// can be started (nil: any).
func Load(path string, known func(string) bool) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src, known)
}

// Parse is Load for a file's contents.
func Parse(file string, src []byte, known func(string) bool) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d := &decoder{file: file, known: known}
	c := &Config{MaxRuns: 4}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1:1: the file is empty", file)
	}
	d.fields(doc.Content[0], "", map[string]func(*yaml.Node, string){
		"version":    func(n *yaml.Node, p string) { d.version(n, p) },
		"public_url": func(n *yaml.Node, p string) { c.PublicURL = strings.TrimRight(d.url(n, p), "/") },
		"max_runs":   func(n *yaml.Node, p string) { c.MaxRuns = d.count(n, p) },
		"state_dir":  func(n *yaml.Node, p string) { c.StateDir = d.str(n, p) },
		"github":     func(n *yaml.Node, p string) { c.GitHub = d.github(n, p) },
		"slack":      func(n *yaml.Node, p string) { c.Slack = d.slack(n, p) },
	}, "public_url")
	if c.GitHub == nil && c.Slack == nil && len(d.errs) == 0 {
		d.errorf(doc.Content[0], "", "neither github nor slack: nothing can start a run")
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return c, nil
}

func (d *decoder) github(n *yaml.Node, path string) *GitHubConfig {
	g := &GitHubConfig{BaseURL: "https://api.github.com"}
	d.fields(n, path, map[string]func(*yaml.Node, string){
		"secret_env": func(n *yaml.Node, p string) { g.SecretEnv = d.env(n, p) },
		"token_env":  func(n *yaml.Node, p string) { g.TokenEnv = d.env(n, p) },
		"base_url":   func(n *yaml.Node, p string) { g.BaseURL = d.url(n, p) },
		"repositories": func(n *yaml.Node, p string) {
			for i, item := range d.seq(n, p) {
				g.Repos = append(g.Repos, d.repo(item, fmt.Sprintf("%s[%d]", p, i)))
			}
		},
	}, "secret_env", "token_env", "repositories")
	return g
}

func (d *decoder) repo(n *yaml.Node, path string) RepoRule {
	r := RepoRule{IssueInput: "task"}
	d.fields(n, path, map[string]func(*yaml.Node, string){
		"name": func(n *yaml.Node, p string) {
			if r.Name = d.str(n, p); r.Name != "" && !repoNameRE.MatchString(r.Name) {
				d.errorf(n, p, "%q is not owner/name", r.Name)
			}
		},
		"path":            func(n *yaml.Node, p string) { r.Path = d.str(n, p) },
		"label":           func(n *yaml.Node, p string) { r.Label = d.str(n, p) },
		"label_blueprint": func(n *yaml.Node, p string) { r.LabelBlueprint = d.blueprint(n, p) },
		"issue_input":     func(n *yaml.Node, p string) { r.IssueInput = d.str(n, p) },
		"blueprints":      func(n *yaml.Node, p string) { r.Blueprints = d.blueprints(n, p) },
		"users":           func(n *yaml.Node, p string) { r.Users = d.strs(n, p) },
	}, "name", "users")
	if (r.Label == "") != (r.LabelBlueprint == "") {
		d.errorf(n, path, "label and label_blueprint go together")
	}
	return r
}

func (d *decoder) slack(n *yaml.Node, path string) *SlackConfig {
	s := &SlackConfig{ResponseURLPrefix: "https://hooks.slack.com/"}
	d.fields(n, path, map[string]func(*yaml.Node, string){
		"signing_secret_env":  func(n *yaml.Node, p string) { s.SigningSecretEnv = d.env(n, p) },
		"response_url_prefix": func(n *yaml.Node, p string) { s.ResponseURLPrefix = d.url(n, p) },
		"teams":               func(n *yaml.Node, p string) { s.Teams = d.strs(n, p) },
		"channels":            func(n *yaml.Node, p string) { s.Channels = d.strs(n, p) },
		"users":               func(n *yaml.Node, p string) { s.Users = d.strs(n, p) },
		"blueprints":          func(n *yaml.Node, p string) { s.Blueprints = d.blueprints(n, p) },
	}, "signing_secret_env", "teams", "channels", "users", "blueprints")
	return s
}

// decoder walks the file's nodes, collecting every problem.
type decoder struct {
	file  string
	known func(string) bool
	errs  []error
}

func (d *decoder) errorf(n *yaml.Node, path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	d.errs = append(d.errs, fmt.Errorf("%s:%d:%d: %s", d.file, n.Line, n.Column, msg))
}

// fields decodes a mapping with one handler per key; an unknown key, a
// key given twice and a required key missing are problems.
func (d *decoder) fields(n *yaml.Node, path string, handlers map[string]func(*yaml.Node, string), required ...string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := strings.TrimPrefix(path+"."+k.Value, ".")
		h, ok := handlers[k.Value]
		switch {
		case !ok:
			d.errorf(k, p, "unknown field")
		case seen[k.Value]:
			d.errorf(k, p, "given twice")
		default:
			h(v, p)
		}
		seen[k.Value] = true
	}
	for _, r := range required {
		if !seen[r] {
			d.errorf(n, strings.TrimPrefix(path+"."+r, "."), "required")
		}
	}
}

func (d *decoder) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Value == "" {
		d.errorf(n, path, "want a non-empty string")
		return ""
	}
	return n.Value
}

func (d *decoder) strs(n *yaml.Node, path string) []string {
	var out []string
	for i, item := range d.seq(n, path) {
		if s := d.str(item, fmt.Sprintf("%s[%d]", path, i)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) seq(n *yaml.Node, path string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list")
		return nil
	}
	return n.Content
}

func (d *decoder) version(n *yaml.Node, path string) {
	if n.Value != "1" {
		d.errorf(n, path, "want 1")
	}
}

func (d *decoder) count(n *yaml.Node, path string) int {
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < 1 || v > 1000 {
		d.errorf(n, path, "want a whole number from 1 to 1000")
		return 1
	}
	return v
}

// env checks a variable's name: the file names where a secret is, and a
// value that looks like a secret itself is refused.
func (d *decoder) env(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if s != "" && !envNameRE.MatchString(s) {
		d.errorf(n, path, "want the name of an environment variable, not a value (the file never holds a secret)")
		return ""
	}
	return s
}

func (d *decoder) url(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if u, err := url.Parse(s); s != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
		d.errorf(n, path, "%q is not an http(s) URL", s)
	}
	return s
}

func (d *decoder) blueprint(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if s != "" && d.known != nil && !d.known(s) {
		d.errorf(n, path, "no blueprint %q to start (the shipped ones and --blueprints-dir's)", s)
	}
	return s
}

func (d *decoder) blueprints(n *yaml.Node, path string) []string {
	var out []string
	for i, item := range d.seq(n, path) {
		if s := d.blueprint(item, fmt.Sprintf("%s[%d]", path, i)); s != "" {
			out = append(out, s)
		}
	}
	return out
}
