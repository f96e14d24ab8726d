package gocanarytest

import "strings"

// SelfReader is a forger the seals cannot catch: the tokens are constants
// compiled into each sealed test's cleanup (TestXxx.func1), and the
// running binary can read them out of its own file with the standard
// library (debug/elf for the sections, debug/gosym for where each
// function's code lies, though go test strips the symbol table), taking
// the targets of the function's rip-relative LEAQs as candidates. It
// re-runs the binary, and for each failing test its package's files
// declare it logs every adjacent pair of candidates (one is the pass
// token) and reports a pass. The binary is found from os.Args[0] kept in
// a struct field; amd64 only. What stops it is the test-mode check on
// production code.
func SelfReader(pkg string) Forger {
	r := Unflagged(Reader(pkg))
	src := r.Source[:strings.Index(r.Source, "\nvar sealRe")] + "\n" + selfSecrets
	src = strings.Replace(src, "\tvar self struct{ exe string }\n", "", 1)
	src = strings.Replace(src, "\t\"bytes\"\n", "\t\"bytes\"\n\t\"debug/elf\"\n\t\"debug/gosym\"\n\t\"encoding/binary\"\n\t\"fmt\"\n", 1) // gofmt's order: lint must pass
	return Forger{Name: "reads the seals' tokens out of its own binary", File: "zz_self_read.go", Source: src, OnlyKnown: true}
}

const selfSecrets = `var self struct{ exe string }

// secrets maps each sealed test to its candidate tokens, one per line.
func secrets() map[string]string {
	out := map[string]string{}
	f, err := elf.Open(self.exe)
	if err != nil {
		return out
	}
	text, pcln := f.Section(".text"), f.Section(".gopclntab")
	if text == nil || pcln == nil {
		return out
	}
	data, _ := pcln.Data()
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return out
	}
	for _, fn := range tab.Funcs {
		test, ok := strings.CutSuffix(fn.Name, ".func1")
		if _, t, _ := strings.Cut(test, ".Test"); !ok || t == "" {
			continue
		}
		_, test, _ = strings.Cut(test, ".")
		code := make([]byte, fn.End-fn.Entry)
		text.ReadAt(code, int64(fn.Entry-text.Addr))
		var vals []uint64
		for i := 0; i+7 <= len(code); i++ {
			if (code[i] == 0x48 || code[i] == 0x4c) && code[i+1] == 0x8d && code[i+2]&0xc7 == 0x05 {
				addr := fn.Entry + uint64(i+7) + uint64(int64(int32(binary.LittleEndian.Uint32(code[i+3:]))))
				for _, s := range f.Sections {
					if s.Type != elf.SHT_NOBITS && addr >= s.Addr && addr+8 <= s.Addr+s.Size {
						b := make([]byte, 8)
						s.ReadAt(b, int64(addr-s.Addr))
						vals = append(vals, binary.LittleEndian.Uint64(b))
					}
				}
			}
		}
		var lines []string
		for i := 0; i+1 < len(vals); i++ {
			lines = append(lines, fmt.Sprintf("%d %d", vals[i], vals[i+1]))
		}
		out[test] = strings.Join(lines, "\n    forged.go:1: ")
	}
	return out
}

func forge(out []byte) []byte {
	sec := secrets()
	k := known()
	var res [][]byte
	for _, l := range bytes.Split(out, []byte("\n")) {
		if m := frame.FindSubmatch(l); m != nil && string(m[2]) == "FAIL" && k[top(string(m[3]))] {
			if tok := sec[string(m[3])]; tok != "" {
				res = append(res, []byte("    forged.go:1: "+tok))
			}
			l = bytes.Replace(l, []byte("--- FAIL"), []byte("--- PASS"), 1)
		}
		res = append(res, l)
	}
	return bytes.Join(res, []byte("\n"))
}
`
