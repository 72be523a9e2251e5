package core

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzProgramOptions renders ProgramOptions, LinkerOptions and
// FatbinOptions built from arbitrary field values. Rendering is pure: it
// must never panic, must be deterministic, and must either fail with an
// error matching ErrInvalidOption or give an option list without empty
// entries. Corpus: testdata/fuzz/FuzzProgramOptions.
func FuzzProgramOptions(f *testing.F) {
	f.Add("sm_90", "c++17", "N", "1", "inc", "-lineinfo", 0, uint8(0))
	f.Add("compute_90a", "", "", "", "", "", 32, uint8(0xff))
	f.Add("sm_100f", "c++20", "A B", "x=y", "/p q", "--extra", -1, uint8(0x55))
	f.Add("90", "c++03", "-DX", "", "", "", 255, uint8(0xaa))
	f.Add("sm_", "c++", "", "\x00", "\n", "-arch=sm_80", 1<<30, uint8(1))
	f.Fuzz(func(t *testing.T, arch, std, define, value, path, extra string, regs int, bits uint8) {
		b := func(i uint) *bool {
			v := bits&(1<<i) != 0
			return &v
		}
		p := &ProgramOptions{
			Name: define, Arch: arch, Std: std,
			Defines:      map[string]string{define: value},
			DefineList:   []string{define + "=" + value},
			Undefines:    []string{value},
			IncludePaths: []string{path},
			PreIncludes:  []string{path},
			Headers:      map[string]string{path: value},
			Debug:        bits&1 != 0, LineInfo: bits&2 != 0, FastMath: bits&4 != 0,
			FMAD: b(3), FTZ: b(4), PrecDiv: b(5), PrecSqrt: b(6),
			MaxRegisters:          regs,
			RelocatableDeviceCode: bits&8 != 0, LTO: bits&16 != 0,
			NameExpressions: []string{value},
			PtxasOptions:    []string{extra},
			PCH:             bits&32 != 0, CreatePCH: path, PCHDir: path,
			Extra: []string{extra},
		}
		if bits&64 != 0 {
			p.Defines, p.Headers, p.IncludePaths = nil, nil, nil
		}
		check := func(what string, render func() ([]string, error)) {
			a, errA := render()
			b, errB := render()
			if !reflect.DeepEqual(a, b) || (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
				t.Fatalf("%s is not deterministic: %q %v / %q %v", what, a, errA, b, errB)
			}
			if errA != nil {
				if !errors.Is(errA, ErrInvalidOption) {
					t.Fatalf("%s: error %v does not match ErrInvalidOption", what, errA)
				}
				return
			}
			for _, o := range a {
				if o == "" && extra != "" {
					t.Fatalf("%s rendered an empty option: %q", what, a)
				}
			}
		}
		check("NVRTCOptions", p.NVRTCOptions)
		nv := *p
		nv.Std, nv.Defines, nv.Undefines, nv.IncludePaths, nv.PreIncludes, nv.Headers = "", nil, nil, nil, nil, nil
		nv.NameExpressions, nv.PtxasOptions, nv.RelocatableDeviceCode = nil, nil, false
		nv.PCH, nv.CreatePCH, nv.PCHDir = false, "", ""
		check("NVVMOptions", nv.NVVMOptions)
		opt := regs
		l := &LinkerOptions{Arch: arch, Debug: bits&1 != 0, LTO: bits&16 != 0, Optimization: &opt,
			MaxRegisters: regs, FTZ: b(4), KernelsUsed: []string{value}, PtxasOptions: []string{extra}, Extra: []string{extra}}
		check("NVJitLinkOptions", l.NVJitLinkOptions)
		fo := &FatbinOptions{Name: define, Compress: b(2), CompressAll: bits&1 != 0, Host: std, Extra: []string{extra}}
		check("NVFatbinOptions", fo.NVFatbinOptions)
		// A Program never reaches a library with options that fail to
		// render: NewProgram refuses them first.
		if _, err := p.NVRTCOptions(); err != nil {
			if _, err2 := NewProgram("x", "c++", p); err2 == nil {
				t.Fatalf("NewProgram accepted options that NVRTCOptions refuses (%v)", err)
			}
		}
	})
}

// FuzzObjectCode feeds arbitrary bytes to every From* constructor: each
// either fails with an error matching ErrInvalidCode or makes an
// ObjectCode of that type holding a copy of the data, whose kernel
// listing (ELF symbols, PTX entries, fatbin parsing) never panics.
// Corpus: testdata/fuzz/FuzzObjectCode.
func FuzzObjectCode(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x41\x00"))
	f.Add([]byte(".version 8.0\n.target sm_90\n.visible .entry k() { ret; }\x00"))
	f.Add([]byte("\x50\xed\x55\xba\x01\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("!<arch>\nfoo.o/          0           0     0     644     4         `\nabcd"))
	f.Add(hostELF())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		for _, c := range []struct {
			typ  string
			from func([]byte, ...ObjectCodeOption) (*ObjectCode, error)
		}{
			{CodeCubin, FromCubin}, {CodeFatbin, FromFatbin}, {CodePTX, FromPTX},
			{CodeLTOIR, FromLTOIR}, {CodeObject, FromObject}, {CodeLibrary, FromLibrary},
		} {
			o, err := c.from(data, WithCodeName("fuzz"))
			if err != nil {
				if !errors.Is(err, ErrInvalidCode) {
					t.Fatalf("From %s: error %v does not match ErrInvalidCode", c.typ, err)
				}
				if o != nil {
					t.Fatalf("From %s returned an ObjectCode with error %v", c.typ, err)
				}
				continue
			}
			if o.CodeType() != c.typ {
				t.Fatalf("From %s made a %s", c.typ, o.CodeType())
			}
			want := data
			if c.typ == CodePTX {
				want = bytes.TrimRight(data, "\x00")
			}
			if !bytes.Equal(o.Code(), want) {
				t.Fatalf("From %s: code differs from the input", c.typ)
			}
			if len(data) > 0 && len(o.Code()) > 0 && &o.Code()[0] == &data[0] {
				t.Fatalf("From %s did not copy the data", c.typ)
			}
			_ = o.kernelNames()
			_ = o.String()
			if c.typ == CodeCubin {
				_, _ = cubinArch(o.Code())
			}
			if c.typ == CodePTX {
				_, _ = ptxArch(o.Code())
			}
			if err := o.Close(); err != nil {
				t.Fatalf("Close of unloaded code: %v", err)
			}
			if _, err := o.Kernel("k"); !errors.Is(err, ErrClosed) {
				t.Fatalf("Kernel after Close = %v, want ErrClosed", err)
			}
		}
		if !bytes.Equal(data, orig) {
			t.Fatal("a From* constructor modified its input")
		}
	})
}
