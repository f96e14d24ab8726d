package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/inbox/trigger"
	"github.com/sandgate/sandgate/nodes"
)

// triggerHooks loads serve's --triggers file and builds its endpoints
// (nil without the flag). Secrets come from the variables the file names;
// replies go through the project's GitHub client, to the file's base_url
// only when it is GitHub's API or one of the --allow-endpoint prefixes.
func (c *serveConfig) triggerHooks() (map[string]http.Handler, error) {
	if c.triggerFile == "" {
		return nil, nil
	}
	fsys := c.acts.startable()
	known := func(name string) bool { _, err := fs.Stat(fsys, name+".yaml"); return err == nil }
	cfg, err := trigger.Load(c.triggerFile, known)
	if err != nil {
		return nil, fmt.Errorf("--triggers: %w", err)
	}
	if cfg.StateDir == "" {
		cfg.StateDir = filepath.Join(filepath.Dir(c.runs[0]), "triggers")
	}
	c.starter = &triggerStarter{acts: c.acts, runs: c.runs[0]}
	opts := trigger.Options{Config: cfg, Starter: c.starter,
		Blueprints: fsys, Types: nodes.Types(), Poll: c.triggerPoll}
	if g := cfg.GitHub; g != nil {
		opts.GitHubSecret = []byte(os.Getenv(g.SecretEnv))
		c.acts.hideEnv = append(c.acts.hideEnv, g.SecretEnv)
		if err := nodes.CheckGitHubURL(g.BaseURL, c.acts.allow); err != nil {
			return nil, fmt.Errorf("--triggers: github.base_url: %w", err)
		}
		opts.GitHub = nodes.GitHubFromEnv(g.BaseURL, g.TokenEnv, "triggers github.base_url", c.acts.allow)
	}
	if s := cfg.Slack; s != nil {
		opts.SlackSecret = []byte(os.Getenv(s.SigningSecretEnv))
		c.acts.hideEnv = append(c.acts.hideEnv, s.SigningSecretEnv)
	}
	h, err := trigger.New(opts)
	if err != nil {
		return nil, fmt.Errorf("--triggers: %w", err)
	}
	c.triggers = h
	return h.Routes(), nil
}

// triggerStarter starts a trigger's run as the inbox's form does, in the
// first runs directory, records who asked in the run's actions and has
// the inbox read the run, so the link posted shows it at once.
type triggerStarter struct {
	acts  *serveActions
	runs  string
	inbox *inbox.Server
}

func (t *triggerStarter) StartTriggered(ctx context.Context, req trigger.Request) (string, error) {
	dir, err := t.acts.startNamed(ctx, startIn{Blueprint: req.Blueprint, Repo: req.Repo, Inputs: req.Inputs, Labels: req.Labels}, t.runs)
	if err != nil {
		return "", err
	}
	err = inbox.RecordStart(t.runs, filepath.Base(dir), req.By, "started "+req.Blueprint+" from "+req.Labels["trigger"])
	if t.inbox != nil {
		t.inbox.Index().Refresh()
	}
	return dir, err
}
