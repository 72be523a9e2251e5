package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// Misuse tests: wrong arguments, nil and closed resources, out-of-bounds
// copies and impossible launch shapes give a clear error before the driver
// is called where possible, and never a crash. The CPU tests run without a
// GPU; TestGPUMisuse covers what needs the driver.

// fakeMR (memory_test.go) counts the frees of buffers that never reach
// the driver.

func TestMisuseLaunchConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  LaunchConfig
		want string
	}{
		{LaunchConfig{Grid: Dim(1), Block: Dim(2048)}, "more than 1024"},
		{LaunchConfig{Grid: Dim(1), Block: Dim(32, 32, 2)}, "more than 1024"},
		{LaunchConfig{Grid: Dim(1), Block: Dim(1<<31, 1<<31, 4)}, "more than 1024"},
		{LaunchConfig{Grid: Dim(1), Block: Dim(1, 1, 65)}, "z may be at most 64"},
		{LaunchConfig{Grid: Dim(0), Block: Dim(1)}, "zero dimension"},
		{LaunchConfig{Grid: Dim(1), Block: Dim3{}}, "zero dimension"},
		{LaunchConfig{Grid: Dim(1, 70000), Block: Dim(1)}, "larger than"},
		{LaunchConfig{Grid: Dim(1 << 31), Block: Dim(1)}, "larger than"},
		{LaunchConfig{Grid: Dim(3), Block: Dim(1), Cluster: Dim(2)}, "not a multiple"},
		{LaunchConfig{Grid: Dim(4), Block: Dim(1), Cluster: Dim3{2, 0, 1}}, "zero dimension"},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want an error with %q", c.cfg, err, c.want)
		}
		// Launch refuses it before touching the stream or the kernel's
		// code (both fake here).
		k := newKernel(0, "k", nil)
		if err := Launch(&Stream{}, c.cfg, k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Launch(%+v) = %v", c.cfg, err)
		}
	}
}

func TestMisuseLaunchNil(t *testing.T) {
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(1)}
	if err := Launch(&Stream{}, cfg, nil); err == nil || !strings.Contains(err.Error(), "nil *Kernel") {
		t.Errorf("Launch(nil kernel) = %v", err)
	}
	if err := Launch(nil, cfg, newKernel(0, "k", nil)); err == nil || !strings.Contains(err.Error(), "nil *Stream") {
		t.Errorf("Launch(nil stream) = %v", err)
	}
	closed := &Stream{}
	closed.life.close()
	if err := Launch(closed, cfg, newKernel(0, "k", nil)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch on a closed stream = %v, want ErrClosed", err)
	}
}

func TestMisuseKernelOfClosedCode(t *testing.T) {
	o := newObjectCode(CodeCubin, []byte("\x7fELF"), "fake", nil, nil)
	k := newKernel(1, "k", o)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(1)}
	if err := Launch(&Stream{}, cfg, k); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch of a kernel of closed code = %v, want ErrClosed", err)
	}
	if _, err := k.Arguments(); !errors.Is(err, ErrClosed) {
		t.Errorf("Arguments of a kernel of closed code = %v, want ErrClosed", err)
	}
	if _, err := k.Attribute(nil, driver.FuncAttributeNumRegs); !errors.Is(err, ErrClosed) {
		t.Errorf("Attribute of a kernel of closed code = %v, want ErrClosed", err)
	}
	if err := k.SetMaxDynamicSharedMemory(nil, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("SetMaxDynamicSharedMemory of a kernel of closed code = %v, want ErrClosed", err)
	}
	if _, err := k.MaxActiveBlocksPerMultiprocessor(nil, 32, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("MaxActiveBlocksPerMultiprocessor = %v, want ErrClosed", err)
	}
	if _, _, err := k.SuggestedBlockSize(nil, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("SuggestedBlockSize = %v, want ErrClosed", err)
	}
	if _, err := o.Kernel("k"); !errors.Is(err, ErrClosed) {
		t.Errorf("ObjectCode.Kernel after Close = %v, want ErrClosed", err)
	}
	// A kernel of the code made after its Close is closed too.
	if err := Launch(&Stream{}, cfg, newKernel(2, "late", o)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch of a kernel made after its code's Close = %v, want ErrClosed", err)
	}
	if err := o.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestMisusePackArgs(t *testing.T) {
	params := []ArgumentInfo{{0, 4}, {8, 8}}
	buf := make([]byte, 16)
	closed := NewBuffer(0, 0, &fakeMR{}, nil)
	closed.Close()
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{int32(1)}, "takes 2 arguments, got 1"},
		{[]any{int32(1), 2, 3}, "takes 2 arguments, got 3"},
		{[]any{1, 2}, "argument 0 is int (8 bytes) but parameter 0 takes 4 bytes"},
		{[]any{int32(1), int32(2)}, "argument 1 is int32 (4 bytes)"},
		{[]any{int32(1), "str"}, "unsupported type string"},
		{[]any{int32(1), nil}, "unsupported type nil"},
		{[]any{int32(1), []float32{1}}, "unsupported type []float32"},
		{[]any{int32(1), (*Buffer)(nil)}, "nil *Buffer"},
		{[]any{int32(1), closed}, ErrClosed.Error()},
		{[]any{Bytes{1, 2, 3}, 2}, "core.Bytes (3 bytes)"},
	} {
		clear(buf)
		err := packArgs(buf, "k", params, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("packArgs(%v) = %v, want %q", c.args, err, c.want)
		}
	}
	// A parameter layout that does not fit (a corrupt cuKernelGetParamInfo
	// answer) is an error, not a write out of bounds.
	if err := packArgs(make([]byte, 4), "k", []ArgumentInfo{{8, 8}}, []any{1}); err == nil {
		t.Error("packArgs outside the buffer succeeded")
	}
	if err := packArgs(make([]byte, 4), "k", []ArgumentInfo{{-4, 8}}, []any{1}); err == nil {
		t.Error("packArgs at a negative offset succeeded")
	}
}

func TestMisuseBuffer(t *testing.T) {
	mr := &fakeMR{}
	b := NewBuffer(0x1000, 64, mr, nil)
	if err := CopyToDevice(b, make([]byte, 65)); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("CopyToDevice of 65 bytes into 64 = %v", err)
	}
	if err := CopyFromDevice(make([]float32, 17), b); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("CopyFromDevice of 68 bytes from 64 = %v", err)
	}
	if err := CopyToDeviceAsync(nil, b, make([]uint64, 9)); err == nil {
		t.Error("CopyToDeviceAsync of 72 bytes into 64 succeeded")
	}
	if err := CopyFromDeviceAsync(nil, make([]uint64, 9), b); err == nil {
		t.Error("CopyFromDeviceAsync of 72 bytes from 64 succeeded")
	}
	big := NewBuffer(0x2000, 128, mr, nil)
	if err := b.CopyFrom(big); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("CopyFrom of a larger buffer = %v", err)
	}
	if err := CopyToDevice(b, []*int{nil}); err == nil || !strings.Contains(err.Error(), "Go pointers") {
		t.Errorf("CopyToDevice of pointers = %v", err)
	}
	odd := NewBuffer(0x3000, 6, mr, nil)
	if err := odd.Memset32(1); err == nil {
		t.Error("Memset32 of 6 bytes succeeded")
	}
	// nil buffers and streams.
	if err := CopyToDevice[byte](nil, []byte{1}); err == nil {
		t.Error("CopyToDevice(nil) succeeded")
	}
	if err := CopyFromDevice[byte]([]byte{1}, nil); err == nil {
		t.Error("CopyFromDevice(nil) succeeded")
	}
	if err := CopyToDeviceAsync[byte](nil, nil, []byte{1}); err == nil {
		t.Error("CopyToDeviceAsync(nil) succeeded")
	}
	if err := CopyFromDeviceAsync[byte](nil, []byte{1}, nil); err == nil {
		t.Error("CopyFromDeviceAsync(nil) succeeded")
	}
	if err := b.CopyFrom(nil); err == nil {
		t.Error("CopyFrom(nil) succeeded")
	}
	if err := b.CopyFromAsync(nil, big); err == nil {
		t.Error("CopyFromAsync(nil stream) succeeded")
	}
	if err := b.Memset8Async(nil, 0); err == nil {
		t.Error("Memset8Async(nil stream) succeeded")
	}
	// Close, double Close, use after Close.
	for _, x := range []*Buffer{b, big, odd} {
		closeTwice(t, x)
	}
	if n := mr.freed.Load(); n != 3 {
		t.Errorf("3 buffers closed twice freed %d times, want 3", n)
	}
	if b.Ptr() != 0 {
		t.Errorf("Ptr after Close = %#x, want 0", b.Ptr())
	}
	if err := CopyToDevice(b, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyToDevice after Close = %v, want ErrClosed", err)
	}
	if err := CopyFromDevice([]byte{1}, b); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyFromDevice after Close = %v, want ErrClosed", err)
	}
	if err := b.Memset8(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Memset8 after Close = %v, want ErrClosed", err)
	}
	if _, err := b.Bytes(); !errors.Is(err, ErrClosed) {
		t.Errorf("Bytes after Close = %v, want ErrClosed", err)
	}
	if err := b.CopyFrom(NewBuffer(0, 0, mr, nil)); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyFrom into a closed buffer = %v, want ErrClosed", err)
	}
}

func TestMisuseClosedCompilers(t *testing.T) {
	p, err := NewProgram(saxpySrc, "c++", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Compile("ptx"); !errors.Is(err, ErrClosed) {
		t.Errorf("Compile after Close = %v", err)
	}
	if _, err := p.LoweredName("x"); !errors.Is(err, ErrClosed) {
		t.Errorf("LoweredName after Close = %v", err)
	}
	if _, err := NewProgram("", "c++", nil); err == nil {
		t.Error("NewProgram of empty code succeeded")
	}
	if _, err := NewProgram("x", "fortran", nil); err == nil {
		t.Error("NewProgram of code type fortran succeeded")
	}
	if _, err := p.Compile("sass"); err == nil {
		t.Error("Compile to sass succeeded")
	}
	if _, err := NewLinker(nil); err == nil {
		t.Error("NewLinker(nil options) succeeded")
	}
	b, err := NewFatbinBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddPTX([]byte(".version 8.0\n.target sm_90\n"), "", "x", ""); !errors.Is(err, ErrClosed) {
		t.Errorf("AddPTX after Close = %v", err)
	}
	if err := b.Add(nil, ""); err == nil {
		t.Error("Add(nil) succeeded")
	}
}

// TestGPUMisuse checks the misuses that need a device: real kernels with
// wrong arguments, closed streams, events and buffers, copies past a
// buffer's end, shapes beyond the device's limits and a kernel whose code
// was closed. After all of them the context still works.
func TestGPUMisuse(t *testing.T) {
	dev := requireGPU(t)
	ks := kernelsFor(t, dev)
	s := try(dev.NewStream(nil)).must(t)
	defer s.Close()
	x := try(dev.Allocate(256*4, s)).must(t)
	defer x.Close()
	cfg := LaunchConfig{Grid: Dim(1), Block: Dim(256)}
	add := ks["add"] // add(float* x, float v, int n)

	expect := func(what string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s succeeded", what)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s = %v, want it to mention %q", what, err, w)
			}
		}
	}
	expect("wrong count", Launch(s, cfg, add, x, float32(1)), "takes 3 arguments, got 2")
	expect("wrong size", Launch(s, cfg, add, x, 1.0, int32(256)), "float64 (8 bytes)")
	expect("int for int", Launch(s, cfg, add, x, float32(1), 256), "int (8 bytes)")
	expect("block 2048", Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(2048)}, add, x, float32(1), int32(256)), "1024")
	smem := uint32(dev.MaxSharedMemoryPerBlockOptin() + 1)
	expect("shared memory over the limit", Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(32), SharedMemory: smem}, add, x, float32(1), int32(256)))
	expect("grid too large", Launch(s, LaunchConfig{Grid: Dim(1, 1<<17), Block: Dim(32)}, add, x, float32(1), int32(256)), "larger than")
	expect("copy past the end", CopyToDevice(x, make([]float32, 257)), "do not fit")
	expect("copy out past the end", CopyFromDevice(make([]float32, 257), x), "do not fit")

	// Closed buffer: as argument, as copy target, double Close.
	y := try(dev.Allocate(64, s)).must(t)
	y.Close()
	if err := y.Close(); err != nil {
		t.Errorf("second Buffer.Close = %v", err)
	}
	if err := Launch(s, cfg, add, y, float32(1), int32(16)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch with a closed buffer = %v", err)
	}
	if err := CopyToDevice(y, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyToDevice into a closed buffer = %v", err)
	}
	if err := x.CopyFrom(y); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyFrom a closed buffer = %v", err)
	}

	// Closed stream and event.
	s2 := try(dev.NewStream(nil)).must(t)
	s2.Close()
	if err := s2.Close(); err != nil {
		t.Errorf("second Stream.Close = %v", err)
	}
	if err := Launch(s2, cfg, add, x, float32(1), int32(256)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch on a closed stream = %v", err)
	}
	if err := s2.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync of a closed stream = %v", err)
	}
	if _, err := dev.Allocate(64, s2); err == nil {
		t.Error("Allocate on a closed stream succeeded")
	}
	if err := CopyToDeviceAsync(s2, x, []float32{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyToDeviceAsync on a closed stream = %v", err)
	}
	ev := try(dev.NewEvent(nil)).must(t)
	ev.Close()
	if err := ev.Close(); err != nil {
		t.Errorf("second Event.Close = %v", err)
	}
	if err := ev.Record(s); !errors.Is(err, ErrClosed) {
		t.Errorf("Record of a closed event = %v", err)
	}
	if err := s.Wait(ev); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait on a closed event = %v", err)
	}
	e1, _ := dev.NewEvent(nil)
	e2, _ := dev.NewEvent(nil)
	if _, err := Elapsed(e1, e2); err == nil {
		t.Error("Elapsed of unrecorded events without timing succeeded")
	}
	e1.Close()
	e2.Close()

	// A kernel of closed code.
	p := mustProgram(t, testSource, "c++", &ProgramOptions{Arch: "sm_" + dev.Arch()})
	code := mustCompile(t, p, "cubin")
	k := try(code.Kernel("add")).must(t)
	if err := Launch(s, cfg, k, x, float32(1), int32(256)); err != nil {
		t.Fatalf("Launch before Close: %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	code.Close()
	if err := Launch(s, cfg, k, x, float32(1), int32(256)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch of a kernel of closed code = %v, want ErrClosed", err)
	}
	if _, err := k.NumRegisters(dev); !errors.Is(err, ErrClosed) {
		t.Errorf("NumRegisters of a kernel of closed code = %v, want ErrClosed", err)
	}
	if _, err := code.Kernel("nope"); !errors.Is(err, ErrClosed) {
		t.Errorf("Kernel after Close = %v", err)
	}

	// A name that is not there.
	code2 := mustCompile(t, p, "cubin")
	defer code2.Close()
	if _, err := code2.Kernel("no_such_kernel"); err == nil || !strings.Contains(err.Error(), "saxpy") {
		t.Errorf("Kernel(no_such_kernel) = %v, want the list of kernels", err)
	}

	// The context survived all of it.
	if err := x.Memset32(0); err != nil {
		t.Fatal(err)
	}
	if err := Launch(s, cfg, add, x, float32(2), int32(256)); err != nil {
		t.Fatal(err)
	}
	wantEach(t, "x after the misuses", readBack[float32](t, x, 256), func(int) float32 { return 2 })
}
