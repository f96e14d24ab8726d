package credential

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/secrets"
)

// TokenName is what the run's redactor writes for a minted token:
// "[redacted github_app token]".
const TokenName = "github_app token"

// renewBefore is how long before its expiry a held token is replaced by a
// new one, so no request goes out with a token about to die.
const renewBefore = 5 * time.Minute

// Lease is the tokens one node minted for one use: Token hands out the
// current one (minting it on first use and again when it nears its
// expiry), Close revokes them all.
type Lease struct {
	ctx    context.Context
	iss    Issuer
	ledger *Ledger
	node   string
	req    Request
	// redact is the run's redactor: every minted token joins it before
	// anyone uses it, so no journal, transcript, trace, verdict or page
	// the run writes afterwards holds it, whichever text carries it.
	redact *secrets.Redactor

	mu     sync.Mutex
	cur    Token
	held   []held
	seen   []string // every token minted, for Redact after Close
	closed bool
}

type held struct {
	id  string
	tok Token
}

// NewLease prepares a lease of tokens from app for the node of in, for
// purpose on repo (owner/name). Nothing is minted until Token is called.
// It needs the run's ledger (nodes.Environment provides it): a token no
// one can revoke after a crash is not minted.
func NewLease(ctx context.Context, in *runtime.Input, app AppConfig, allowed []string, p Purpose, repo string) (*Lease, error) {
	ledger, ok := ServiceLedger.Get(in)
	if !ok || ledger == nil {
		return nil, errors.New("github_app: no credential ledger: the runtime was built without nodes.Environment")
	}
	iss, err := NewGitHubApp(app, allowed)
	if err != nil {
		return nil, err
	}
	return &Lease{ctx: ctx, iss: iss, ledger: ledger, node: in.NodeID, req: Request{Run: in.RunID, Purpose: p, Repo: repo}, redact: in.Redactor}, nil
}

// Borrow is a lease for one action outside a run (approving a queued
// review): its tokens are recorded in the ledger in dir, so that when the
// process dies before Close, the next Sweep of dir revokes them, and
// join redact (which may be nil). What dir's ledger still holds from an
// earlier, interrupted action is revoked first.
func Borrow(ctx context.Context, app AppConfig, allowed []string, p Purpose, repo, dir, what string, redact *secrets.Redactor) (*Lease, error) {
	if err := Sweep(ctx, dir, allowed); err != nil {
		return nil, fmt.Errorf("revoking what an earlier %s left: %w", what, err)
	}
	iss, err := NewGitHubApp(app, allowed)
	if err != nil {
		return nil, err
	}
	return &Lease{ctx: ctx, iss: iss, ledger: NewLedger(dir), node: what, req: Request{Run: filepath.Base(dir), Purpose: p, Repo: repo}, redact: redact}, nil
}

// Token returns a live token, minting one when none is held or the held
// one nears its expiry. The minted token is in the ledger before it is
// returned.
func (l *Lease) Token() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return "", errors.New("github_app: the lease is closed")
	}
	if l.cur.Value != "" && time.Until(l.cur.Expires) > renewBefore {
		return l.cur.Value, nil
	}
	t, err := l.iss.Mint(l.ctx, l.req)
	if err != nil {
		return "", err
	}
	l.redact.Add(TokenName, t.Value)
	l.seen = append(l.seen, t.Value)
	id, err := l.ledger.minted(l.iss, l.node, l.req, t)
	if err != nil {
		// Unrecorded, it must not be used: take it back now.
		rerr := l.iss.Revoke(context.WithoutCancel(l.ctx), t)
		return "", errors.Join(fmt.Errorf("github_app: record the minted token: %w", err), rerr)
	}
	l.cur = t
	l.held = append(l.held, held{id, t})
	return t.Value, nil
}

// Close revokes every token the lease minted, also when the node's
// context is canceled, and records each end in the ledger. What fails
// stays outstanding for Sweep.
func (l *Lease) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), 30*time.Second)
	defer cancel()
	var errs []error
	for _, h := range l.held {
		m := entry{ID: h.id, Node: l.node, Purpose: l.req.Purpose, Repo: l.req.Repo}
		err := l.iss.Revoke(ctx, h.tok)
		if err == nil {
			err = l.ledger.ended(m, "revoked", nil)
		} else {
			_ = l.ledger.ended(m, "", err)
		}
		errs = append(errs, err)
	}
	l.held, l.cur = nil, Token{}
	return errors.Join(errs...)
}

// Redact removes every token the lease minted from s.
func (l *Lease) Redact(s string) string {
	if l == nil {
		return s
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return redact(s, l.seen)
}

// Err is err with every minted token removed from its text; err itself
// when it holds none.
func (l *Lease) Err(err error) error {
	if err == nil {
		return nil
	}
	if s := l.Redact(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}

// Done is Close for a node: what cannot be revoked now stays in the run's
// ledger for the sweep when the run ends (and expires within the hour
// anyway), and is logged without the token.
func (l *Lease) Done(in *runtime.Input) {
	if err := l.Close(); err != nil && in.Logger != nil {
		in.Logger.Warn("revoking a minted token failed; the run's end retries", "err", l.Redact(err.Error()))
	}
}
