package gocanary

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// last runs the binaries of the packages the change cannot reach that the
// first phase kept (keep), once every round is over: no canary source,
// hidden file or sealed binary is left in the box, and the command that
// ran the sealed binaries has ended, with whatever it left running. They
// ran there as a plain go test of their own, which linked every binary a
// second time (go test caches none) and loaded the packages again: on
// prometheus 0.5–1 s of a 6 s command, the largest part of the canary's
// cost (bench/results/canary.md).
//
// The change's code in the sealed binaries could reach these files in the
// second phase: a binary, its arguments or its directory rewritten there
// would turn a failure into a pass in a report no seal guards. So each is
// run only if the digest the collector printed in the first phase, when
// no code of the change had run, still matches; one that does not is not
// run, and its package is refused (see Decode). What runs beside them is
// what ran beside them in the plain go test: their own tests, and programs
// those start.
func (p *Plan) last(ctx context.Context, exec Exec, keep []stash, timeout time.Duration, outputBytes int) (*sandbox.Result, error) {
	x := path.Join(p.tmpDir, "sandgate-canary-"+randomHex(8))
	var b strings.Builder
	fmt.Fprintf(&b, "D=%s\nrm -rf \"$D\" && (umask 077 && mkdir -p \"$D\") || exit %d\n", quote(x), failedInternally)
	// The first phase's copy of test2json, if its digest still holds: the
	// change's code in the sealed binaries could have rewritten it, or the
	// build cache's, to forge these unsealed reports. One that changed
	// refuses every package here (check fails).
	if p.t2j.path != "" {
		fmt.Fprintf(&b, "T=%s\n[ \"$(sha256sum < \"$T\" 2>/dev/null | cut -c1-64)\" = %s ] || : > \"$D/bad\"\n", quote(p.t2j.path), quote(p.t2j.hash))
	} else {
		fmt.Fprintf(&b, "T=$(go tool -n test2json </dev/null) || exit %d\n", failedInternally)
	}
	b.WriteString(": > \"$D/ok\"\n")
	// The run writes its package, output and exit status in a directory of
	// its own ($3, in the fresh $D) that links to the kept files the digest
	// covers: files left beside them (an out and rc written read-only
	// ahead, which the run could not replace) are never read.
	b.WriteString("check() { [ ! -e \"$D/bad\" ] && mkdir \"$3\" && for f in bin dir args b cov; do ln -s \"$1/$f\" \"$3/$f\" || return 1; done && [ \"$(cd \"$3\" && sha256sum bin dir args \"b/$(cat bin)\" 2>/dev/null | cut -c1-64 | tr -d '\\n')\" = \"$2\" ]; }\n")
	dirs := map[string]bool{}
	for i, k := range keep {
		dirs[path.Dir(path.Dir(k.id))] = true
		fmt.Fprintf(&b, "if check %[1]s %[2]s \"$D/%[5]d\" && printf '%%s' %[3]s > \"$D/%[5]d/pkg\"; then echo \"$D/%[5]d\" >> \"$D/ok\"; else echo %[4]s; fi\n",
			quote(k.id), quote(k.hash), quote(k.pkg), quote(p.nonce+" changed "+k.pkg), i)
	}
	b.WriteString(runScript)
	b.WriteString("[ -s \"$D/ok\" ] && xargs -P \"$(nproc)\" -I@ sh \"$D/run\" \"$T\" @ < \"$D/ok\"\nrc=0\n")
	b.WriteString("while read -r n; do cat \"$n/out\"; [ \"$(cat \"$n/rc\" 2>/dev/null)\" = 0 ] || rc=1; done < \"$D/ok\"\nrm -rf \"$D\"")
	for d := range dirs {
		b.WriteString(" " + quote(d))
	}
	b.WriteString("\nexit $rc\n")
	res, err := exec(ctx, sandbox.Command{Args: []string{"sh", "-s"}, Stdin: []byte(b.String()), Timeout: timeout, OutputBytes: outputBytes})
	if err != nil {
		return nil, err
	}
	if res.ExitCode == failedInternally {
		return nil, fmt.Errorf("the test gate's run of the packages the change cannot reach failed in the box: %s", tail(res.Output))
	}
	var out []byte
	for _, line := range strings.SplitAfter(string(res.Output), "\n") {
		if pkg, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), p.nonce+" changed "); ok {
			p.changed = append(p.changed, pkg)
			res.ExitCode = max(res.ExitCode, 1)
			continue
		}
		out = append(out, line...)
	}
	res.Output = out
	return res, nil
}
