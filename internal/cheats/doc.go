// Package cheats holds the source of code that passes its tests and fails
// its users, as attack tests in several packages play it against the
// gates. One copy each, so every test attacks with the same cheat the
// README and the issues describe.
package cheats
