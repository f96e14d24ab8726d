//go:build !unix

package blueprint

const openFlags = 0
