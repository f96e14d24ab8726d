// Package ghapp holds a GitHub App's configuration as a blueprint names
// it (no secret: where the id and the key are, which installation). It
// imports nothing of this module, so the push record in
// nodes/internal/gitremote can carry it without importing the credential
// package that mints with it (which brings the runtime along). Minting
// stays in nodes/internal/credential.
package ghapp
