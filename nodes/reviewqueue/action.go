package reviewqueue

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// ApproveAction is what approving a queue entry does, taken from the
// review node's on_approve when the run queued the change and stored in
// the entry, so `sandgate review approve` needs no blueprint.
type ApproveAction struct {
	// MergeInto, Method and Remote land the change from a local queue:
	// the target branch on Remote is fast-forwarded (ff) to the reviewed
	// commit or gets a merge commit (merge).
	MergeInto string `json:"merge_into,omitempty"`
	Method    string `json:"method,omitempty"`
	Remote    string `json:"remote,omitempty"`
	// TokenEnv is the git_push node's token variable when Remote is the
	// remote it pushed to; the token itself is never written down.
	TokenEnv string `json:"token_env,omitempty"`
	// Credentials is the git_push node's github_app instead, when it
	// minted its token (no secret): landing mints one of its own, for
	// Remote's repository and contents: write alone.
	Credentials *credential.AppConfig `json:"credentials,omitempty"`
	// GitHub is ready, approve or merge, for a pull request; MergeMethod
	// is GitHub's merge_method for merge.
	GitHub      string `json:"github,omitempty"`
	MergeMethod string `json:"merge_method,omitempty"`
}

// PullRequest is the pull request a github review node opened, recorded
// at creation so approving can act on it.
type PullRequest struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
	// NodeID is GraphQL's id, needed to mark a draft ready for review.
	NodeID   string `json:"node_id,omitempty"`
	URL      string `json:"url,omitempty"`
	BaseURL  string `json:"base_url"`
	TokenEnv string `json:"token_env"`
	// Credentials is the review node's github_app when it minted its
	// token: approving mints one of its own, for this repository and the
	// action alone. The configuration holds no secret.
	Credentials *credential.AppConfig `json:"credentials,omitempty"`
	Draft       bool                  `json:"draft,omitempty"`
}

var onApproveKeys = map[string][]string{
	"local":  {"merge_into", "method", "remote"},
	"github": {"github", "merge_method"},
}

// ParseOnApprove checks a review node's on_approve for its queue and
// returns it with defaults applied; nil when it is empty.
func ParseOnApprove(queue string, m map[string]string) (*ApproveAction, error) {
	if len(m) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(onApproveKeys[queue], k) {
			continue
		}
		for other, ks := range onApproveKeys {
			if other != queue && slices.Contains(ks, k) {
				return nil, fmt.Errorf("%s is for queue %s, and this review's queue is %s: want %s", k, other, queue, strings.Join(onApproveKeys[queue], ", "))
			}
		}
		return nil, fmt.Errorf("unknown key %q: want %s", k, strings.Join(onApproveKeys[queue], ", "))
	}
	oneOf := func(key, def string, allowed ...string) (string, error) {
		v := m[key]
		if v == "" {
			v = def
		}
		if !slices.Contains(allowed, v) {
			return "", fmt.Errorf("%s: want %s, got %q", key, strings.Join(allowed, " or "), v)
		}
		return v, nil
	}
	a := &ApproveAction{}
	var err error
	if queue == "github" {
		if a.GitHub, err = oneOf("github", "", "ready", "approve", "merge"); err != nil {
			return nil, err
		}
		if m["merge_method"] != "" && a.GitHub != "merge" {
			return nil, fmt.Errorf("merge_method is for github: merge, not github: %s", a.GitHub)
		}
		if a.GitHub == "merge" {
			a.MergeMethod, err = oneOf("merge_method", "merge", "merge", "squash", "rebase")
		}
		return a, err
	}
	a.MergeInto, a.Remote = m["merge_into"], m["remote"]
	if a.MergeInto == "" || !gitremote.ValidBranch(a.MergeInto) {
		return nil, fmt.Errorf("merge_into: want the branch to land the change on, got %q", a.MergeInto)
	}
	if strings.HasPrefix(a.Remote, "-") {
		return nil, fmt.Errorf("remote: want a URL or a path, got %q", a.Remote)
	}
	a.Method, err = oneOf("method", "ff", "ff", "merge")
	return a, err
}
