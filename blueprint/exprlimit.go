package blueprint

import "fmt"

// Limits of one expression (a when: condition, or the code of one ${{ }}
// template). expr-lang parses and checks recursively: 524,288 nested
// parentheses in a 1 MiB file overflowed the goroutine's stack, a fatal
// error no recover() catches, so `sandgate validate` and the MCP server
// holding every run it started died with it. Both limits are checked on
// the raw text before the parser sees it. Real conditions nest a few
// levels and run to a line or two.
const (
	// MaxExprDepth caps how deeply brackets ( [ { nest in an expression.
	MaxExprDepth = 32
	// MaxExprBytes caps an expression's length, which also bounds the
	// recursion of what brackets do not count (a chain of unary
	// operators, nested ternaries) to a few thousand levels.
	MaxExprBytes = 4 << 10
)

// exprTooDeep reports the first place code breaks a limit: the byte
// offset to point at and the message. Brackets inside string literals
// count too: the check must not depend on reading the language the way
// its parser does, and no real expression puts 32 brackets in a string.
func exprTooDeep(code string) (int, string, bool) {
	depth := 0
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case '(', '[', '{':
			if depth++; depth > MaxExprDepth {
				return i, fmt.Sprintf("expression nests deeper than %d levels of brackets", MaxExprDepth), true
			}
		case ')', ']', '}':
			depth = max(0, depth-1)
		}
	}
	if len(code) > MaxExprBytes {
		return 0, fmt.Sprintf("expression is %d bytes long; at most %d are allowed", len(code), MaxExprBytes), true
	}
	return 0, "", false
}
