package ghapp

// Config is a blueprint's github_app credential: where the app's id
// and private key are, which installation mints, and the API base (for
// GitHub Enterprise; default the node's own base_url, else
// https://api.github.com).
type Config struct {
	AppIDEnv       string `json:"app_id_env"`
	KeyFile        string `json:"key_file"`
	InstallationID int64  `json:"installation_id"`
	BaseURL        string `json:"base_url,omitempty"`
}

// WithBase is c with the API base set to base when the blueprint named
// none.
func (c Config) WithBase(base string) Config {
	if c.BaseURL == "" {
		c.BaseURL = base
	}
	return c
}
