package core

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain keeps the tests of package core off the user's compile cache:
// every test binary gets a fresh cache directory, which the tests that
// check the cache replace with their own.
func TestMain(m *testing.M) {
	if os.Getenv("CUDAGO_CACHE_TEST_CHILD") == "" {
		dir, err := os.MkdirTemp("", "cudago-cache-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Setenv("CUDAGO_CACHE_DIR", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// useCacheDir points the cache at a fresh directory for one test.
func useCacheDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("CUDAGO_CACHE_DIR", dir)
	t.Setenv("CUDAGO_CACHE", "")
	t.Setenv("CUDAGO_CACHE_MAX", "")
	return dir
}

// cacheFiles lists the entries under dir.
func cacheFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".cgc") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func testEntry(key string, n int) *cacheEntry {
	code := bytes.Repeat([]byte{byte(n), 0xC0, 0xDE}, 100+n)
	return &cacheEntry{Key: key, Type: CodeCubin, Name: "prog", Symbols: map[string]string{"k<int>": "_Z1kIiEvv"},
		Log: "warning: x", Lowered: map[string]string{"k<int>": "_Z1kIiEvv"}, code: code}
}

func testKey(s string) string {
	k := newKeyer("test")
	k.add(s)
	return k.sum()
}

func TestCacheHitMiss(t *testing.T) {
	dir := useCacheDir(t)
	c := activeCache()
	if c == nil || c.dir != dir || c.max != DefaultCacheMaxBytes {
		t.Fatalf("activeCache = %+v, want dir %s", c, dir)
	}
	key := testKey("a")
	if e := c.get(key); e != nil {
		t.Fatal("hit in an empty cache")
	}
	want := testEntry(key, 1)
	if err := c.put(want); err != nil {
		t.Fatal(err)
	}
	e := c.get(key)
	if e == nil {
		t.Fatal("miss after put")
	}
	if !bytes.Equal(e.code, want.code) || e.Type != want.Type || e.Name != want.Name ||
		e.Log != want.Log || e.Symbols["k<int>"] != "_Z1kIiEvv" || e.Lowered["k<int>"] != "_Z1kIiEvv" {
		t.Fatalf("got %+v, want %+v", e, want)
	}
	if c.get(testKey("b")) != nil {
		t.Fatal("hit for another key")
	}
	// An entry stored under the wrong name (a key mismatch) is corrupt.
	other := testKey("c")
	os.MkdirAll(filepath.Dir(c.path(other)), 0o755)
	b, _ := os.ReadFile(c.path(key))
	os.WriteFile(c.path(other), b, 0o644)
	if c.get(other) != nil {
		t.Fatal("entry of another key accepted")
	}
}

func TestCacheDefaultLocation(t *testing.T) {
	t.Setenv("CUDAGO_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg-test")
	d, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ucd, _ := os.UserCacheDir()
	if d != filepath.Join(ucd, "cudago") {
		t.Fatalf("CacheDir = %q, want %q", d, filepath.Join(ucd, "cudago"))
	}
	t.Setenv("CUDAGO_CACHE_DIR", "/x/y")
	if d, _ := CacheDir(); d != "/x/y" {
		t.Fatalf("CacheDir = %q with CUDAGO_CACHE_DIR=/x/y", d)
	}
	for v, want := range map[string]int64{"": DefaultCacheMaxBytes, "1000": 1000, "2K": 2048, "3M": 3 << 20, "1G": 1 << 30, "bad": DefaultCacheMaxBytes} {
		t.Setenv("CUDAGO_CACHE_MAX", v)
		if got := cacheMaxBytes(); got != want {
			t.Errorf("CUDAGO_CACHE_MAX=%q: %d, want %d", v, got, want)
		}
	}
}

func TestCacheCorruption(t *testing.T) {
	useCacheDir(t)
	c := activeCache()
	key := testKey("corrupt")
	want := testEntry(key, 2)
	if err := c.put(want); err != nil {
		t.Fatal(err)
	}
	p := c.path(key)
	good, _ := os.ReadFile(p)
	for _, off := range []int{0, 5, len(cacheMagic) + 2, len(good) / 2, len(good) - 40, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[off] ^= 0x40
		os.WriteFile(p, bad, 0o644)
		before := cacheState.corrupt.Load()
		if c.get(key) != nil {
			t.Fatalf("flipped byte %d: corrupted entry accepted", off)
		}
		if cacheState.corrupt.Load() != before+1 {
			t.Fatalf("flipped byte %d: not counted as corrupt", off)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("flipped byte %d: corrupted entry not removed", off)
		}
	}
	// Rebuilt: the next put makes a good entry again.
	c.put(want)
	if e := c.get(key); e == nil || !bytes.Equal(e.code, want.code) {
		t.Fatal("no hit after the entry was rebuilt")
	}
}

func TestCacheTruncation(t *testing.T) {
	useCacheDir(t)
	c := activeCache()
	key := testKey("trunc")
	c.put(testEntry(key, 3))
	p := c.path(key)
	good, _ := os.ReadFile(p)
	for _, n := range []int{0, 1, len(cacheMagic), len(cacheMagic) + 4, len(good) / 3, len(good) - 32, len(good) - 1} {
		os.WriteFile(p, good[:n], 0o644)
		if c.get(key) != nil {
			t.Fatalf("entry truncated to %d of %d bytes accepted", n, len(good))
		}
	}
	// Appended garbage is caught too.
	os.WriteFile(p, append(bytes.Clone(good), 0), 0o644)
	if c.get(key) != nil {
		t.Fatal("entry with a trailing byte accepted")
	}
}

// TestCacheChildHelper is the child process of TestCacheConcurrent.
func TestCacheChildHelper(t *testing.T) {
	if os.Getenv("CUDAGO_CACHE_TEST_CHILD") == "" {
		t.Skip("child process of TestCacheConcurrent")
	}
	hammerCache(t, os.Getenv("CUDAGO_CACHE_TEST_KEY"), 200)
}

// hammerCache reads the key, writing it on a miss, n times, and fails on
// any entry that is not the one every writer writes.
func hammerCache(t testing.TB, key string, n int) {
	c := activeCache()
	want := testEntry(key, 7)
	for i := 0; i < n; i++ {
		if e := c.get(key); e != nil {
			if !bytes.Equal(e.code, want.code) || e.Name != want.Name {
				t.Errorf("read a wrong entry")
				return
			}
			if i%10 == 0 {
				os.Remove(c.path(key)) // force more writes
			}
			continue
		}
		if err := c.put(want); err != nil {
			t.Errorf("put: %v", err)
			return
		}
	}
}

func TestCacheConcurrent(t *testing.T) {
	dir := useCacheDir(t)
	key := testKey("shared")
	before := cacheState.corrupt.Load()
	var children []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChildHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CUDAGO_CACHE_TEST_CHILD=1", "CUDAGO_CACHE_DIR="+dir, "CUDAGO_CACHE_TEST_KEY="+key)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, cmd)
		outs = append(outs, out)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hammerCache(t, key, 200)
		}()
	}
	wg.Wait()
	for i, cmd := range children {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
	}
	if n := cacheState.corrupt.Load() - before; n != 0 {
		t.Fatalf("%d corrupted reads while processes shared the cache", n)
	}
	if e := activeCache().get(key); e == nil {
		// The last one may have removed it; one more put must work.
		activeCache().put(testEntry(key, 7))
	}
	// No temporary file is left behind.
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestCacheEviction(t *testing.T) {
	dir := useCacheDir(t)
	c := activeCache()
	c.max = 1 << 40 // no trimming while filling
	var keys []string
	for i := 0; i < 10; i++ {
		k := testKey("evict" + strconv.Itoa(i))
		keys = append(keys, k)
		c.put(testEntry(k, i))
		// Oldest first: entry i was used i hours ago... reversed.
		mt := time.Now().Add(-time.Duration(10-i) * time.Hour)
		os.Chtimes(c.path(k), mt, mt)
	}
	var total int64
	sizes := map[string]int64{}
	for _, k := range keys {
		fi, _ := os.Stat(c.path(k))
		sizes[k] = fi.Size()
		total += fi.Size()
	}
	// A hit refreshes an old entry: keys[0] becomes the most recent.
	if c.get(keys[0]) == nil {
		t.Fatal("miss")
	}
	// Keep about half.
	c.max = total / 2
	if err := c.trim(); err != nil {
		t.Fatal(err)
	}
	var left int64
	for _, p := range cacheFiles(t, dir) {
		fi, _ := os.Stat(p)
		left += fi.Size()
	}
	if left > c.max {
		t.Fatalf("%d bytes left, bound %d", left, c.max)
	}
	if _, err := os.Stat(c.path(keys[0])); err != nil {
		t.Fatal("the recently used entry was evicted")
	}
	if _, err := os.Stat(c.path(keys[1])); err == nil {
		t.Fatal("the least recently used entry was kept")
	}
	if _, err := os.Stat(c.path(keys[9])); err != nil {
		t.Fatal("the newest entry was evicted")
	}
	// The bound is enforced by writes too (CUDAGO_CACHE_MAX).
	t.Setenv("CUDAGO_CACHE_MAX", "2K")
	c2 := activeCache()
	for i := 0; i < 20; i++ {
		c2.put(testEntry(testKey("w"+strconv.Itoa(i)), 1))
	}
	left = 0
	for _, p := range cacheFiles(t, dir) {
		fi, _ := os.Stat(p)
		left += fi.Size()
	}
	if left > 2048 {
		t.Fatalf("%d bytes in the cache, bound 2048", left)
	}
}

func TestCacheOptOut(t *testing.T) {
	useCacheDir(t)
	for _, v := range []string{"off", "OFF", "0", "false", "no"} {
		t.Setenv("CUDAGO_CACHE", v)
		if CacheEnabled() || activeCache() != nil {
			t.Fatalf("CUDAGO_CACHE=%s: cache on", v)
		}
	}
	t.Setenv("CUDAGO_CACHE", "on")
	if !CacheEnabled() {
		t.Fatal("CUDAGO_CACHE=on: cache off")
	}
}

const cacheTestSrc = `
template <typename T> __global__ void scale(T *x, T a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}
extern "C" __global__ void add1(float *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] += 1.0f;
}
`

func cacheTestOpts() *ProgramOptions {
	return &ProgramOptions{Name: "cachetest", Arch: "sm_80", Std: "c++17",
		NameExpressions: []string{"scale<float>"}, Headers: map[string]string{"h.h": "#define X 1\n"}}
}

func TestCacheKeySensitivity(t *testing.T) {
	useCacheDir(t)
	key := func(src string, o *ProgramOptions, target string) string {
		t.Helper()
		p, err := NewProgram(src, "c++", o)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		k, ok := p.cacheKey(target)
		if !ok {
			t.Fatal("not cacheable")
		}
		return k
	}
	base := key(cacheTestSrc, cacheTestOpts(), CodeCubin)
	if again := key(cacheTestSrc, cacheTestOpts(), CodeCubin); again != base {
		t.Fatal("the same program gave two keys")
	}
	tr := true
	variants := map[string]func(o *ProgramOptions) (string, string){
		"source": func(o *ProgramOptions) (string, string) { return cacheTestSrc + " ", CodeCubin },
		"target": func(o *ProgramOptions) (string, string) { return cacheTestSrc, CodePTX },
		"arch":   func(o *ProgramOptions) (string, string) { o.Arch = "sm_90"; return cacheTestSrc, CodeCubin },
		"std":    func(o *ProgramOptions) (string, string) { o.Std = "c++20"; return cacheTestSrc, CodeCubin },
		"define": func(o *ProgramOptions) (string, string) {
			o.Defines = map[string]string{"A": "1"}
			return cacheTestSrc, CodeCubin
		},
		"fastmath": func(o *ProgramOptions) (string, string) { o.FastMath = true; return cacheTestSrc, CodeCubin },
		"ftz":      func(o *ProgramOptions) (string, string) { o.FTZ = &tr; return cacheTestSrc, CodeCubin },
		"maxreg":   func(o *ProgramOptions) (string, string) { o.MaxRegisters = 32; return cacheTestSrc, CodeCubin },
		"debug":    func(o *ProgramOptions) (string, string) { o.Debug = true; return cacheTestSrc, CodeCubin },
		"extra": func(o *ProgramOptions) (string, string) {
			o.Extra = []string{"-Wno-deprecated-gpu-targets"}
			return cacheTestSrc, CodeCubin
		},
		"header body": func(o *ProgramOptions) (string, string) {
			o.Headers["h.h"] = "#define X 2\n"
			return cacheTestSrc, CodeCubin
		},
		"header name": func(o *ProgramOptions) (string, string) {
			o.Headers = map[string]string{"g.h": "#define X 1\n"}
			return cacheTestSrc, CodeCubin
		},
		"name expr": func(o *ProgramOptions) (string, string) {
			o.NameExpressions = []string{"scale<double>"}
			return cacheTestSrc, CodeCubin
		},
		"name": func(o *ProgramOptions) (string, string) { o.Name = "other"; return cacheTestSrc, CodeCubin },
		"rdc": func(o *ProgramOptions) (string, string) {
			o.RelocatableDeviceCode = true
			return cacheTestSrc, CodeCubin
		},
	}
	seen := map[string]string{base: "base"}
	for name, f := range variants {
		o := cacheTestOpts()
		src, target := f(o)
		k := key(src, o, target)
		if prev, dup := seen[k]; dup {
			t.Errorf("changing %s gives the key of %s", name, prev)
		}
		seen[k] = name
	}
	// PTX and NVVM programs: every option of their nvJitLink step is in
	// the key too.
	ptxKey := func(code, codeType string, o *ProgramOptions) string {
		t.Helper()
		p, err := NewProgram(code, codeType, o)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		k, ok := p.cacheKey(CodeCubin)
		if !ok {
			t.Fatalf("%s program %+v: not cacheable", codeType, o)
		}
		return k
	}
	ptxSrc := ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n"
	f := false
	ptxSeen := map[string]string{}
	for name, o := range map[string]*ProgramOptions{
		"base":     {Arch: "sm_80"},
		"maxreg":   {Arch: "sm_80", MaxRegisters: 32},
		"lineinfo": {Arch: "sm_80", LineInfo: true},
		"debug":    {Arch: "sm_80", Debug: true},
		"fastmath": {Arch: "sm_80", FastMath: true},
		"precdiv":  {Arch: "sm_80", PrecDiv: &f},
	} {
		k := ptxKey(ptxSrc, "ptx", o)
		if prev, dup := ptxSeen[k]; dup {
			t.Errorf("ptx: %s gives the key of %s", name, prev)
		}
		ptxSeen[k] = name
	}
	if p, err := NewProgram(ptxSrc, "ptx", &ProgramOptions{Arch: "sm_80"}); err == nil {
		if _, ok := p.cacheKey(CodePTX); ok {
			t.Error("ptx to ptx is cached: nothing is compiled")
		}
		p.Close()
	}

	// The compiler's version is part of the key.
	k := newKeyer("program")
	k.add("x")
	k1 := k.sum()
	if nvrtcVersion() == "" {
		t.Fatal("no NVRTC version")
	}
	if k1 == base {
		t.Fatal("impossible")
	}
	// Programs that read files the key cannot see are not cached.
	for _, o := range []*ProgramOptions{
		{Arch: "sm_80", IncludePaths: []string{"/usr/include"}},
		{Arch: "sm_80", PreIncludes: []string{"x.h"}},
		{Arch: "sm_80", Extra: []string{"-I/tmp"}},
		{Arch: "sm_80", Extra: []string{"--include-path=/tmp"}},
	} {
		p, err := NewProgram(cacheTestSrc, "c++", o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.cacheKey(CodeCubin); ok {
			t.Errorf("%+v: cacheable", o)
		}
		p.Close()
	}
}

// TestCacheProgram compiles with NVRTC: a miss writes an entry, a hit
// returns the same code, log and lowered names without compiling.
func TestCacheProgram(t *testing.T) {
	dir := useCacheDir(t)
	compile := func() (*Program, *ObjectCode) {
		t.Helper()
		p := try(NewProgram(cacheTestSrc, "c++", cacheTestOpts())).must(t)
		return p, try(p.Compile(CodeCubin)).must(t)
	}
	h0, m0 := cacheState.hits.Load(), cacheState.miss.Load()
	p1, o1 := compile()
	if cacheState.miss.Load() != m0+1 || cacheState.hits.Load() != h0 {
		t.Fatal("first compile was not a miss")
	}
	if n := len(cacheFiles(t, dir)); n != 1 {
		t.Fatalf("%d entries after one compile", n)
	}
	t0 := time.Now()
	p2, o2 := compile()
	dt := time.Since(t0)
	if cacheState.hits.Load() != h0+1 {
		t.Fatal("second compile was not a hit")
	}
	t.Logf("NewProgram+Compile on a hit: %v", dt)
	if !bytes.Equal(o1.Code(), o2.Code()) || o2.CodeType() != CodeCubin || o2.Name() != "cachetest" {
		t.Fatalf("hit returned %v, want %v", o2, o1)
	}
	if _, err := FromCubin(o2.Code()); err != nil {
		t.Fatalf("cached code is no valid cubin: %v", err)
	}
	l1, err1 := p1.LoweredName("scale<float>")
	l2, err2 := p2.LoweredName("scale<float>")
	if err1 != nil || err2 != nil || l1 != l2 || l1 == "" {
		t.Fatalf("lowered names %q (%v), %q (%v)", l1, err1, l2, err2)
	}
	if o2.SymbolMapping()["scale<float>"] != l1 {
		t.Fatal("symbol mapping lost on a hit")
	}
	if p1.Log() != p2.Log() {
		t.Fatalf("log %q on a hit, %q on the miss", p2.Log(), p1.Log())
	}
	// A corrupted entry is detected and rebuilt by compiling.
	files := cacheFiles(t, dir)
	b, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], b[:len(b)/2], 0o644)
	c0 := cacheState.corrupt.Load()
	_, o3 := compile()
	if cacheState.corrupt.Load() != c0+1 || !bytes.Equal(o3.Code(), o1.Code()) {
		t.Fatal("truncated entry not detected and rebuilt")
	}
	if e := activeCache().get(filepath.Base(strings.TrimSuffix(files[0], ".cgc"))); e == nil || !bytes.Equal(e.code, o1.Code()) {
		t.Fatal("entry not rewritten after corruption")
	}
	// Opt-out: nothing read, nothing written.
	t.Setenv("CUDAGO_CACHE", "off")
	os.RemoveAll(dir)
	h1 := cacheState.hits.Load()
	compile()
	if cacheState.hits.Load() != h1 || len(cacheFiles(t, dir)) != 0 {
		t.Fatal("CUDAGO_CACHE=off still used the cache")
	}
	// The PTX target is cached separately.
	t.Setenv("CUDAGO_CACHE", "")
	p, _ := NewProgram(cacheTestSrc, "c++", cacheTestOpts())
	ptx, err := p.Compile(CodePTX)
	if err != nil || ptx.CodeType() != CodePTX {
		t.Fatal(err)
	}
	p, _ = NewProgram(cacheTestSrc, "c++", cacheTestOpts())
	ptx2, err := p.Compile(CodePTX)
	if err != nil || !bytes.Equal(ptx.Code(), ptx2.Code()) || ptx2.CodeType() != CodePTX {
		t.Fatal("PTX hit differs")
	}
}

// TestCacheLink links PTX with nvJitLink: a miss then a hit.
func TestCacheLink(t *testing.T) {
	dir := useCacheDir(t)
	t.Setenv("CUDAGO_CACHE", "off")
	ptx := mustCompile(t, mustProgram(t, cacheTestSrc, "c++", cacheTestOpts()), CodePTX)
	t.Setenv("CUDAGO_CACHE", "")
	link := func(arch string) *ObjectCode {
		t.Helper()
		return mustLink(t, &LinkerOptions{Arch: arch}, CodeCubin, ptx)
	}
	h0 := cacheState.hits.Load()
	a := link("sm_80")
	if len(cacheFiles(t, dir)) != 1 {
		t.Fatal("link not cached")
	}
	b := link("sm_80")
	if cacheState.hits.Load() != h0+1 || !bytes.Equal(a.Code(), b.Code()) {
		t.Fatal("second link was not a hit with the same code")
	}
	if b.SymbolMapping()["scale<float>"] == "" {
		t.Fatal("symbol mapping lost on a link hit")
	}
	link("sm_90")
	if cacheState.hits.Load() != h0+1 || len(cacheFiles(t, dir)) != 2 {
		t.Fatal("another arch hit the cache")
	}
}

func TestCacheNoCacheOption(t *testing.T) {
	dir := useCacheDir(t)
	opts := cacheTestOpts()
	opts.NoCache = true
	h0 := cacheState.hits.Load()
	for range 2 {
		p, err := NewProgram(cacheTestSrc, "c++", opts)
		if err != nil {
			t.Fatal(err)
		}
		o, err := p.Compile(CodeCubin)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Code()) == 0 {
			t.Fatal("empty cubin")
		}
		p.Close()
	}
	if cacheState.hits.Load() != h0 || len(cacheFiles(t, dir)) != 0 {
		t.Fatalf("NoCache: %d hits, %d entries; want none", cacheState.hits.Load()-h0, len(cacheFiles(t, dir)))
	}
}

func TestCacheReadsFiles(t *testing.T) {
	h := map[string]string{"a.h": "#include \"b.h\"\n", "b.h": "int b;\n"}
	for _, c := range []struct {
		src     string
		headers map[string]string
		want    bool
	}{
		{"#include <cuda_fp16.h>\n", nil, false},
		{"#include \"a.h\"\n", h, false},
		{"  #  include \"a.h\"\n#include \"c.h\"\n", h, true},
		{"#include \"/abs/x.h\"\n", nil, true},
		{"#include \"a.h\"\n", map[string]string{"a.h": "#include \"missing.h\"\n"}, true},
		{"// #include \"x.h\" in a comment\nint x;\n", nil, false},
	} {
		if got := readsFiles(c.src, c.headers); got != c.want {
			t.Errorf("readsFiles(%q) = %v, want %v", c.src, got, c.want)
		}
	}
	useCacheDir(t)
	p, err := NewProgram("#include \"util.h\"\n__global__ void k() {}\n", "c++", &ProgramOptions{Arch: "sm_80"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, ok := p.cacheKey(CodeCubin); ok {
		t.Error("a program including a file from disk is cacheable")
	}
}

func TestCacheTrimOnlyItsOwnFiles(t *testing.T) {
	dir := useCacheDir(t)
	other := filepath.Join(dir, "someone-else.cgc")
	old := filepath.Join(dir, ".tmp-not-ours")
	for _, f := range []string{other, old} {
		if err := os.WriteFile(f, make([]byte, 1<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		past := time.Now().Add(-2 * time.Hour)
		os.Chtimes(f, past, past)
	}
	c := &diskCache{dir: dir, max: 1}
	if err := c.put(testEntry(testKey("a"), 100)); err != nil {
		t.Fatal(err)
	}
	if err := c.trim(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{other, old} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("trim removed %s, which is not the cache's: %v", f, err)
		}
	}
	if n := len(cacheFiles(t, dir)); n != 1 { // someone-else.cgc
		t.Errorf("trim over the bound left %d .cgc files, want only the foreign one", n)
	}
}

// TestCacheRootPermissions: a missing cache root is created 0700 and
// entry folders 0700; a root that group or others may write, or that
// another user owns, turns the cache off with one warning.
func TestCacheRootPermissions(t *testing.T) {
	rec := captureWarnings(t)
	messages := func() (out []string) {
		for _, w := range rec.of(WarnCacheDisabled) {
			out = append(out, w.msg)
		}
		return out
	}

	fresh := filepath.Join(t.TempDir(), "a", "cache")
	t.Setenv("CUDAGO_CACHE_DIR", fresh)
	t.Setenv("CUDAGO_CACHE", "")
	c := activeCache()
	if c == nil {
		t.Fatalf("no cache in a fresh root (warnings %q)", messages())
	}
	if err := c.put(testEntry(testKey("perm"), 10)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{fresh, filepath.Dir(c.path(testKey("perm")))} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", d, fi.Mode().Perm(), err)
		}
	}

	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUDAGO_CACHE_DIR", open)
	for range 2 {
		if activeCache() != nil {
			t.Error("a world-writable cache root was used")
		}
	}
	if warnings := messages(); len(warnings) != 1 || !strings.Contains(warnings[0], "writable by group or others") || !strings.Contains(warnings[0], open) {
		t.Errorf("warnings %q; want one naming %s as writable by group or others", warnings, open)
	}

	if os.Getuid() != 0 {
		t.Log("not root: the other-owner case needs chown")
		return
	}
	theirs := t.TempDir()
	if err := os.Chown(theirs, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUDAGO_CACHE_DIR", theirs)
	if activeCache() != nil {
		t.Error("a cache root owned by another user was used")
	}
	if warnings := messages(); len(warnings) != 2 || !strings.Contains(warnings[1], "belongs to user 4242") {
		t.Errorf("warnings %q; want a second naming user 4242", warnings)
	}
}
