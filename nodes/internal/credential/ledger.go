package credential

import (
	"bufio"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// LedgerFile is the ledger's name in the run directory.
const LedgerFile = "credentials.jsonl"

// ServiceLedger is the Input.Services key of the run's *Ledger.
var ServiceLedger = runtime.NewServiceKey[*Ledger]("sandgate.credentials")

// Ledger records the tokens a run minted and took back, durably, so that
// whoever comes after a killed harness can revoke the rest (Sweep).
type Ledger struct {
	dir string
	mu  sync.Mutex
	// Notify, when set, hears of every entry written: event (minted,
	// revoked, expired, revoke_failed), and what the entry names.
	Notify func(event, node, purpose, repo, errText string)
}

// NewLedger is the ledger of the run in runDir.
func NewLedger(runDir string) *Ledger { return &Ledger{dir: runDir} }

// entry is one ledger line: a token minted (with what revoking it needs)
// or its end (revoked, expired, or a failed revocation).
type entry struct {
	ID      string    `json:"id"`
	Event   string    `json:"event"`
	At      time.Time `json:"at"`
	Node    string    `json:"node,omitempty"`
	Purpose Purpose   `json:"purpose,omitempty"`
	Repo    string    `json:"repo,omitempty"`
	Issuer  *Recipe   `json:"issuer,omitempty"`
	Expires time.Time `json:"expires_at,omitzero"`
	// Sealed is the token, AES-GCM under the issuer's SealKey, the entry's
	// id as additional data: nonce then ciphertext, base64.
	Sealed string `json:"sealed,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (l *Ledger) run() string { return filepath.Base(l.dir) }

// minted records t before anyone uses it and returns the entry's id.
func (l *Ledger) minted(iss Issuer, node string, r Request, t Token) (string, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	e := entry{ID: hex.EncodeToString(b), Event: "minted", At: time.Now().UTC(), Node: node, Purpose: r.Purpose, Repo: r.Repo, Expires: t.Expires}
	if d, ok := iss.(Durable); ok {
		key, err := d.SealKey(l.run())
		if err != nil {
			return "", err
		}
		if e.Sealed, err = seal(key, e.ID, t.Value); err != nil {
			return "", err
		}
		rec := d.Recipe()
		e.Issuer = &rec
	}
	return e.ID, l.append(e)
}

// ended records the end of the token m minted: event (revoked,
// expired), or err. It names what m names, so Notify can say which
// token it was.
func (l *Ledger) ended(m entry, event string, err error) error {
	e := entry{ID: m.ID, Event: event, At: time.Now().UTC(), Node: m.Node, Purpose: m.Purpose, Repo: m.Repo}
	if err != nil {
		e.Event, e.Error = "revoke_failed", err.Error()
	}
	return l.append(e)
}

func (l *Ledger) append(e entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, _ := json.Marshal(e)
	f, err := os.OpenFile(filepath.Join(l.dir, LedgerFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("credential ledger: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("credential ledger: %w", err)
	}
	if l.Notify != nil {
		l.Notify(e.Event, e.Node, string(e.Purpose), e.Repo, e.Error)
	}
	return nil
}

// Outstanding are the minted entries with no revocation or expiry after
// them, in order.
func (l *Ledger) outstanding() ([]entry, error) {
	f, err := os.Open(filepath.Join(l.dir, LedgerFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var order []string
	open := map[string]entry{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line cut short by a crash
		}
		switch e.Event {
		case "minted":
			order, open[e.ID] = append(order, e.ID), e
		case "revoked", "expired":
			delete(open, e.ID)
		}
	}
	var out []entry
	for _, id := range order {
		if e, ok := open[id]; ok {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// Sweep revokes every token the run in runDir minted and did not take back:
// when its environment closes, when it is resumed after its harness died,
// and before it is pruned. allowed are the operator's URL prefixes the
// tokens may go to (--allow-endpoint). Expired tokens are only marked.
func Sweep(ctx context.Context, runDir string, allowed []string) error {
	return NewLedger(runDir).Sweep(ctx, allowed)
}

// Sweep is the package's Sweep through l, so that l.Notify (the run's
// alert sinks) hears of each revocation and of each that failed.
func (l *Ledger) Sweep(ctx context.Context, allowed []string) error {
	open, err := l.outstanding()
	if err != nil {
		return fmt.Errorf("credential ledger: %w", err)
	}
	var errs []error
	for _, e := range open {
		err := l.revoke(ctx, e, allowed)
		if err != nil {
			errs = append(errs, fmt.Errorf("token %s (%s for %s): %w", e.ID, e.Purpose, e.Repo, err))
		}
	}
	return errors.Join(errs...)
}

// revoke takes back the outstanding token e and records the end, or the
// failure (which leaves e outstanding), whatever failed: the issuer, the
// key, the seal or the revocation itself.
func (l *Ledger) revoke(ctx context.Context, e entry, allowed []string) error {
	if !time.Now().Before(e.Expires) {
		return l.ended(e, "expired", nil)
	}
	err := l.revokeSealed(ctx, e, allowed)
	if lerr := l.ended(e, "revoked", err); err == nil {
		err = lerr
	}
	return err
}

func (l *Ledger) revokeSealed(ctx context.Context, e entry, allowed []string) error {
	if e.Issuer == nil || e.Sealed == "" {
		return fmt.Errorf("the ledger holds no way to revoke it; it expires at %s", e.Expires.Format(time.RFC3339))
	}
	iss, err := e.Issuer.Issuer(allowed)
	if err != nil {
		return err
	}
	key, err := iss.SealKey(l.run())
	if err != nil {
		return err
	}
	tok, err := unseal(key, e.ID, e.Sealed)
	if err != nil {
		return err
	}
	return iss.Revoke(ctx, Token{Value: tok, Expires: e.Expires})
}

func seal(key []byte, id, tok string) (string, error) {
	g, err := gcm(key)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, g.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(g.Seal(nonce, nonce, []byte(tok), []byte(id))), nil
}

func unseal(key []byte, id, sealed string) (string, error) {
	g, err := gcm(key)
	if err != nil {
		return "", err
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < g.NonceSize() {
		return "", errors.New("the sealed token is damaged")
	}
	tok, err := g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], []byte(id))
	if err != nil {
		return "", errors.New("the sealed token does not open with this key (another key_file, or a damaged ledger)")
	}
	return string(tok), nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}
