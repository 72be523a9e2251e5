package blas

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/system"
)

// Tuning says how Matmul chooses cuBLASLt's algorithm for a shape it has
// not met (see Matmul for what a shape is). The zero value is TuneTimed.
//
// cuBLASLt's heuristic ranks its algorithms by a model of the GPU; its
// first answer is often, not always, the fastest. Tuning asks for its top
// Options.MatmulCandidates (default 8), runs each once as a warm-up and
// twice timed, on the handle's stream with CUDA events, writing C (or,
// when beta ≠ 0, a scratch matrix of C's size: C must still be read), and
// keeps the fastest; the Matmul then runs with it. The choice is kept by
// the Handle and, for every Handle on the same GPU, by the process; with
// TuneDisk also on disk.
//
// What it costs: the first Matmul of a shape runs about 3·candidates
// times instead of once, plus one wait for the GPU per candidate (tens of
// microseconds) and, with beta ≠ 0, a scratch allocation; a shape met
// again costs nothing more. Work queued on the same stream meanwhile by
// other goroutines is timed too and may mislead the choice. A Matmul
// queued while its stream captures a graph cannot wait for the GPU: it
// takes the heuristic's first answer (or a choice already made) and the
// next Matmul of the shape outside a capture tunes.
//
// Results: every candidate computes the same product with the same
// arithmetic (the compute type, and float32 split-K reductions for 16-bit
// results, hold for all); they differ in the order of the sums, so in the
// last bits, as any two of cuBLASLt's algorithms do. A program that needs
// the same bits on every run uses TuneOff, or TuneDisk, which keeps one
// choice for every later run on the machine.
type Tuning uint8

const (
	// TuneTimed times the heuristic's top candidates on first use of a
	// shape and keeps the fastest, for the process.
	TuneTimed Tuning = iota
	// TuneOff takes the heuristic's first answer, untimed.
	TuneOff
	// TuneDisk is TuneTimed that also keeps each choice on disk, beside
	// the compile cache (core.CacheDir(), folder blas-matmul; not when
	// core.CacheEnabled is false), keyed by the GPU (name, UUID,
	// compute capability), the driver's version, cuBLASLt's version, the
	// workspace size and the candidate count: a later process on the same
	// machine reads the choice back instead of timing again. A choice read
	// back is checked with cublasLtMatmulAlgoCheck before use.
	TuneDisk

	numTunings
)

// String returns the constant's name.
func (t Tuning) String() string {
	switch t {
	case TuneTimed:
		return "TuneTimed"
	case TuneOff:
		return "TuneOff"
	case TuneDisk:
		return "TuneDisk"
	}
	return fmt.Sprintf("Tuning(%d)", uint8(t))
}

const (
	defaultCandidates = 8
	maxCandidates     = 64
	// tuneRuns is how many timed runs of each candidate follow its
	// warm-up (which loads its kernel, lazily loaded by CUDA).
	tuneRuns = 2
)

// candidates is how many algorithms a new plan asks the heuristic for.
func (s *state) candidates() int {
	switch {
	case s.tuning == TuneOff:
		return 1
	case s.nCand > 0:
		return s.nCand
	}
	return defaultCandidates
}

// tuneRun is the Matmul in progress whose plan is being made: what
// timing a candidate needs to run it.
type tuneRun struct {
	ctx     driver.Context
	s       driver.Stream
	lt      cublaslt.Handle
	alpha   unsafe.Pointer
	a, b, c unsafe.Pointer
	ptrs    ltPtrs
	ws      unsafe.Pointer
	wsLen   uint64
	scratch int64 // bytes of a scratch C to time into (beta ≠ 0); 0: into C
	p       *plan
}

// zeroBeta is beta 0, in every compute type.
var zeroBeta [2]uint64

// tuneSource says where a choice came from.
type tuneSource uint8

const (
	tuneMeasured tuneSource = iota // timed now
	tuneMemory                     // made earlier in the process
	tuneFile                       // read from disk
	tuneSkipped                    // not timed: the heuristic's first
)

func (t tuneSource) String() string {
	return [...]string{"measured", "memory", "file", "skipped"}[t]
}

// tuneEvent is what one choice did, for tests and benchmarks (tuneHook).
type tuneEvent struct {
	key    string
	source tuneSource
	times  []time.Duration // per candidate (measured only; -1: failed)
	chosen int             // the candidate chosen (measured only)
	took   time.Duration   // the whole choice, wall time
}

// Test hooks: tuneHook sees every choice of a plan with several
// candidates; forceCandidate >= 0 makes a measured choice that candidate
// (clamped to the last).
var (
	tuneHook       func(tuneEvent)
	forceCandidate = -1
)

// choose sets p.algo from cands (the heuristic's, best first). keep is
// false when the plan must not be cached: the stream was capturing, so the
// next Matmul of the shape tunes.
func (h *Handle) choose(key planKey, p *plan, cands []cublaslt.MatmulAlgo, run *tuneRun) (keep bool, err error) {
	p.algo = cands[0]
	if h.tuning == TuneOff || len(cands) == 1 {
		return true, nil
	}
	valid := func(a *cublaslt.MatmulAlgo) bool {
		r, err := cublasLtMatmulAlgoCheck(run.ctx, run.lt, p.desc, p.a, p.b, p.c, p.dLayout(), a)
		return err == nil && r.State == cublas.StatusSuccess && r.WorkspaceSize <= run.wsLen
	}
	var dir, diskID string
	if h.tuning == TuneDisk {
		dir = tuneDir()
		if dir != "" {
			diskID = h.diskID()
		}
	}
	var t timer
	defer t.close()
	measure := func(i int) (time.Duration, error) { return t.time(h, run, &cands[i]) }
	if st, err := h.st.Stream().CaptureStatus(); err != nil || st != driver.StreamCaptureStatusNone {
		measure = nil // waiting for the GPU would break the capture
	}
	start := time.Now()
	algo, ev, err := tuned.choose(dir, diskID, h.memID(), key.String(), cands, valid, measure)
	if err != nil {
		return false, err
	}
	p.algo = algo
	if tuneHook != nil {
		ev.took = time.Since(start)
		tuneHook(ev)
	}
	return ev.source != tuneSkipped, nil
}

// timer times candidates of one choice; it makes its events and scratch
// matrix on first use.
type timer struct {
	start, end *core.Event
	scratch    *core.Buffer
	d          unsafe.Pointer // where the timed runs write D
}

// time runs algo once, then tuneRuns times between two events, and
// returns the GPU time of those.
func (t *timer) time(h *Handle, run *tuneRun, algo *cublaslt.MatmulAlgo) (time.Duration, error) {
	s := h.st.Stream()
	if t.start == nil {
		var err error
		if t.start, err = s.Context().NewEvent(&core.EventOptions{Timing: true}); err != nil {
			return 0, err
		}
		if t.end, err = s.Context().NewEvent(&core.EventOptions{Timing: true}); err != nil {
			return 0, err
		}
		t.d = run.c
		if run.scratch > 0 {
			if t.scratch, err = h.dev.Allocate(int(run.scratch), s); err != nil {
				return 0, err
			}
			t.d = libhandle.Ptr(t.scratch.Ptr()) // open until close
		}
	}
	launch := func() error {
		return run.p.launch(run.ctx, run.lt, algo, run.alpha, unsafe.Pointer(&zeroBeta), run.a, run.b, t.d, t.d, &run.ptrs, run.ws, run.wsLen, run.s)
	}
	if err := launch(); err != nil {
		return 0, err
	}
	if err := t.start.Record(s); err != nil {
		return 0, err
	}
	for range tuneRuns {
		if err := launch(); err != nil {
			return 0, err
		}
	}
	if err := t.end.Record(s); err != nil {
		return 0, err
	}
	if err := t.end.Sync(); err != nil {
		return 0, err
	}
	return core.Elapsed(t.start, t.end)
}

func (t *timer) close() {
	for _, e := range []*core.Event{t.start, t.end} {
		if e != nil {
			e.Close()
		}
	}
	if t.scratch != nil {
		t.scratch.Close() // ordered after the timed runs on the stream
	}
}

// memID names the handle's GPU and what bounds its candidates, for the
// process's memory of choices.
func (s *state) memID() string {
	return fmt.Sprintf("%s ws %d candidates %d", s.dev.UUID(), s.wsLen, s.candidates())
}

// diskID is memID with what makes a choice valid in another process: the
// GPU's name and compute capability, the driver's and cuBLASLt's versions.
// It is "" (no disk) when a version cannot be read.
func (s *state) diskID() string {
	drv, lt := driverVersion(), ltVersion()
	if drv == "" || lt == "" {
		return ""
	}
	return fmt.Sprintf("%s sm_%s driver %s cublasLt %s %s", s.dev.Name(), s.dev.Arch(), drv, lt, s.memID())
}

var (
	driverVersion = sync.OnceValue(func() string {
		v, err := system.DriverVersion()
		if err != nil {
			return ""
		}
		return v
	})
	ltVersion = sync.OnceValue(func() string {
		v, err := cublasLtGetVersion(0)
		if err != nil {
			return ""
		}
		return strconv.FormatUint(v, 10)
	})
)

// tuneStore remembers choices: in memory for the process, and on disk.
type tuneStore struct {
	mu  sync.Mutex
	mem map[string]cublaslt.MatmulAlgo
}

// tuned is the process's store.
var tuned tuneStore

// maxTuned bounds the process's memory of choices, as maxPlans bounds a
// Handle's plans.
const maxTuned = 4096

// choose returns the algorithm for key among cands: one remembered (in
// memory under memID, then on disk in dir under diskID, when both are not
// "") that valid accepts, or the fastest of cands by measure, which it
// then remembers. A candidate that measure fails on is left out; when it
// fails on all, that is the error. With measure nil (the GPU cannot be
// waited for), it is the first candidate, remembered nowhere.
func (s *tuneStore) choose(dir, diskID, memID, key string, cands []cublaslt.MatmulAlgo, valid func(*cublaslt.MatmulAlgo) bool, measure func(i int) (time.Duration, error)) (cublaslt.MatmulAlgo, tuneEvent, error) {
	ev := tuneEvent{key: key, chosen: -1}
	mk := memID + "\n" + key
	s.mu.Lock()
	algo, ok := s.mem[mk]
	s.mu.Unlock()
	if ok && valid(&algo) {
		ev.source = tuneMemory
		return algo, ev, nil
	}
	if dir != "" && diskID != "" {
		if algo, ok := readTuneFile(dir, diskID, key); ok && valid(&algo) {
			s.remember(mk, algo)
			ev.source = tuneFile
			return algo, ev, nil
		}
	}
	if measure == nil {
		ev.source = tuneSkipped
		return cands[0], ev, nil
	}
	ev.source = tuneMeasured
	ev.times = make([]time.Duration, len(cands))
	var firstErr error
	for i := range cands {
		d, err := measure(i)
		if err != nil {
			ev.times[i] = -1
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		ev.times[i] = d
		if ev.chosen < 0 || d < ev.times[ev.chosen] {
			ev.chosen = i
		}
	}
	if ev.chosen < 0 {
		return cublaslt.MatmulAlgo{}, ev, fmt.Errorf("timing %d candidates: %w", len(cands), firstErr)
	}
	if forceCandidate >= 0 {
		ev.chosen = min(forceCandidate, len(cands)-1)
	}
	algo = cands[ev.chosen]
	s.remember(mk, algo)
	if dir != "" && diskID != "" {
		writeTuneFile(dir, diskID, key, algo, ev.times[ev.chosen])
	}
	return algo, ev, nil
}

func (s *tuneStore) remember(k string, algo cublaslt.MatmulAlgo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mem == nil {
		s.mem = make(map[string]cublaslt.MatmulAlgo)
	}
	if len(s.mem) >= maxTuned {
		for k := range s.mem { // one, in the map's random order, as the plan cache
			delete(s.mem, k)
			break
		}
	}
	s.mem[k] = algo
}

// forget empties the memory (tests: a "new process").
func (s *tuneStore) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem = nil
}

// tuneEntry is one choice on disk: a file named by a hash of ID and Key,
// which it repeats (a hash collision, or a file for another key, is then
// no match).
type tuneEntry struct {
	Format string
	ID     string
	Key    string
	Algo   [8]uint64 // cublasLtMatmulAlgo_t, opaque
	NS     int64     // its time when it was chosen
}

const tuneFormat = "cudago-blas-matmul-tune-v1"

func tuneFileName(dir, diskID, key string) string {
	sum := sha256.Sum256([]byte(tuneFormat + "\n" + diskID + "\n" + key))
	return filepath.Join(dir, hex.EncodeToString(sum[:20])+".json")
}

func readTuneFile(dir, diskID, key string) (cublaslt.MatmulAlgo, bool) {
	b, err := os.ReadFile(tuneFileName(dir, diskID, key))
	if err != nil {
		return cublaslt.MatmulAlgo{}, false
	}
	var e tuneEntry
	if json.Unmarshal(b, &e) != nil || e.Format != tuneFormat || e.ID != diskID || e.Key != key {
		return cublaslt.MatmulAlgo{}, false
	}
	return cublaslt.MatmulAlgo{Data: e.Algo}, true
}

// writeTuneFile writes the entry to a temporary file and renames it into
// place, so that processes sharing the folder never read half of one. A
// failure only costs the next process a tuning.
func writeTuneFile(dir, diskID, key string, algo cublaslt.MatmulAlgo, d time.Duration) {
	b, err := json.Marshal(tuneEntry{Format: tuneFormat, ID: diskID, Key: key, Algo: algo.Data, NS: d.Nanoseconds()})
	if err != nil {
		return
	}
	name := tuneFileName(dir, diskID, key)
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// tuneDir returns the folder of tuning choices, creating it, or "" when
// there is none: the compile cache is off (CUDAGO_CACHE), or the folder is
// not the user's own (a warning, once per folder, as the compile cache
// gives: an entry planted by another user would choose the algorithm).
func tuneDir() string {
	if !core.CacheEnabled() {
		return ""
	}
	root, err := core.CacheDir()
	if err != nil {
		return ""
	}
	dir := filepath.Join(root, "blas-matmul")
	if v, ok := tuneDirs.Load(dir); ok {
		return v.(string)
	}
	use := dir
	if err := privateDir(dir); err != nil {
		use = ""
		if _, loaded := tuneDirs.LoadOrStore(dir, use); !loaded {
			tuneWarn(fmt.Sprintf("cudago: blas: Matmul tuning choices not kept on disk: %v", err))
		}
		return ""
	}
	tuneDirs.Store(dir, use)
	return use
}

var (
	tuneDirs sync.Map // folder -> the folder to use, or ""
	// tuneWarn prints the warning; tests replace it.
	tuneWarn = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
)

// privateDir creates dir (0700) when it is missing and checks that it
// and its parent are directories of this user that group and others
// cannot write.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("%s belongs to user %d, not to this user (%d); set CUDAGO_CACHE_DIR to a folder of your own", d, st.Uid, os.Getuid())
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("%s is writable by group or others (mode %v); chmod go-w it or set CUDAGO_CACHE_DIR", d, fi.Mode().Perm())
		}
	}
	return nil
}
