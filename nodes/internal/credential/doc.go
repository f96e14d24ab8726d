// Package credential mints the short-lived, narrowly scoped tokens the
// promotion nodes send to GitHub, and takes them back.
//
// An Issuer mints a token for one run, one purpose (git_push, review, ci)
// and one repository, and revokes it. GitHubApp is the one issuer: a JWT
// signed with the app's private key (RS256) buys an installation token
// limited to the run's repository and to the permission the purpose needs
// (Permissions), which lives an hour on GitHub's side.
//
// A node takes a token through a Source (Lease) just before it uses it and
// gives it back (Lease.Close revokes it) when it is done, canceled or not.
// Before a minted token is handed to the node the Ledger appends an entry
// to the run's credentials.jsonl: what revoking needs (the issuer's
// configuration, which holds no secret) and the token sealed with AES-GCM
// under a key derived from the app's private key. Revoking needs the token
// itself (DELETE /installation/token authenticates with it), so a ledger
// without it could not revoke after a crash; a key held only in memory
// would die with the harness. Whoever can open the seal already holds the
// private key, which mints any token the installation allows, so the seal
// adds no exposure, and the run directory alone gives nothing. When the
// environment closes, when a run is resumed and when it is pruned, Sweep
// revokes whatever the ledger still holds. A token minted but not yet
// recorded when the harness dies is the one gap: GitHub's one-hour expiry
// is the backstop.
//
// Every minted token joins the run's redactor (secrets.Redactor.Add)
// before the node gets it. Mint refuses a repository that is not a plain
// owner/name and checks GitHub's answer: a token covering another or a
// further repository, or more than the purpose's permissions, is revoked
// at once. Borrow is a lease outside a run (approving a queued review),
// its ledger in the entry's directory. CheckKeyPlaces refuses a key_file
// a box could reach.
//
// Source with TokenEnv is the old way, a token the operator keeps in the
// environment: nothing is minted or revoked.
package credential
