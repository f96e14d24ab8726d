package nodes

// ParseDiagnostics lets the external tests reach the lint node's parser.
var ParseDiagnostics = parseDiagnostics
