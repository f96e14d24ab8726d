//go:build linux

package sandbox

import "time"

// request is one message from the harness to the box's init process.
type request struct {
	ID int `json:"id"`
	// Nonce is a fresh random value per request that init echoes: a reply
	// is taken only with the nonce of the request it answers.
	Nonce string `json:"nonce,omitempty"`
	// Setup is sent once, first.
	Setup *setup `json:"setup,omitempty"`
	// Exec runs a command.
	Exec *execReq `json:"exec,omitempty"`
	// Kill stops the command started by request Kill.
	Kill int `json:"kill,omitempty"`
	// Input is standard input for a streaming command (Box.Start).
	Input *input `json:"input,omitempty"`
}

// input is a piece of a streaming command's standard input; init answers
// none (a command that does not read its input is killed, see streams).
type input struct {
	ID   int    `json:"id"`
	Data []byte `json:"data,omitempty"`
	EOF  bool   `json:"eof,omitempty"`
}

// setup tells init how to build the box.
type setup struct {
	Root string `json:"root"`
	// Disk is where init attaches the box's disk until the old root is
	// detached: outside Root (see attachDisk).
	Disk      string `json:"disk"`
	Workspace string `json:"workspace"`
	Lower     string `json:"lower,omitempty"`
	// Layers, when set, are the layers of the layered snapshot whose
	// view Lower is, topmost first: the overlay stacks them instead.
	Layers    []string `json:"layers,omitempty"`
	Upper     string   `json:"upper,omitempty"`
	OvlWork   string   `json:"ovl_work,omitempty"`
	ReadOnly  []string `json:"read_only"`
	Caches    []Cache  `json:"caches,omitempty"`
	CacheDir  string   `json:"cache_dir,omitempty"`
	ProxySock string   `json:"proxy_sock,omitempty"`
	GitRO     bool     `json:"git_ro"`
	// Objects is the host object directory of the harness's object store
	// that the workspace's .git borrows from, shown read-only at
	// /work/.git/objects (see storeObjects).
	Objects string `json:"objects,omitempty"`
	// NestedUser runs each command in a user namespace of its own (a
	// harness that is not root has no second host uid to map).
	NestedUser bool `json:"nested_user,omitempty"`
	// CgroupV1: command threads join the commands' cgroup through tasksFD
	// (its tasks file) before they fork.
	CgroupV1 bool `json:"cgroup_v1,omitempty"`
	// RootFS is Policy.RootFS: the image tree shown in place of the
	// host's system directories.
	RootFS string `json:"root_fs,omitempty"`
}

type execReq struct {
	Args        []string      `json:"args"`
	Dir         string        `json:"dir"`
	Env         []string      `json:"env"`
	Timeout     time.Duration `json:"timeout"`
	OutputBytes int           `json:"output_bytes"`
	Stdin       []byte        `json:"stdin,omitempty"`
	// Stream keeps standard input open for input requests and sends
	// standard output as it comes (OutputBytes caps its total); standard
	// error is kept, capped, for the final result.
	Stream bool `json:"stream,omitempty"`
	// Live sends on what the command wrote every LiveEvery, not only in
	// full chunks (Command.Live).
	Live bool `json:"live,omitempty"`
}

// response answers a request with the same ID.
type response struct {
	ID    int    `json:"id"`
	Nonce string `json:"nonce,omitempty"`
	Error string `json:"error,omitempty"`
	// Layers reports what setup achieved, for audit and doctor output.
	Layers []string `json:"layers,omitempty"`
	Result *Result  `json:"result,omitempty"`
	// ChunkLen, when not zero, makes this a chunk of a running command's
	// output: exactly ChunkLen bytes of it follow the line as they are
	// (see reply_linux.go). Init sends one as soon as it has chunkBytes of
	// output and never holds more, so a command's output cannot grow init
	// (outside the commands' memory share) until the OOM killer takes it.
	// The final reply carries the rest.
	ChunkLen int `json:"chunk_len,omitempty"`
}

// chunkBytes is the size of one output chunk; the harness refuses larger.
const chunkBytes = 1 << 20
