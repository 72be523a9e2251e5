package blas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cudago/cudago/bindings/cublaslt"
)

// TestTuneStore checks the choice logic apart from the GPU: the timing
// is a callback here (the GPU test times real candidates).
func TestTuneStore(t *testing.T) {
	cands := make([]cublaslt.MatmulAlgo, 4)
	for i := range cands {
		cands[i].Data[0], cands[i].Data[7] = uint64(100+i), 1<<63|uint64(i) // all 64 bits survive the file
	}
	times := []time.Duration{30, 10, 20, 40}
	calls := 0
	measure := func(i int) (time.Duration, error) { calls++; return times[i] * time.Millisecond, nil }
	all := func(*cublaslt.MatmulAlgo) bool { return true }
	dir := t.TempDir()
	const id, mem, key = "GPU-x driver 580 cublasLt 130100", "uuid ws 32 candidates 4", "BFloat16 8192³"

	check := func(what string, s *tuneStore, dir, id, key string, valid func(*cublaslt.MatmulAlgo) bool, m func(int) (time.Duration, error), wantAlgo int, wantSrc tuneSource, wantCalls int) {
		t.Helper()
		calls = 0
		algo, ev, err := s.choose(dir, id, mem, key, cands, valid, m)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if algo != cands[wantAlgo] || ev.source != wantSrc || calls != wantCalls {
			t.Errorf("%s: candidate %d (%v), %v after %d timings; want %d, %v after %d", what, algo.Data[0]-100, algo.Data, ev.source, calls, wantAlgo, wantSrc, wantCalls)
		}
	}
	var s1 tuneStore
	check("first use", &s1, dir, id, key, all, measure, 1, tuneMeasured, 4)
	check("again, in the process", &s1, dir, id, key, all, measure, 1, tuneMemory, 0)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d files in the folder, want 1: %v", len(files), files)
	}
	var s2 tuneStore // another process
	check("another process", &s2, dir, id, key, all, measure, 1, tuneFile, 0)
	check("and again there", &s2, dir, id, key, all, measure, 1, tuneMemory, 0)
	var s3 tuneStore
	check("another driver", &s3, dir, id+"x", key, all, measure, 1, tuneMeasured, 4)
	check("another shape", &s3, dir, id, key+"x", all, measure, 1, tuneMeasured, 4)
	notOne := func(a *cublaslt.MatmulAlgo) bool { return a.Data[0] != 101 }
	times[2] = 5
	var s4 tuneStore
	check("the kept choice invalid", &s4, dir, id, key, notOne, measure, 2, tuneMeasured, 4)
	var s5 tuneStore
	check("rewritten", &s5, dir, id, key, all, measure, 2, tuneFile, 0)
	check("memory, invalid", &s5, dir, id, key, notOne, measure, 2, tuneMemory, 0)
	check("memory, invalid, no disk", &s5, "", "", key, func(a *cublaslt.MatmulAlgo) bool { return a.Data[0] != 102 }, measure, 2, tuneMeasured, 4)

	// A corrupt or foreign file is no match, and is replaced.
	name := tuneFileName(dir, id, key)
	for _, junk := range []string{"{", `{"Format":"other"}`, strings.Replace(mustRead(t, name), key, "other key", 1)} {
		if err := os.WriteFile(name, []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		var s tuneStore
		check("junk "+junk[:min(len(junk), 12)], &s, dir, id, key, all, measure, 2, tuneMeasured, 4)
		var s2 tuneStore
		check("after junk", &s2, dir, id, key, all, measure, 2, tuneFile, 0)
	}

	// No timing possible (a capture): the first, remembered nowhere.
	var s6 tuneStore
	check("capturing", &s6, "", "", key, all, nil, 0, tuneSkipped, 0)
	check("after the capture", &s6, "", "", key, all, measure, 2, tuneMeasured, 4)

	// Failed candidates are left out; all failed is an error.
	bad := errors.New("launch failed")
	var s7 tuneStore
	check("two fail", &s7, "", "", key, all, func(i int) (time.Duration, error) {
		calls++
		if i >= 2 {
			return 0, bad
		}
		return times[i], nil
	}, 1, tuneMeasured, 4)
	if _, _, err := new(tuneStore).choose("", "", mem, key, cands, all, func(int) (time.Duration, error) { return 0, bad }); !errors.Is(err, bad) {
		t.Errorf("all fail: %v, want %v", err, bad)
	}

	// The test hook forces a candidate.
	forceCandidate = 3
	var s8 tuneStore
	check("forced", &s8, "", "", key, all, measure, 3, tuneMeasured, 4)
	forceCandidate = -1
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTuneDir: the folder is made private, refused when others may write
// it, and absent with the cache off.
func TestTuneDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cache")
	t.Setenv("CUDAGO_CACHE_DIR", root)
	t.Setenv("CUDAGO_CACHE", "")
	dir := tuneDir()
	if dir != filepath.Join(root, "blas-matmul") {
		t.Fatalf("tuneDir() = %q, want blas-matmul in %s", dir, root)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", dir, fi.Mode(), err)
	}
	t.Setenv("CUDAGO_CACHE", "off")
	if dir := tuneDir(); dir != "" {
		t.Errorf("with CUDAGO_CACHE=off: %q", dir)
	}
	t.Setenv("CUDAGO_CACHE", "")
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	t.Setenv("CUDAGO_CACHE_DIR", shared)
	var warned []string
	old := tuneWarn
	tuneWarn = func(msg string) { warned = append(warned, msg) }
	defer func() { tuneWarn = old }()
	for range 2 {
		if dir := tuneDir(); dir != "" {
			t.Errorf("a folder others may write: %q", dir)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "writable by group or others") {
		t.Errorf("warnings: %q, want one about the mode", warned)
	}
}
