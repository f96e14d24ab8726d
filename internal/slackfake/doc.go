// Package slackfake is a double of Slack's side of a slash command, from
// Slack's documented payloads: the signed application/x-www-form-urlencoded
// request Slack sends the app (Command), and the response_url receiver
// that takes the app's later messages (Receiver) and records them.
package slackfake
