//go:build linux

package sandbox

import (
	"io"
	"net"
)

// proxySockInBox is where the harness proxy's socket appears in the box.
const proxySockInBox = "/run/sandgate/proxy.sock"

// startBridge listens on ProxyAddr inside the box's network namespace and
// relays every connection to the harness proxy's unix socket, so ordinary
// HTTP(S)_PROXY settings work while the box has no route out.
func startBridge() error {
	ln, err := net.Listen("tcp4", ProxyAddr)
	if err != nil {
		return err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relay(c)
		}
	}()
	return nil
}

func relay(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("unix", proxySockInBox)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, c); up.(*net.UnixConn).CloseWrite() }()
	_, _ = io.Copy(c, up)
}
