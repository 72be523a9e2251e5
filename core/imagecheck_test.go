package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cudago/cudago/fatbin"
)

// damagedCubin returns a copy of cubin whose section header table starts
// past its end: well-formed enough to get far in a parser, refused by the
// image check.
func damagedCubin(cubin []byte) []byte {
	b := bytes.Clone(cubin)
	binary.LittleEndian.PutUint64(b[40:], uint64(len(b)))
	return b
}

// wantImageRefusal fails unless err is the image check's refusal: it
// matches ErrInvalidCode, holds a *fatbin.CubinError and says each of
// mention.
func wantImageRefusal(t *testing.T, what string, err error, mention ...string) {
	t.Helper()
	var ce *fatbin.CubinError
	if !errors.Is(err, ErrInvalidCode) || !errors.As(err, &ce) {
		t.Fatalf("%s: error %v, want ErrInvalidCode holding a *fatbin.CubinError", what, err)
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%s: error %q does not say %q", what, err, m)
		}
	}
}

// TestImageCheckCubin: a damaged cubin is refused by FromCubin and, when
// it got into an ObjectCode another way (as compiled or cached code does),
// by Handle and Kernel before any driver call: without a GPU the error
// would otherwise be the driver's CUDA_ERROR_NO_DEVICE.
func TestImageCheckCubin(t *testing.T) {
	cubin := codes(t)[CodeCubin]
	bad := damagedCubin(cubin)
	_, err := FromCubin(bad)
	wantImageRefusal(t, "FromCubin", err, "core: invalid object code: cubin: section header table [", "past the end of the file")

	o := newObjectCode(CodeCubin, bad, "damaged", nil, nil)
	_, err = o.Handle()
	wantImageRefusal(t, "Handle", err, fmt.Sprintf("core: loading cubin \"damaged\" (%d bytes): invalid object code: cubin: section header table", len(bad)))
	_, err = o.Kernel("saxpy")
	wantImageRefusal(t, "Kernel", err, "section header table")
	if o.checkImage() != o.checkImage() {
		t.Error("the check's result is not kept")
	}

	// The undamaged cubin passes the check: Handle gets to the driver.
	good := newObjectCode(CodeCubin, bytes.Clone(cubin), "", nil, nil)
	if err := good.checkImage(); err != nil {
		t.Fatalf("a compiled cubin: %v", err)
	}
	if _, err := good.Handle(); errors.Is(err, ErrInvalidCode) {
		t.Errorf("Handle of a compiled cubin: %v", err)
	}
	good.Close()
}

// TestImageCheckFatbin: a fat binary is refused when it does not parse or
// one of its cubins, stored or compressed, is damaged; the error names the
// entry. One that is sound passes, as do PTX and the linker-only types.
func TestImageCheckFatbin(t *testing.T) {
	for _, sample := range []string{"plain.fatbin", "compall.fatbin"} {
		data, err := os.ReadFile("../fatbin/testdata/cuda12.4/" + sample)
		if err != nil {
			t.Fatal(err)
		}
		o, err := FromFatbin(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.checkImage(); err != nil {
			t.Fatalf("%s: %v", sample, err)
		}
		// Cut the data inside the first container: the container header
		// claims more than there is, which the driver would read past.
		cut, _ := FromFatbin(data[:len(data)/2])
		_, err = cut.Handle()
		if !errors.Is(err, ErrInvalidCode) || !strings.Contains(err.Error(), "fatbin: ") {
			t.Errorf("%s cut in half: Handle = %v, want ErrInvalidCode from the fatbin parser", sample, err)
		}
	}

	// A stored ELF entry whose e_machine is changed.
	data, err := os.ReadFile("../fatbin/testdata/cuda12.4/plain.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fatbin.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	e := f.Entries[0]
	if !e.Kind.IsELF() || e.Compressed {
		t.Fatalf("entry 0 of plain.fatbin: %v compressed=%v, want a stored ELF", e.Kind, e.Compressed)
	}
	bad := bytes.Clone(data)
	binary.LittleEndian.PutUint16(bad[e.DataOffset+18:], 62)
	o, err := FromFatbin(bad, WithCodeName("plain"))
	if err != nil {
		t.Fatalf("FromFatbin checks only the magic: %v", err)
	}
	_, err = o.Handle()
	wantImageRefusal(t, "Handle", err, "core: loading fatbin \"plain\"", fmt.Sprintf("fatbin: entry 0 at offset %#x (ELF sm_%d): cubin: ELF machine 62, not EM_CUDA (190)", e.Offset, e.Arch))

	for _, typ := range []string{CodePTX, CodeLTOIR, CodeObject, CodeLibrary} {
		if err := newObjectCode(typ, []byte("anything"), "", nil, nil).checkImage(); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

// TestImageCheckLink: Link refuses a damaged cubin input before nvJitLink
// or the driver's linker sees it, naming the input.
func TestImageCheckLink(t *testing.T) {
	cubin := codes(t)[CodeCubin]
	in := newObjectCode(CodeCubin, damagedCubin(cubin), "k.cubin", nil, nil)
	l, err := NewLinker(&LinkerOptions{Arch: "sm_90"}, in)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Link(CodeCubin)
	wantImageRefusal(t, "Link", err, "core: Link: input k.cubin: invalid object code: cubin: section header table")
}

// imageCheckSrc (cubinfuzz's built-in seed) compiles (NVRTC, sm_90) to a
// cubin of about 90 KB with 87 sections: kernels, templates, device
// functions, printf, local and shared memory, constants, managed
// variables, textures, the device heap.
const imageCheckSrc = "../bench/cmd/cubinfuzz/seed.cu"

func imageCheckCubin(tb testing.TB, arch string) []byte {
	tb.Helper()
	src := try(os.ReadFile(imageCheckSrc)).must(tb)
	return mustCompile(tb, mustProgram(tb, string(src), "c++", &ProgramOptions{Arch: arch}), "cubin").Code()
}

// BenchmarkImageCheck measures the image check on a ~90 KB cubin, alone
// and inside a fatbin, stored (nvFatbin's default for a cubin) and LZ4
// compressed (decompressed to be checked); MB/s are of the cubin.
// BenchmarkGPULoadUnload is what to compare it with.
func BenchmarkImageCheck(b *testing.B) {
	cubin := imageCheckCubin(b, "sm_90")
	b.Run("cubin", func(b *testing.B) {
		b.SetBytes(int64(len(cubin)))
		for b.Loop() {
			if err := fatbin.ValidateCubin(cubin); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		opts *FatbinOptions
	}{{"fatbin", nil}, {"fatbin-lz4", &FatbinOptions{CompressAll: true}}} {
		fb, err := NewFatbinBuilder(c.opts)
		if err != nil {
			b.Fatal(err)
		}
		defer fb.Close()
		if err := fb.AddCubin(cubin, "", "k"); err != nil {
			b.Fatal(err)
		}
		fo, err := fb.Build()
		if err != nil {
			b.Fatal(err)
		}
		f, err := fatbin.Parse(fo.Code())
		if err != nil || f.Entries[0].Compressed != (c.opts != nil) {
			b.Fatalf("%s: %v, compressed %v", c.name, err, f != nil && f.Entries[0].Compressed)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(cubin)))
			for b.Loop() {
				o := newObjectCode(CodeFatbin, fo.Code(), "", nil, nil)
				if err := o.checkImage(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGPULoadUnload loads the same ~90 KB cubin into the driver and
// unloads it, the check included: cuLibraryLoadData, cuLibraryGetKernel,
// cuKernelGetAttribute on the device (with lazy loading, the default, this
// is what loads the module into the context), cuLibraryUnload.
func BenchmarkGPULoadUnload(b *testing.B) {
	dev := requireGPU(b)
	cubin := imageCheckCubin(b, "sm_"+dev.Arch())
	for b.Loop() {
		o := newObjectCode(CodeCubin, cubin, "", nil, nil)
		k, err := o.Kernel("saxpy")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := k.NumRegisters(dev); err != nil {
			b.Fatal(err)
		}
		if err := o.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
