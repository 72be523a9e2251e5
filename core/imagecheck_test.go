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

// imageCheckSrc compiles (NVRTC, sm_90) to a cubin of about 90 KB with 87
// sections: kernels, templates, device functions, printf, local and shared
// memory, constants, managed variables, textures, the device heap.
const imageCheckSrc = `
__device__ int counter;
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
template __global__ void reduce<double, 128>(const double *, double *, int);
template __global__ void reduce<int, 512>(const int *, int *, int);
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void withprintf(int *p) { printf("hello %d %f\n", p[threadIdx.x], helper(1.0f, p[0])); }
extern "C" __global__ void local(int *p, int n) { int arr[64]; for (int i = 0; i < 64; i++) arr[i] = p[i] * n; p[threadIdx.x] = arr[(threadIdx.x * n) % 64] + fib(n); }
extern "C" __global__ void dyn(float *p) { extern __shared__ float d[]; d[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x] + managed_v[threadIdx.x % 16]; }
extern "C" __global__ void clk(long long *p) { p[threadIdx.x] = clock64() + counter; }
extern "C" __global__ void shfl(float *p) { float v = p[threadIdx.x]; for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o); if (threadIdx.x % 32 == 0) p[threadIdx.x] = v; }
extern "C" __global__ void tex(cudaTextureObject_t t, float *p) { p[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
extern "C" __global__ void heap(int n) { int *q = (int *)malloc(n * 4); q[0] = n; free(q); }
extern "C" __global__ void __launch_bounds__(128, 4) bounded(float *p) { p[threadIdx.x] *= 2; }
template <int N> __global__ void unrolled(float *p, const float *q) {
  float acc = 0;
#pragma unroll
  for (int i = 0; i < N; i++) acc += sinf(q[threadIdx.x + i]) * p[i];
  p[threadIdx.x] = acc;
}
template __global__ void unrolled<2>(float *, const float *);
template __global__ void unrolled<4>(float *, const float *);
template __global__ void unrolled<6>(float *, const float *);
template __global__ void unrolled<8>(float *, const float *);
template __global__ void unrolled<10>(float *, const float *);
`

func imageCheckCubin(tb testing.TB, arch string) []byte {
	tb.Helper()
	p, err := NewProgram(imageCheckSrc, "c++", &ProgramOptions{Arch: arch})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	o, err := p.Compile("cubin")
	if err != nil {
		tb.Fatal(err)
	}
	return o.Code()
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
