//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// The box's /etc is built, not bound: the host's /etc holds shadow files,
// sudoers, ssh host keys, machine-id and whatever else an operator put
// there. Commands see generated account and name-service files plus the
// host entries below, which programs need to run (the dynamic linker's
// cache, certificates, time zones, the toolchains' own configuration).
// Anything else must be asked for by path (Policy.ReadOnly).

// etcFromHost are the host /etc entries shown read-only when they exist.
var etcFromHost = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki/tls/certs", "pki/ca-trust/extracted",
	"localtime", "timezone", "services", "protocols", "mime.types", "gai.conf", "host.conf",
	"alternatives", "os-release", "debian_version", "bash.bashrc", "profile",
}

// etcGlobs are toolchain configuration directories (java-17-openjdk,
// python3.11, perl …).
var etcGlobs = []string{"java-*", "python3*", "perl"}

// etcGenerated are written fresh for every box.
var etcGenerated = map[string]string{
	"passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n" +
		fmt.Sprintf("sandbox:x:%d:%d:sandbox:%s:/bin/sh\n", CommandUID, CommandGID, HomeDir) +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"group":         fmt.Sprintf("root:x:0:\nsandbox:x:%d:\nnogroup:x:65534:\n", CommandGID),
	"hosts":         "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
	"hostname":      "sandbox\n",
	"nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n",
	// Nothing answers on the box's loopback port 53, so a lookup fails at
	// once; allowed hosts are reached through the HTTP proxy, which
	// resolves them outside.
	"resolv.conf": "# sandgate: the box has no DNS server\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
}

// writeEtc writes the generated files into root/etc and returns their
// names.
func writeEtc(root string) ([]string, error) {
	etc := filepath.Join(root, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return nil, err
	}
	var shown []string
	for name, content := range etcGenerated {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("write /etc/%s: %w", name, err)
		}
		shown = append(shown, name)
	}
	return shown, nil
}

// hostEtcNames are the host's /etc entries a box may see, if they exist.
func hostEtcNames() []string {
	names := append([]string(nil), etcFromHost...)
	// /etc read once for every glob (it is read again at a pooled box's
	// take, see hostPrint), in filepath.Glob's order.
	d, err := os.Open("/etc")
	if err != nil {
		return names
	}
	list, _ := d.Readdirnames(-1)
	d.Close()
	return append(names, globbedEtc(list)...)
}

// globbedEtc are the names in list that etcGlobs match, in
// filepath.Glob's order.
func globbedEtc(list []string) []string {
	sort.Strings(list)
	var names []string
	for _, g := range etcGlobs {
		for _, n := range list {
			if ok, _ := filepath.Match(g, n); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// showEtcEntries shows the system's entries in root/etc and returns
// those shown: the host's, or with an image the image's.
func showEtcEntries(root string, img *imageRoot) ([]string, error) {
	etc := filepath.Join(root, "etc")
	names, show := hostEtcNames(), showEtc
	if img != nil {
		names, show = img.etcNames(), img.showEtc
	}
	var shown []string
	for _, name := range names {
		ok, err := show(name, etc)
		if err != nil {
			return nil, err
		}
		if ok {
			shown = append(shown, name)
		}
	}
	return shown, nil
}

// showEtc shows one host /etc entry in the box: a symbolic link is
// recreated (it points into /usr, which the box has), anything else is
// bound read-only.
func showEtc(name, etc string) (bool, error) {
	src, dst := filepath.Join("/etc", name), filepath.Join(etc, name)
	st, err := os.Lstat(src)
	if err != nil {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return false, nil
		}
		return true, os.Symlink(target, dst)
	}
	return true, bindRO(src, dst)
}
