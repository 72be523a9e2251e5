package nvtx_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/nvtx"
	"github.com/cudago/cudago/internal/cudaheaders"
)

// NVTX initializes once per process, from the environment: each test that
// needs a given environment runs its scenario in a child process, the test
// binary itself running TestChild.
const childEnv = "CUDAGO_NVTX_TEST_CHILD"

// runChild runs scenario in a child with the parent's environment less
// anything NVTX reads, plus env, and returns its output.
func runChild(t *testing.T, scenario string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "NVTX_") && k != "FAKE_NVTX_LOG" && k != childEnv {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+scenario)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestChild")) {
		t.Fatalf("child %s: %v\n%s", scenario, err, out)
	}
	return string(out)
}

// TestChild is the child's side of runChild.
func TestChild(t *testing.T) {
	switch s := os.Getenv(childEnv); s {
	case "":
		t.Skip("runs only as the child process of the other tests")
	case "notool":
		noToolScenario(t)
	case "tool":
		toolScenario(t)
	default:
		t.Fatalf("unknown scenario %q", s)
	}
}

// everything makes every call of the package once, with the default and
// a created domain.
func everything(d *nvtx.Domain) {
	a := nvtx.Attributes{Color: nvtx.RGB(1, 2, 3), Category: 1, Payload: nvtx.Float64(1.5)}
	nvtx.Mark("m")
	nvtx.MarkEx("m", a)
	nvtx.RangePush("p")
	nvtx.RangePushEx("p", a)
	nvtx.RangePop()
	nvtx.RangePop()
	nvtx.RangeEnd(nvtx.RangeStart("s"))
	nvtx.RangeEnd(nvtx.RangeStartEx("s", a))
	nvtx.Range("r")()
	nvtx.RangeEx("r", a)()
	nvtx.NameCategory(1, "c")
	nvtx.NameOSThread(1, "t")
	for _, d := range []*nvtx.Domain{d, nil} {
		d.Mark("m")
		d.MarkEx("m", a)
		d.RangePush("p")
		d.RangePushEx("p", a)
		d.RangePop()
		d.RangePop()
		d.RangeEnd(d.RangeStart("s"))
		d.RangeEnd(d.RangeStartEx("s", a))
		d.Range("r")()
		d.RangeEx("r", a)()
		d.NameCategory(1, "c")
	}
}

// noToolScenario: without a tool, every call returns the documented value,
// and after the first (which initializes NVTX) none enters C or allocates.
func noToolScenario(t *testing.T) {
	a := nvtx.Attributes{Color: nvtx.RGB(1, 2, 3), Category: 1, Payload: nvtx.Int64(-1)}
	d := nvtx.NewDomain("cudago")
	if d == nil || d.Name() != "cudago" {
		t.Fatalf("NewDomain = %v", d)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"RangePush", nvtx.RangePush("p"), nvtx.NoPushPopTracking},
		{"RangePushEx", nvtx.RangePushEx("p", a), nvtx.NoPushPopTracking},
		{"RangePop", nvtx.RangePop(), nvtx.NoPushPopTracking},
		{"RangeStart", int(nvtx.RangeStart("s")), 0},
		{"RangeStartEx", int(nvtx.RangeStartEx("s", a)), 0},
		{"Domain.RangePush", d.RangePush("p"), nvtx.NoPushPopTracking},
		{"Domain.RangePushEx", d.RangePushEx("p", a), nvtx.NoPushPopTracking},
		{"Domain.RangePop", d.RangePop(), nvtx.NoPushPopTracking},
		{"Domain.RangeStart", int(d.RangeStart("s")), 0},
		{"Domain.RangeStartEx", int(d.RangeStartEx("s", a)), 0},
		{"nil Domain.RangePush", (*nvtx.Domain)(nil).RangePush("p"), nvtx.NoPushPopTracking},
		{"nil Domain.RangePop", (*nvtx.Domain)(nil).RangePop(), nvtx.NoPushPopTracking},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	everything(d)
	if nvtx.Enabled() {
		t.Fatal("Enabled() = true without a tool")
	}
	cgo := runtime.NumCgoCall()
	buf := []byte("step 00")
	if n := testing.AllocsPerRun(100, func() {
		everything(d)
		// A name built on the stack stays there: it does not escape.
		buf[5]++
		nvtx.Mark(string(buf))
		defer nvtx.Range(string(buf))()
	}); n != 0 {
		t.Errorf("%v allocations per run without a tool, want 0", n)
	}
	if n := runtime.NumCgoCall() - cgo; n != 0 {
		t.Errorf("%d cgo calls without a tool, want 0", n)
	}
	d.Close()
	d.Close()
	if got := d.RangePush("p"); got != nvtx.NoPushPopTracking {
		t.Errorf("RangePush after Close = %d", got)
	}
}

func TestNoTool(t *testing.T) {
	runChild(t, "notool")
}

// A tool path that does not load, a library without
// InitializeInjectionNvtx2, or one whose initialization fails (the fake
// without FAKE_NVTX_LOG): NVTX falls back to no-ops.
func TestBadTool(t *testing.T) {
	runChild(t, "notool", "NVTX_INJECTION64_PATH="+filepath.Join(t.TempDir(), "missing.so"))
	noInit := buildLib(t, "int cudago_not_a_tool(void) { return 0; }")
	runChild(t, "notool", "NVTX_INJECTION64_PATH="+noInit)
	runChild(t, "notool", "NVTX_INJECTION64_PATH="+fakeLib(t))
}

// buildLib compiles C source into a shared library, skipping the test
// where there is no gcc (the GPU machine).
func buildLib(t *testing.T, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to build a fake injection library")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "lib.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "lib.so")
	args := append([]string{"-shared", "-fPIC", "-Wall", "-Werror", "-o", lib, c}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return lib
}

// fakeLib builds testdata/fakeinject.c, against the package's NVTX headers.
func fakeLib(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("testdata/fakeinject.c")
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return buildLib(t, string(src), "-I"+wd, "-lpthread")
}

const concurrent = 8 * 50

// toolScenario makes the calls that TestInjection expects the fake tool to
// record, and checks what the fake returned.
func toolScenario(t *testing.T) {
	// First calls from many goroutines at once: NVTX initializes once.
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			<-start
			for range concurrent / 8 {
				nvtx.Mark("concurrent")
			}
		})
	}
	close(start)
	wg.Wait()
	if !nvtx.Enabled() {
		t.Fatal("Enabled() = false with the fake tool")
	}
	want := func(what string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s returned %d, want %d", what, got, want)
		}
	}
	// blocky gives the scheduler every chance to move the goroutine to
	// another thread.
	blocky := func() {
		for range 20 {
			time.Sleep(50 * time.Microsecond)
			runtime.Gosched()
		}
	}

	nvtx.Mark("hello")
	nvtx.MarkEx("attrs", nvtx.Attributes{Color: nvtx.RGB(0x12, 0x34, 0x56), Category: 7, Payload: nvtx.Int64(-5)})
	nvtx.NameCategory(7, "copies")
	nvtx.NameOSThread(4242, "worker")

	runtime.LockOSThread()
	want("RangePush", nvtx.RangePush("outer"), 0)
	want("RangePushEx", nvtx.RangePushEx("inner", nvtx.Attributes{Payload: nvtx.Float64(2.5)}), 1)
	want("RangePop", nvtx.RangePop(), 1)
	want("RangePop", nvtx.RangePop(), 0)
	runtime.UnlockOSThread()

	id := nvtx.RangeStart("async")
	want("RangeStart", int(id), 100)
	done := make(chan struct{})
	go func() { nvtx.RangeEnd(id); close(done) }()
	<-done
	id = nvtx.RangeStartEx("async-ex", nvtx.Attributes{Color: nvtx.ARGB(0x80, 1, 2, 3), Payload: nvtx.Uint64(1 << 40)})
	want("RangeStartEx", int(id), 101)
	nvtx.RangeEnd(id)

	func() {
		defer nvtx.Range("helper")()
		blocky()
		func() {
			defer nvtx.RangeEx("nested", nvtx.Attributes{Category: 7, Payload: nvtx.Int32(-3)})()
			blocky()
		}()
		blocky()
	}()

	nvtx.MarkEx("u32", nvtx.Attributes{Payload: nvtx.Uint32(4000000000)})
	nvtx.MarkEx("f32", nvtx.Attributes{Payload: nvtx.Float32(1.5)})
	nvtx.Mark(strings.Repeat("a", 300))
	nvtx.Mark(strings.Repeat("b", 255))
	nvtx.Mark(strings.Repeat("c", 256))
	nvtx.Mark("before\x00after")
	nvtx.Mark("")

	d := nvtx.NewDomain("cudago")
	d.NameCategory(1, "alloc")
	d.Mark("dm")
	d.MarkEx("dmx", nvtx.Attributes{Color: nvtx.RGB(255, 0, 0), Category: 1, Payload: nvtx.Float64(0.25)})
	runtime.LockOSThread()
	want("Domain.RangePush", d.RangePush("dp"), 0)
	want("RangePush", nvtx.RangePush("global"), 0)
	want("Domain.RangePop", d.RangePop(), 0)
	want("RangePop", nvtx.RangePop(), 0)
	runtime.UnlockOSThread()
	id = d.RangeStart("ds")
	want("Domain.RangeStart", int(id), 102)
	d.RangeEnd(id)
	func() {
		defer d.RangeEx("dr", nvtx.Attributes{Color: nvtx.RGB(0, 0, 255)})()
		blocky()
	}()

	var def *nvtx.Domain
	def.Mark("default")
	func() {
		defer def.Range("dflt")()
		blocky()
	}()

	other := nvtx.NewDomain("other")
	other.Close()
	other.Close()
	other.Mark("after close")
	want("closed Domain.RangePush", other.RangePush("after close"), nvtx.NoPushPopTracking)
	defer other.Range("after close")()

	nvtx.Mark("done")
}

// toolWant is what the fake records of toolScenario, after the
// concurrent marks and its init line.
var toolWant = []string{
	`MarkA "hello"`,
	`MarkEx "attrs" cat=7 color=0xff123456 payload=int64:-5`,
	`NameCategoryA 7 "copies"`,
	`NameOsThreadA 4242 "worker"`,
	`RangePushA "outer" level=0`,
	`RangePushEx "inner" cat=0 color=none(0,0x0) payload=double:2.5 level=1`,
	`RangePop level=1`,
	`RangePop level=0`,
	`RangeStartA "async" -> 100`,
	`RangeEnd 100`,
	`RangeStartEx "async-ex" cat=0 color=0x80010203 payload=uint64:1099511627776 -> 101`,
	`RangeEnd 101`,
	// The pops find their pushes on the same thread: Range locked it.
	`RangePushA "helper" level=0`,
	`RangePushEx "nested" cat=7 color=none(0,0x0) payload=int32:-3 level=1`,
	`RangePop level=1`,
	`RangePop level=0`,
	`MarkEx "u32" cat=0 color=none(0,0x0) payload=uint32:4000000000`,
	`MarkEx "f32" cat=0 color=none(0,0x0) payload=float:1.5`,
	`MarkA "` + strings.Repeat("a", 300) + `"`,
	`MarkA "` + strings.Repeat("b", 255) + `"`,
	`MarkA "` + strings.Repeat("c", 256) + `"`,
	`MarkA "before"`,
	`MarkA ""`,
	`DomainCreateA "cudago" -> d1`,
	`DomainNameCategoryA d1 1 "alloc"`,
	`DomainMarkEx d1 "dm" cat=0 color=none(0,0x0) payload=none`,
	`DomainMarkEx d1 "dmx" cat=1 color=0xffff0000 payload=double:0.25`,
	`DomainRangePushEx d1 "dp" cat=0 color=none(0,0x0) payload=none level=0`,
	`RangePushA "global" level=0`,
	`DomainRangePop d1 level=0`,
	`RangePop level=0`,
	`DomainRangeStartEx d1 "ds" cat=0 color=none(0,0x0) payload=none -> 102`,
	`DomainRangeEnd d1 102`,
	`DomainRangePushEx d1 "dr" cat=0 color=0xff0000ff payload=none level=0`,
	`DomainRangePop d1 level=0`,
	`DomainMarkEx d0 "default" cat=0 color=none(0,0x0) payload=none`,
	`DomainRangePushEx d0 "dflt" cat=0 color=none(0,0x0) payload=none level=0`,
	`DomainRangePop d0 level=0`,
	`DomainCreateA "other" -> d2`,
	`DomainDestroy d2`,
	`MarkA "done"`,
}

// TestInjection loads the fake tool through NVTX_INJECTION64_PATH, as
// Nsight Systems does, and checks every call the child made, in order.
func TestInjection(t *testing.T) {
	lib := fakeLib(t)
	log := filepath.Join(t.TempDir(), "nvtx.log")
	runChild(t, "tool", "NVTX_INJECTION64_PATH="+lib, "FAKE_NVTX_LOG="+log)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var inits, marks int
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "init "):
			inits++
			if line != "init #1 version=3" {
				t.Errorf("init line %q, want %q", line, "init #1 version=3")
			}
		case line == `MarkA "concurrent"`:
			if len(got) > 0 {
				t.Errorf("a concurrent mark after %q", got[len(got)-1])
			}
			marks++
		default:
			got = append(got, line)
		}
	}
	if inits != 1 {
		t.Errorf("the tool was initialized %d times, want once", inits)
	}
	if marks != concurrent {
		t.Errorf("%d concurrent marks recorded, want %d", marks, concurrent)
	}
	if !slices.Equal(got, toolWant) {
		t.Errorf("the fake tool recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(toolWant, "\n"))
	}
}

func TestColor(t *testing.T) {
	if got := nvtx.RGB(0x12, 0x34, 0x56); got != 0xFF123456 {
		t.Errorf("RGB = %#x", got)
	}
	if got := nvtx.ARGB(0x80, 0xFE, 0, 0x01); got != 0x80FE0001 {
		t.Errorf("ARGB = %#x", got)
	}
}

// The vendored headers are NVTX 3 as CUDA 13.0's headers have it,
// unmodified, each under the license that nvtx3/LICENSE.txt holds. They are
// compared with CUDA 13.0's where internal/cudaheaders finds them (CI sets
// CUDAGO_CUDA_HEADERS, and then they must be found).
func TestVendoredHeaders(t *testing.T) {
	lic, err := os.ReadFile("nvtx3/LICENSE.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(lic, []byte("Apache License")) || !bytes.Contains(lic, []byte("LLVM Exceptions to the Apache 2.0 License")) {
		t.Error("nvtx3/LICENSE.txt is not Apache-2.0 with LLVM exception")
	}
	files, err := filepath.Glob("nvtx3/*.h")
	if err != nil {
		t.Fatal(err)
	}
	detail, _ := filepath.Glob("nvtx3/nvtxDetail/*.h")
	files = append(files, detail...)
	if len(files) < 8 {
		t.Fatalf("only %d vendored headers: %v", len(files), files)
	}
	hs := cudaheaders.Find("")
	shared, haveShared := hs.Dir("13.0", "nvtx3/nvToolsExt.h")
	if !haveShared && hs.Explicit {
		t.Fatal(hs.Check(cudaheaders.Header{Version: "13.0", File: "nvtx3/nvToolsExt.h"}))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception")) {
			t.Errorf("%s has no Apache-2.0 WITH LLVM-exception notice", f)
		}
		if !haveShared {
			continue
		}
		orig, err := os.ReadFile(filepath.Join(shared, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
		} else if !bytes.Equal(b, orig) {
			t.Errorf("%s differs from %s", f, filepath.Join(shared, f))
		}
	}
	if !haveShared {
		t.Logf("not compared: %v", hs.Check(cudaheaders.Header{Version: "13.0", File: "nvtx3/nvToolsExt.h"}))
	}
}
