package nodetest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes/internal/credential"
)

// AppID and InstallationID are the test GitHub App's.
const (
	AppID          = 4242
	InstallationID = 77
)

// NewGitHubApp starts a GitHub double knowing an app installed on
// acme/calc and acme/docs, and returns it with the app's configuration
// (its private key in a file of mode 0600, its id in
// SANDGATE_TEST_APP_ID) and the key.
func NewGitHubApp(t *testing.T) (*ghfake.Server, credential.AppConfig, *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	gh := ghfake.New("fixed-token-unused", "acme/calc")
	t.Cleanup(gh.Close)
	gh.AddApp(ghfake.App{ID: AppID, Key: &key.PublicKey, InstallationID: InstallationID, Repos: []string{"acme/calc", "acme/docs"}})
	t.Setenv("SANDGATE_TEST_APP_ID", "4242")
	return gh, credential.AppConfig{AppIDEnv: "SANDGATE_TEST_APP_ID", KeyFile: keyFile, InstallationID: InstallationID, BaseURL: gh.API.URL}, key
}
