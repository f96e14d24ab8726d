//go:build unix

package image

import "syscall"

// noFollow opens a name's own inode, never a link's target.
const noFollow = syscall.O_NOFOLLOW
