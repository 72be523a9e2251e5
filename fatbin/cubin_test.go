package fatbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testdataCubins returns every cubin of the committed samples (CUDA 12.4
// and 13.0: whole-program, -rdc, -G, compressed, sm_75 to sm_120),
// decompressed, by "sample#entry".
func testdataCubins(t testing.TB) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for p, b := range testdataInputs(t) {
		if !strings.Contains(p, "cuda") || strings.HasSuffix(p, ".sh") {
			continue
		}
		f, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, e := range f.Entries {
			if !e.Kind.IsELF() {
				continue
			}
			d, err := e.Data()
			if err != nil {
				t.Fatalf("%s entry %d: %v", p, e.Index, err)
			}
			m[fmt.Sprintf("%s#%d", p, e.Index)] = d
		}
	}
	if len(m) < 40 {
		t.Fatalf("only %d cubins in the samples", len(m))
	}
	return m
}

// checkRefusal fails unless err is a *CubinError from a check (not from
// the recover that turns a missed case into an error).
func checkRefusal(t testing.TB, what string, err error) {
	t.Helper()
	var ce *CubinError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v (%T) is not a *CubinError", what, err, err)
	}
	if strings.HasPrefix(ce.Msg, "malformed image (") {
		t.Fatalf("%s: the validator panicked: %v", what, err)
	}
}

// TestValidateCubinSamples: every cubin of the samples passes, and so does
// every sample's File.ValidateCubins.
func TestValidateCubinSamples(t *testing.T) {
	cubins := testdataCubins(t)
	for _, name := range slices.Sorted(maps.Keys(cubins)) {
		if err := ValidateCubin(cubins[name]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for p, b := range testdataInputs(t) {
		f, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := f.ValidateCubins(); err != nil {
			t.Errorf("%s: ValidateCubins: %v", p, err)
		}
	}
	t.Logf("%d cubins pass", len(cubins))
}

// cubinSource has what makes the sections and records a cubin can hold:
// several kernels, templates, device functions (frames, call graph),
// printf and assert (externs, syscalls), local arrays, static and dynamic
// shared memory, a large __device__ array (a NOBITS section larger than
// the file), __constant__ data, __managed__ variables, atomics, warp
// shuffles, textures, the device heap, launch bounds.
const cubinSource = `
#include <cstdio>
#include <cassert>
__device__ int counter;
__device__ float big[1 << 20];
__managed__ float managed_v[16];
__constant__ float table[64] = {1, 2, 3, 4};
__device__ __noinline__ float helper(float x, int n) { float s = 0; for (int i = 0; i < n; i++) s += sinf(x * i) * table[i % 64]; return s; }
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
template <typename T, int B>
__global__ void reduce(const T *in, T *out, int n) {
  __shared__ T sm[B];
  T v = 0;
  for (int i = blockIdx.x * B + threadIdx.x; i < n; i += gridDim.x * B) v += in[i];
  sm[threadIdx.x] = v; __syncthreads();
  for (int s = B / 2; s > 0; s >>= 1) { if (threadIdx.x < s) sm[threadIdx.x] += sm[threadIdx.x + s]; __syncthreads(); }
  if (threadIdx.x == 0) atomicAdd(out, sm[0]);
}
template __global__ void reduce<float, 256>(const float *, float *, int);
template __global__ void reduce<int, 512>(const int *, int *, int);
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i] + big[i]; }
extern "C" __global__ void withprintf(int *p) { printf("hello %d %f\n", p[threadIdx.x], helper(1.0f, p[0])); assert(p[1] != 7); }
extern "C" __global__ void local(int *p, int n) { int arr[64]; for (int i = 0; i < 64; i++) arr[i] = p[i] * n; p[threadIdx.x] = arr[(threadIdx.x * n) % 64] + fib(n); }
extern "C" __global__ void dyn(float *p) { extern __shared__ float d[]; d[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x] + managed_v[threadIdx.x % 16]; }
extern "C" __global__ void clk(long long *p) { p[threadIdx.x] = clock64() + counter; }
extern "C" __global__ void shfl(float *p) { float v = p[threadIdx.x]; for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o); if (threadIdx.x % 32 == 0) p[threadIdx.x] = v; }
extern "C" __global__ void tex(cudaTextureObject_t t, float *p) { p[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
extern "C" __global__ void heap(int n) { int *q = (int *)malloc(n * 4); q[0] = n; free(q); }
extern "C" __global__ void __launch_bounds__(128, 4) bounded(float *p) { p[threadIdx.x] *= 2; }
`

// cubinExtern uses a device function and variable of another translation
// unit: relocatable code that nvlink resolves.
const cubinExtern = `
extern __device__ int counter;
extern __device__ float helper(float x, int n);
__global__ void user(int *a) { a[threadIdx.x] = counter + (int)helper(a[0], 3); }
`

// TestValidateCubinNVCC compiles cubins with the local toolkit (CUDA 12.4
// here; the GPU machine's own toolkit there): the oldest, a middle and the
// newest architecture nvcc supports, whole-program, with -G, with
// -lineinfo, relocatable (-rdc), and device-linked by nvlink (nvcc -dlink),
// and checks that every one passes.
func TestValidateCubinNVCC(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with nvcc")
	}
	setupCUDA(t)
	dir := t.TempDir()
	for name, src := range map[string]string{"k.cu": cubinSource, "u.cu": cubinExtern} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	archs := regexp.MustCompile(`sm_\d+`).FindAllString(run(t, dir, "nvcc", "--list-gpu-code"), -1)
	if len(archs) == 0 {
		t.Fatal("nvcc --list-gpu-code lists no sm_ architecture")
	}
	first, mid, last := archs[0], archs[len(archs)/2], archs[len(archs)-1]
	type build struct {
		out  string
		args []string
	}
	var builds []build
	for _, a := range slices.Compact([]string{first, mid, last}) {
		builds = append(builds,
			build{a + ".cubin", []string{"-cubin", "-arch=" + a, "k.cu"}},
			build{a + "-rdc.cubin", []string{"-cubin", "-rdc=true", "-arch=" + a, "k.cu"}})
	}
	builds = append(builds,
		build{last + "-G.cubin", []string{"-cubin", "-G", "-arch=" + last, "k.cu"}},
		build{mid + "-lineinfo.cubin", []string{"-cubin", "-lineinfo", "-arch=" + mid, "k.cu"}},
		build{mid + "-rdc-G.cubin", []string{"-cubin", "-rdc=true", "-G", "-arch=" + mid, "k.cu"}},
		build{"u-" + last + "-rdc.cubin", []string{"-cubin", "-rdc=true", "-arch=" + last, "u.cu"}},
	)
	cmds := make([][]string, len(builds))
	for i, b := range builds {
		cmds[i] = append(append([]string{"nvcc"}, b.args...), "-o", b.out)
	}
	runAll(t, dir, cmds)
	// nvlink: device-link the two relocatable units into one cubin.
	run(t, dir, "nvcc", "-c", "-rdc=true", "-arch="+last, "k.cu", "-o", "k.o")
	run(t, dir, "nvcc", "-c", "-rdc=true", "-arch="+last, "u.cu", "-o", "u.o")
	run(t, dir, "nvcc", "-dlink", "-cubin", "-arch="+last, "k.o", "u.o", "-o", "dlink.cubin")
	outs, _ := filepath.Glob(filepath.Join(dir, "*.cubin"))
	if len(outs) != len(builds)+1 {
		t.Fatalf("%d cubins, want %d", len(outs), len(builds)+1)
	}
	for _, p := range outs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateCubin(b); err != nil {
			t.Errorf("%s (%d bytes): %v", filepath.Base(p), len(b), err)
		}
	}
	t.Logf("%d cubins from nvcc (%s, %s, %s) pass", len(outs), first, mid, last)
}

// elfSample is a small real cubin with every structure the checks look
// at: the sm_90 entry of testdata/cuda12.4/plain.fatbin (.nv.info with
// REGCOUNT/FRAME_SIZE, .nv.info._Z1kPff with EXIT_INSTR_OFFSETS,
// .nv.callgraph, two RELA sections, a symbol table, program headers).
func elfSample(t testing.TB) []byte { return sampleCubin(t, "cuda12.4/plain.fatbin", 90) }

// sampleCubin returns the first cubin for sm_<arch> in a sample.
func sampleCubin(t testing.TB, sample string, arch int) []byte {
	t.Helper()
	f, err := Parse(readTestdata(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries {
		if e.Kind == KindELF && e.Arch == arch {
			d, err := e.Data()
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("no sm_%d cubin in %s", arch, sample)
	return nil
}

// TestValidateCubinRefusesNote: CUDA 13 cubins have notes
// (.note.nv.cuinfo, .note.nv.tkinfo); one whose size runs past its section
// is refused.
func TestValidateCubinRefusesNote(t *testing.T) {
	orig := sampleCubin(t, "cuda13.0/cat.fatbin", 90)
	if err := ValidateCubin(orig); err != nil {
		t.Fatalf("the sample itself: %v", err)
	}
	for _, c := range []struct {
		sec   string
		field uint64 // 0 namesz, 4 descsz
		want  string
	}{
		{".note.nv.cuinfo", 4, "section 6 (.note.nv.cuinfo): note at 0x0 (name 12, descriptor 256 bytes) past the end of the section"},
		{".note.nv.tkinfo", 0, "section 5 (.note.nv.tkinfo): note at 0x0 (name 256, descriptor 140 bytes) past the end of the section"},
	} {
		b := bytes.Clone(orig)
		tle.PutUint32(b[secOff(t, b, c.sec)+c.field:], 0x100)
		err := ValidateCubin(b)
		checkRefusal(t, c.sec, err)
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q does not say %q", err, c.want)
		}
	}
}

var tle = binary.LittleEndian

// shdr returns the file offset of the header of the section called name.
func shdr(t testing.TB, b []byte, name string) (idx int, at uint64) {
	t.Helper()
	shoff, shnum, shstrndx := tle.Uint64(b[40:]), int(tle.Uint16(b[60:])), int(tle.Uint16(b[62:]))
	strOff := tle.Uint64(b[shoff+uint64(shstrndx)*64+24:])
	for i := range shnum {
		h := shoff + uint64(i)*64
		if cstring(b[strOff+uint64(tle.Uint32(b[h:])):]) == name {
			return i, h
		}
	}
	t.Fatalf("no section %s", name)
	return 0, 0
}

// secOff returns the file offset of section name's bytes.
func secOff(t testing.TB, b []byte, name string) uint64 {
	_, h := shdr(t, b, name)
	return tle.Uint64(b[h+24:])
}

// nvInfoRecord returns the offset of the value of the first SVAL record of
// attribute attr in section sec.
func nvInfoRecord(t testing.TB, b []byte, sec string, attr byte) uint64 {
	t.Helper()
	_, h := shdr(t, b, sec)
	off, size := tle.Uint64(b[h+24:]), tle.Uint64(b[h+32:])
	for p := off; p+4 <= off+size; {
		n := uint64(4)
		if b[p] == eifmtSVAL {
			n += uint64(tle.Uint16(b[p+2:]))
			if b[p+1] == attr {
				return p + 4
			}
		}
		p += n
	}
	t.Fatalf("no attribute %#x in %s", attr, sec)
	return 0
}

// TestValidateCubinRefuses damages one structure at a time in a real
// cubin: each is refused with a *CubinError saying what is wrong.
func TestValidateCubinRefuses(t *testing.T) {
	orig := elfSample(t)
	if err := ValidateCubin(orig); err != nil {
		t.Fatalf("the sample itself: %v", err)
	}
	u16 := func(off uint64, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { tle.PutUint16(b[off:], v); return b }
	}
	u32 := func(off uint64, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { tle.PutUint32(b[off:], v); return b }
	}
	u64 := func(off uint64, v uint64) func([]byte) []byte {
		return func(b []byte) []byte { tle.PutUint64(b[off:], v); return b }
	}
	b := orig
	n := uint64(len(b))
	shoff := tle.Uint64(b[40:])
	shnum := tle.Uint16(b[60:])
	phoff := tle.Uint64(b[32:])
	infoIdx, info := shdr(t, b, ".nv.info")
	_, kinfo := shdr(t, b, ".nv.info._Z1kPff")
	_, symtab := shdr(t, b, ".symtab")
	_, strtab := shdr(t, b, ".strtab")
	_, rela := shdr(t, b, ".rela.debug_frame")
	_, text := shdr(t, b, ".text._Z1kPff")
	_, dframe := shdr(t, b, ".debug_frame")
	_, cg := shdr(t, b, ".nv.callgraph")
	_, shstr := shdr(t, b, ".shstrtab")
	symOff := secOff(t, b, ".symtab")
	relaOff := secOff(t, b, ".rela.debug_frame")
	textOff := secOff(t, b, ".text._Z1kPff")
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"truncated header", func(b []byte) []byte { return b[:63] }, "63 bytes, shorter than the 64-byte ELF header"},
		{"truncated", func(b []byte) []byte { return b[:n-1] }, "past the end of the file"},
		{"truncated half", func(b []byte) []byte { return b[:n/2] }, "past the end of the file"},
		{"magic", u32(0, 0x464c457e), "no ELF magic"},
		{"ELF32", func(b []byte) []byte { b[4] = 1; return b }, "ELF class 1, not ELFCLASS64"},
		{"big-endian", func(b []byte) []byte { b[5] = 2; return b }, "not little-endian"},
		{"ident version", func(b []byte) []byte { b[6] = 0; return b }, "identification version 0"},
		{"ET_DYN", u16(16, 3), "ELF type 3, not ET_REL (1) or ET_EXEC (2)"},
		{"x86-64", u16(18, 62), "ELF machine 62, not EM_CUDA (190)"},
		{"ehsize", u16(52, 52), "ELF header size 52"},
		{"no sections", u16(60, 0), "no section headers"},
		{"shentsize", u16(58, 40), "section header size 40"},
		{"shoff past end", u64(40, n), "section header table [" + hx(n) + ", "},
		{"shoff huge", u64(40, 1<<63), "past the end of the file"},
		{"shoff unaligned", u64(40, shoff+4), "not 8-byte aligned"},
		{"shoff in header", u64(40, 8), "overlaps the ELF header"},
		{"shnum too many", u16(60, shnum+100), "section header table"},
		{"phentsize", u16(54, 32), "program header size 32"},
		{"phoff past end", u64(32, n-8), "program header table"},
		{"ph over sh", u64(32, shoff), "program header table [" + hx(shoff)},
		{"shstrndx 0", u16(62, 0), "section name table index 0"},
		{"shstrndx too big", u16(62, shnum), fmt.Sprintf("section name table index %d not in [1, %d)", shnum, shnum)},
		{"shstrndx not strtab", u16(62, uint16(infoIdx)), "type 0x70000000, not SHT_STRTAB"},
		{"shstrtab unterminated", func(b []byte) []byte {
			o, s := tle.Uint64(b[shstr+24:]), tle.Uint64(b[shstr+32:])
			b[o+s-1] = 'x'
			return b
		}, "does not start and end with a NUL"},
		{"section 0", u64(shoff+32, 1), "section 0 is not the null section"},
		{"name outside", u32(info, 0x10000), "section 5: name offset 0x10000 outside the section name table"},
		{"section past end", u64(info+32, n), "section 5 (.nv.info): offset+size " + hx(tle.Uint64(b[info+24:])+n) + " past the end of the file (" + hx(n) + " bytes)"},
		{"section offset huge", u64(info+24, 1<<63), "section 5 (.nv.info): offset+size"},
		{"sections overlap", u64(info+24, tle.Uint64(b[kinfo+24:])), "overlaps section 5 (.nv.info)"},
		{"section over sh table", u64(dframe+24, shoff+8), "section 4 (.debug_frame) [" + hx(shoff+8)},
		{"section over header", u64(info+24, 0), "the ELF header [0x0, 0x40) overlaps section 5 (.nv.info) [0x0, 0x30)"},
		{"alignment not pow2", u64(info+48, 6), "alignment 0x6 not a power of two"},
		{"misaligned", u64(text+24, textOff+4), "not aligned to 0x80"},
		{"sh_link", u32(info+40, uint32(shnum)), fmt.Sprintf("sh_link %d not a section index", shnum)},
		{"sh_info link", u32(kinfo+44, 999), "sh_info 999 not a section index"},
		{"rela sh_info", u32(rela+44, 999), "sh_info 999 not a section index"},
		{"rela sh_info 0", u32(rela+44, 0), "sh_info 0 names no section"},
		{"rela link not symtab", u32(rela+40, uint32(infoIdx)), "links to section 5 (.nv.info), not a symbol table"},
		{"rela entsize", u64(rela+56, 16), "want 24-byte entries"},
		{"rela symbol", u32(relaOff+12, 0x7fff), "relocation 0: symbol 32767 not in section 3 (.symtab)"},
		{"rela offset", u64(relaOff, 1<<20), "relocation 0: offset 0x100000 outside section 4 (.debug_frame)"},
		{"symtab entsize", u64(symtab+56, 16), "want 24-byte entries"},
		{"symtab size", u64(symtab+32, tle.Uint64(b[symtab+32:])-1), "want 24-byte entries"},
		{"symtab info", u32(symtab+44, 1000), "sh_info 1000 (first global symbol) past its"},
		{"symtab strtab", u32(symtab+40, uint32(infoIdx)), "type 0x70000000, not SHT_STRTAB"},
		{"symbol 0", func(b []byte) []byte { b[symOff+4] = 3; return b }, "symbol 0 is not the null symbol"},
		{"symbol name", u32(symOff+24, 0xffff), "symbol 1: name offset 0xffff outside its string table"},
		{"symbol section", u16(symOff+24+6, shnum), fmt.Sprintf("symbol 1: section index %#x not valid", shnum)},
		{"symbol reserved section", u16(symOff+24+6, 0xff00), "section index 0xff00 not valid"},
		{"symbol extent", func(b []byte) []byte {
			// The kernel's symbol (FUNC, in .text._Z1kPff): grow its size.
			for k := symOff + 24; k < symOff+tle.Uint64(b[symtab+32:]); k += 24 {
				if b[k+4]&0xf == 2 && tle.Uint64(b[k+16:]) > 0 {
					tle.PutUint64(b[k+16:], tle.Uint64(b[k+16:])+8)
					return b
				}
			}
			t.Fatal("no function symbol")
			return b
		}, "outside section 11 (.text._Z1kPff)"},
		{"strtab unterminated", func(b []byte) []byte {
			o, s := tle.Uint64(b[strtab+24:]), tle.Uint64(b[strtab+32:])
			b[o+s-1] = 'x'
			return b
		}, "string table section 2 (.strtab): empty, or does not start and end with a NUL"},
		{"nv.info format", func(b []byte) []byte { b[secOff(t, b, ".nv.info")] = 9; return b }, "unknown format 9"},
		{"nv.info size", func(b []byte) []byte {
			tle.PutUint16(b[secOff(t, b, ".nv.info")+2:], 0x1000)
			return b
		}, "value bytes past the end of the section"},
		{"nv.info truncated record", u64(info+32, 3*12+2), "section 5 (.nv.info): truncated attribute record at 0x24"},
		{"REGCOUNT symbol", func(b []byte) []byte {
			tle.PutUint32(b[nvInfoRecord(t, b, ".nv.info", eiattrRegcount):], 5000)
			return b
		}, "attribute 0x2f: symbol 5000 not in section 3 (.symtab)"},
		{"FRAME_SIZE symbol", func(b []byte) []byte {
			tle.PutUint32(b[nvInfoRecord(t, b, ".nv.info", eiattrFrameSize):], 5000)
			return b
		}, "attribute 0x11: symbol 5000"},
		{"nv.info no symtab", u32(info+40, 0), "sh_link 0 names no symbol table"},
		{"EXIT offset", func(b []byte) []byte {
			tle.PutUint32(b[nvInfoRecord(t, b, ".nv.info._Z1kPff", eiattrExitInstrOffsets):], 0x10000)
			return b
		}, "attribute 0x1c: instruction offset 0x10000 outside section 11 (.text._Z1kPff)"},
		{"EXIT without code", u32(kinfo+44, 0), "names no code section"},
		{"PARAM_CBANK symbol", func(b []byte) []byte {
			tle.PutUint32(b[nvInfoRecord(t, b, ".nv.info._Z1kPff", eiattrParamCbank):], 5000)
			return b
		}, "attribute 0xa: symbol 5000"},
		{"callgraph symbol", func(b []byte) []byte {
			tle.PutUint32(b[secOff(t, b, ".nv.callgraph"):], 4000)
			return b
		}, "section 7 (.nv.callgraph): symbol 4000 not in section 3 (.symtab)"},
		{"callgraph size", u64(cg+32, 12), "size 0xc not a multiple of 8"},
		{"program header past end", u64(phoff+8, n), "program header 0: offset+size"},
		{"program header size", u64(phoff+32, n), "program header 0: offset+size"},
		{"program header align", u64(phoff+48, 12), "program header 0: alignment 0xc not a power of two"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.edit(bytes.Clone(orig))
			err := ValidateCubin(d)
			if err == nil {
				t.Fatalf("accepted")
			}
			checkRefusal(t, c.name, err)
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func hx(v uint64) string { return fmt.Sprintf("%#x", v) }

// TestValidateCubinsFatbin: a fat binary whose cubin is damaged is
// refused naming the entry, for a stored and for a compressed entry.
func TestValidateCubinsFatbin(t *testing.T) {
	for _, sample := range []string{"cuda12.4/plain.fatbin", "cuda12.4/compall.fatbin"} {
		f, err := Parse(readTestdata(t, sample))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.ValidateCubins(); err != nil {
			t.Fatalf("%s: %v", sample, err)
		}
		var e *Entry
		for _, x := range f.Entries {
			if x.Kind == KindELF {
				e = x
				break
			}
		}
		if e.Compressed != strings.Contains(sample, "compall") {
			t.Fatalf("%s: entry %d compressed=%v", sample, e.Index, e.Compressed)
		}
		if e.Compressed {
			// Damage the decoded image: the entry now decodes to junk
			// of the declared size (an LZ4 block of literals).
			junk := bytes.Repeat([]byte{'x'}, int(e.UncompressedSize))
			e.raw = lz4Literals(junk)
			e.CompressedSize = int64(len(e.raw))
		} else {
			e.raw = bytes.Clone(e.raw)
			tle.PutUint16(e.raw[18:], 62)
		}
		err = f.ValidateCubins()
		checkRefusal(t, sample, err)
		if !strings.HasPrefix(err.Error(), fmt.Sprintf("fatbin: entry %d at offset %#x (ELF sm_%d): cubin: ", e.Index, e.Offset, e.Arch)) {
			t.Errorf("%s: %v", sample, err)
		}
	}
}

// lz4Literals encodes b as one LZ4 block of literals only.
func lz4Literals(b []byte) []byte {
	out := []byte{0xf0}
	n := len(b) - 15
	for ; n >= 255; n -= 255 {
		out = append(out, 255)
	}
	return append(append(out, byte(n)), b...)
}

// FuzzValidateCubin: ValidateCubin never panics (nor takes its recover
// path), refuses with a *CubinError, and what it accepts is accepted again
// and has its section headers and sections' bytes inside the input. Seeds:
// the cubins of the samples up to 12 KiB.
func FuzzValidateCubin(f *testing.F) {
	for _, b := range testdataCubins(f) {
		if len(b) <= 12<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := ValidateCubin(b)
		if err != nil {
			checkRefusal(t, "fuzz", err)
			return
		}
		if err := ValidateCubin(bytes.Clone(b)); err != nil {
			t.Fatalf("accepted, then refused: %v", err)
		}
		// Checked again here, independently: the header tables and the
		// bytes of every section of a standard file-backed type lie in
		// the input.
		n := uint64(len(b))
		shoff, shnum := tle.Uint64(b[40:]), uint64(tle.Uint16(b[60:]))
		if shoff > n || shnum*64 > n-shoff {
			t.Fatalf("accepted with section headers [%#x, +%d*64) in %d bytes", shoff, shnum, n)
		}
		for i := range shnum {
			h := b[shoff+i*64:]
			typ, off, size := tle.Uint32(h[4:]), tle.Uint64(h[24:]), tle.Uint64(h[32:])
			if typ != 0 && typ != 8 && typ < 0x60000000 && (off > n || size > n-off) {
				t.Fatalf("accepted with section %d [%#x, +%#x) in %d bytes", i, off, size, n)
			}
		}
	})
}
