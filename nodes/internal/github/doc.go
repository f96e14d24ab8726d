// Package github is the one client the harness talks to GitHub's API
// with (or an Enterprise server's): the token goes only to GitHub's API
// or under a prefix the operator allowed, on the first request and on
// every redirect; answers are bounded in size and time; rate-limit
// answers are read the way GitHub documents them; and a job log's
// redirect to storage is fetched anew without the token.
//
// The ci node polls checks through it, the review node opens and watches
// pull requests, and the review queue acts on them. It imports only
// blueprint (for the endpoint rule) and must never import a node package.
package github
