package core

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/bindings/nvrtc"
)

// gpuDevice returns device 0 after requireGPU.
func gpuDevice(t *testing.T) *Device {
	t.Helper()
	requireGPU(t)
	dev, err := GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// testSource holds the kernels of the GPU tests of devices, streams,
// memory, launches and graphs.
const testSource = `
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = a * x[i] + y[i];
}

extern "C" __global__ void mixed(float* out, int a, float b, double c, long long d,
		unsigned char e, short f, float* g) {
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		out[0] = (float)a;
		out[1] = b;
		out[2] = (float)c;
		out[3] = (float)(d >> 32);
		out[4] = (float)(d & 0xffffffffLL);
		out[5] = (float)e;
		out[6] = (float)f;
		out[7] = g[0];
	}
}

extern "C" __global__ void add(float* x, float v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] += v;
}

extern "C" __global__ void noargs() {}

// Parameter lists past Launch's 64-byte and 512-byte stack buffers.
struct w25 { int v[25]; };
struct w250 { int v[250]; };

extern "C" __global__ void words25(int* out, w25 w) {
	int s = 0;
	for (int i = 0; i < 25; i++) s += w.v[i] * (i + 1);
	out[0] = s;
	out[1] = w.v[24];
}

extern "C" __global__ void words250(int* out, w250 w) {
	int s = 0;
	for (int i = 0; i < 250; i++) s += w.v[i] * (i + 1);
	out[0] = s;
	out[1] = w.v[249];
}
`

// testKernelSet compiles a CUDA source with Program once per test binary
// and keeps its kernels (and their ObjectCode, which the kernels outlive
// the tests with).
type testKernelSet struct {
	once sync.Once
	err  error
	code *ObjectCode
	ks   map[string]*Kernel
}

// get compiles src with opts on first use and returns the kernels names;
// what names the set when that fails. The first call's options, and so its
// architecture, serve the whole test binary (the tests run on one device
// kind); a name the first call did not load fails the test.
func (st *testKernelSet) get(tb testing.TB, what, src string, opts *ProgramOptions, names ...string) map[string]*Kernel {
	tb.Helper()
	st.once.Do(func() {
		st.err = func() error {
			p, err := NewProgram(src, "c++", opts)
			if err != nil {
				return err
			}
			defer p.Close()
			if st.code, err = p.Compile("cubin"); err != nil {
				return err
			}
			st.ks = map[string]*Kernel{}
			for _, name := range names {
				if st.ks[name], err = st.code.Kernel(name); err != nil {
					return err
				}
			}
			return nil
		}()
	})
	if st.err != nil {
		tb.Fatalf("compiling %s: %v", what, st.err)
	}
	for _, name := range names {
		if st.ks[name] == nil {
			tb.Fatalf("%s: kernel %s was not loaded by the set's first use", what, name)
		}
	}
	return st.ks
}

var testKernels struct {
	once    sync.Once
	err     error
	cubin   []byte         // kept alive for the library
	pin     runtime.Pinner // and pinned: the driver may read it later
	kernels map[string]*Kernel
}

// kernelsFor compiles testSource to CUBIN for dev with NVRTC and loads it
// with cuLibraryLoadData, once per test binary (independent of ObjectCode).
func kernelsFor(t *testing.T, dev *Device) map[string]*Kernel {
	t.Helper()
	testKernels.once.Do(func() {
		testKernels.err = func() error {
			p, err := nvrtc.CreateProgram(testSource, "core_test.cu", 0, nil, nil)
			if err != nil {
				return err
			}
			defer nvrtc.DestroyProgram(&p)
			opts := []string{"-arch=sm_" + dev.Arch()}
			if err := nvrtc.CompileProgram(p, int32(len(opts)), opts); err != nil {
				log, _ := nvrtc.ProgramLog(p)
				return errors.Join(err, errors.New(log))
			}
			cubin, err := nvrtc.CUBIN(p)
			if err != nil {
				return err
			}
			testKernels.cubin = cubin
			testKernels.pin.Pin(&cubin[0])
			lib, err := driver.LibraryLoadData(unsafe.Pointer(&cubin[0]), nil, nil, 0, nil, nil, 0)
			if err != nil {
				return err
			}
			testKernels.kernels = map[string]*Kernel{}
			for _, name := range []string{"saxpy", "mixed", "add", "noargs", "words25", "words250"} {
				k, err := driver.LibraryGetKernel(lib, name)
				if err != nil {
					return err
				}
				testKernels.kernels[name] = newKernel(k, name, nil)
			}
			return nil
		}()
	})
	if testKernels.err != nil {
		t.Fatalf("compiling the test kernels: %v", testKernels.err)
	}
	return testKernels.kernels
}
