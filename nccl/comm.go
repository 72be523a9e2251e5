package nccl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/dl"
)

// Comm is one rank of an NCCL communicator: a device, the rank's number
// and the number of ranks. Make one with InitRank (one rank, any process)
// or InitAll (every rank, one process); Close destroys it, Abort stops it
// where it hangs. A forgotten Comm is destroyed when it is collected.
// Its methods may be called from several goroutines.
type Comm struct {
	*state
	cleanup runtime.Cleanup
}

// state is what a Comm owns, apart from the Comm so that a cleanup can
// destroy it. A zero Comm has none and acts as a closed one.
type state struct {
	// mu is held for reading by every call that uses h, and for writing
	// by Close, which so waits for them. Abort does not wait: NCCL's
	// ncclCommAbort is how a call blocked in another thread is stopped.
	mu     sync.RWMutex
	closed atomic.Bool // Close or Abort has begun: no new call uses h
	h      ncclb.Comm
	dev    *core.Device
	rank   int
	count  int
}

// Rank returns the comm's rank, from 0 to Count()-1.
func (c *Comm) Rank() int {
	if c == nil || c.state == nil {
		return -1
	}
	return c.rank
}

// Count returns the number of ranks of the communicator.
func (c *Comm) Count() int {
	if c == nil || c.state == nil {
		return 0
	}
	return c.count
}

// Device returns the device of the rank.
func (c *Comm) Device() *core.Device {
	if c == nil || c.state == nil {
		return nil
	}
	return c.dev
}

// String describes the rank: "NCCL rank 1 of 4 on device 1 (...)".
func (c *Comm) String() string {
	if c == nil || c.state == nil {
		return "closed NCCL communicator"
	}
	return fmt.Sprintf("NCCL rank %d of %d on %v", c.rank, c.count, c.dev)
}

// begin holds the comm open for a call that uses its handle; every nil
// result needs an end.
func (c *Comm) begin(fn string) error {
	if c == nil || c.state == nil {
		return closedErr(fn)
	}
	c.mu.RLock()
	if c.closed.Load() {
		c.mu.RUnlock()
		return closedErr(fn)
	}
	return nil
}

func (c *Comm) end() { c.mu.RUnlock() }

// primaryCtx is the device's primary context, in which NCCL works: it
// uses the CUDA runtime (linked into libnccl), whose device is the
// primary context.
func primaryCtx(d *core.Device) (driver.Context, error) {
	pc := d.PrimaryContext()
	if pc == nil {
		return 0, errors.New("nccl: the device has no primary context")
	}
	return pc.Handle()
}

// newComm wraps a handle NCCL returned, asking it the rank, the count and
// the device. On failure the handle is destroyed.
func newComm(h ncclb.Comm, dev *core.Device, ctx driver.Context) (*Comm, error) {
	rank, err := ncclCommUserRank(ctx, h)
	var count, cuDev int32
	if err == nil {
		count, err = ncclCommCount(ctx, h)
	}
	if err == nil {
		cuDev, err = ncclCommCuDevice(ctx, h)
	}
	if err == nil && int(cuDev) != dev.Ordinal() {
		err = fmt.Errorf("nccl: the communicator is on CUDA device %d, not %v", cuDev, dev)
	}
	if err != nil {
		return nil, errors.Join(err, ncclCommDestroy(ctx, h))
	}
	st := &state{h: h, dev: dev, rank: int(rank), count: int(count)}
	c := &Comm{state: st}
	c.cleanup = runtime.AddCleanup(c, func(st *state) { st.destroy(false) }, st)
	return c, nil
}

// Close destroys the communicator (ncclCommDestroy), after the calls in
// flight in other goroutines return; it does not wait for the work queued
// on streams, which NCCL finishes first. Later calls return ErrClosed.
// Closing twice, or after Abort, is not an error. With InitAll's
// communicators NCCL frees the resources they share when the last of
// them is closed.
func (c *Comm) Close() error {
	if c == nil || c.state == nil {
		return nil
	}
	c.cleanup.Stop()
	return c.state.destroy(false)
}

// Abort stops every operation of the communicator, on the host and on
// the GPU, and destroys it (ncclCommAbort): the way out of an operation
// that hangs (a peer that died or never came; AsyncError reports why).
// It does not wait for calls in flight in other goroutines: those return
// NCCL's error. It cannot wait for them (the hung call holds them), so a
// call that has passed its checks but not yet entered NCCL when Abort
// frees the communicator would use a freed handle: abort only when the
// other goroutines are inside NCCL or done, as with a hung collective.
// Later calls return ErrClosed; after Close it does nothing.
func (c *Comm) Abort() error {
	if c == nil || c.state == nil {
		return nil
	}
	c.cleanup.Stop()
	return c.state.destroy(true)
}

func (st *state) destroy(abort bool) error {
	if !abort {
		st.mu.Lock()
		defer st.mu.Unlock()
	}
	if st.closed.Swap(true) {
		return nil
	}
	ctx, err := primaryCtx(st.dev)
	if err != nil {
		return err
	}
	if abort {
		return ncclCommAbort(ctx, st.h)
	}
	return ncclCommDestroy(ctx, st.h)
}

// AsyncError returns the error NCCL met while running the communicator's
// operations (ncclCommGetAsyncError: a network failure, a peer that
// exited), nil while there is none. Such an error leaves operations
// hanging on the GPU: Abort the communicator.
func (c *Comm) AsyncError() error {
	if err := c.begin("AsyncError"); err != nil {
		return err
	}
	defer c.end()
	r, err := ncclCommGetAsyncError(0, c.h)
	if err != nil || r == ncclb.Success {
		return err
	}
	return ncclb.StatusError("ncclCommGetAsyncError", r)
}

// Wait waits until the work queued on s is done, while watching the
// communicator for asynchronous errors: the blocking form of AsyncError.
// On such an error it aborts the communicator (so that the GPU work
// waiting for a dead peer ends) and returns the error. When ctx ends
// first it returns ctx's error and leaves the communicator as it is
// (Abort it if its peers are gone).
func (c *Comm) Wait(ctx context.Context, s *core.Stream) error {
	if s == nil {
		return argErr("Wait", "stream", "stream is nil")
	}
	delay := 20 * time.Microsecond
	for {
		done, err := s.Query()
		if err != nil {
			return err
		}
		if aerr := c.AsyncError(); aerr != nil {
			if errors.Is(aerr, core.ErrClosed) {
				return aerr
			}
			return errors.Join(fmt.Errorf("nccl: Wait: %w; the communicator was aborted", aerr), c.Abort())
		}
		if done {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if delay < 5*time.Millisecond {
			delay *= 2
		}
	}
}

// UniqueID names a communicator being made: rank 0 makes it
// (NewUniqueID) and hands it to every other rank, which pass it to
// InitRank. Its bytes are NCCL's ncclUniqueId (rank 0's address and a
// random magic), meaningful to no one else.
type UniqueID [ncclb.UniqueIdBytes]byte

// NewUniqueID asks NCCL for a new UniqueID. It needs no GPU: NCCL starts
// the listener that the ranks' bootstrap connects to, on the network
// interface NCCL_SOCKET_IFNAME names (else the first usable one).
func NewUniqueID() (UniqueID, error) {
	id, err := ncclGetUniqueId(0)
	return UniqueID(id.Internal), err
}

// Config sets what a communicator's NCCL config can (ncclConfig_t); the
// zero value, or a nil *Config, leaves everything to NCCL and to its
// NCCL_* environment variables. An NCCL older than a field ignores it.
// Communicators are blocking (every call returns when NCCL is done with
// it): InitRank sets that in the config; InitAll takes no config, so
// NCCL_COMM_BLOCKING=0, which would make its communicators non-blocking,
// is not supported.
type Config struct {
	// CommName names the communicator in NCCL's logs and profiler
	// (NCCL 2.27 and newer).
	CommName string
	// NetName is the network NCCL uses: "IB", "Socket", or a plugin's name.
	NetName string
	// MinCTAs and MaxCTAs bound the number of CTAs (thread blocks) NCCL
	// uses per collective; 0 leaves it to NCCL.
	MinCTAs, MaxCTAs int
	// SplitShare lets the communicators Split makes from this one share
	// its resources (buffers, connections).
	SplitShare bool
}

// c returns the C config, or nil for the defaults. Its strings are C
// memory that is never freed: NCCL keeps the pointer to CommName for the
// life of the communicator, and beyond its Close for the ones sharing
// resources; a few bytes per communicator are not worth tracking that.
func (cfg *Config) c(fn string) (*ncclb.Config, error) {
	if cfg == nil {
		return nil, nil
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"MinCTAs", cfg.MinCTAs}, {"MaxCTAs", cfg.MaxCTAs}} {
		if v.n < 0 || v.n > math.MaxInt32 {
			return nil, argErr(fn, "cfg", "cfg.%s = %d is out of range", v.name, v.n)
		}
	}
	if cfg.MinCTAs > 0 && cfg.MaxCTAs > 0 && cfg.MinCTAs > cfg.MaxCTAs {
		return nil, argErr(fn, "cfg", "cfg.MinCTAs = %d is more than cfg.MaxCTAs = %d", cfg.MinCTAs, cfg.MaxCTAs)
	}
	c := ncclb.DefaultConfig()
	c.Blocking = 1
	if cfg.MinCTAs > 0 {
		c.MinCTAs = int32(cfg.MinCTAs)
	}
	if cfg.MaxCTAs > 0 {
		c.MaxCTAs = int32(cfg.MaxCTAs)
	}
	if cfg.SplitShare {
		c.SplitShare = 1
	}
	for _, s := range []struct {
		name, v string
		dst     *unsafe.Pointer
	}{{"CommName", cfg.CommName, &c.CommName}, {"NetName", cfg.NetName, &c.NetName}} {
		if s.v == "" {
			continue
		}
		for i := 0; i < len(s.v); i++ {
			if s.v[i] == 0 {
				return nil, argErr(fn, "cfg", "cfg.%s %q holds a NUL byte", s.name, s.v)
			}
		}
		*s.dst = *(*unsafe.Pointer)(dl.CStrings([]string{s.v}))
	}
	return &c, nil
}

// InitRank makes this process's rank of a communicator of nranks ranks
// on dev (ncclCommInitRankConfig): every rank calls it, with the same id
// (from NewUniqueID on one of them) and its own rank, and it returns once
// all nranks have joined. Ranks in one process must call it from
// separate goroutines (each blocks until the others come), or use
// InitAll. cfg may be nil.
func InitRank(dev *core.Device, id UniqueID, nranks, rank int, cfg *Config) (*Comm, error) {
	const fn = "InitRank"
	if dev == nil {
		return nil, argErr(fn, "dev", "dev is nil")
	}
	if nranks < 1 || nranks > math.MaxInt32 {
		return nil, argErr(fn, "nranks", "nranks = %d must be at least 1", nranks)
	}
	if rank < 0 || rank >= nranks {
		return nil, argErr(fn, "rank", "rank = %d is not in [0, %d)", rank, nranks)
	}
	if cfg == nil {
		cfg = &Config{} // still a config: it makes the communicator blocking, whatever NCCL_COMM_BLOCKING says
	}
	c, err := cfg.c(fn)
	if err != nil {
		return nil, err
	}
	ctx, err := primaryCtx(dev)
	if err != nil {
		return nil, err
	}
	h, err := ncclCommInitRankConfig(ctx, int32(nranks), ncclb.UniqueId{Internal: id}, int32(rank), c)
	if err != nil {
		return nil, err
	}
	return newComm(h, dev, ctx)
}

// InitAll makes a communicator of len(devs) ranks in this process, rank
// i on devs[i] (ncclCommInitAll). Their collectives must be issued
// together, in one Group (or each from its own goroutine): see the
// package documentation.
func InitAll(devs []*core.Device) ([]*Comm, error) {
	const fn = "InitAll"
	if len(devs) == 0 {
		return nil, argErr(fn, "devs", "devs is empty")
	}
	ords := make([]int32, len(devs))
	seen := map[*core.Device]int{}
	for i, d := range devs {
		if d == nil {
			return nil, argErr(fn, "devs", "devs[%d] is nil", i)
		}
		if j, ok := seen[d]; ok {
			return nil, argErr(fn, "devs", "devs[%d] and devs[%d] are both %v: NCCL takes one rank per device", j, i, d)
		}
		seen[d] = i
		ords[i] = int32(d.Ordinal())
	}
	ctx, err := primaryCtx(devs[0])
	if err != nil {
		return nil, err
	}
	hs := make([]ncclb.Comm, len(devs))
	if err := ncclCommInitAll(ctx, &hs[0], int32(len(devs)), &ords[0]); err != nil {
		return nil, err
	}
	comms := make([]*Comm, len(devs))
	var errs []error
	for i, h := range hs {
		dctx, err := primaryCtx(devs[i])
		if err == nil {
			comms[i], err = newComm(h, devs[i], dctx)
		} else {
			ncclCommDestroy(ctx, h) // not wrapped: nothing else frees it
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rank %d: %w", i, err))
		}
	}
	if len(errs) > 0 {
		for _, c := range comms {
			if c != nil {
				errs = append(errs, c.Close())
			}
		}
		return nil, errors.Join(errs...)
	}
	return comms, nil
}

// NoColor is the color of a rank that joins no communicator in Split: it
// gets a nil *Comm.
const NoColor = ncclb.SplitNocolor

// Split makes new communicators from this one (ncclCommSplit): every
// rank calls it; the ranks with the same color form one, ordered by key
// (then by their rank here). A rank with color NoColor gets nil. cfg nil
// gives the new one this one's config. Ranks in one process (InitAll)
// must call it from separate goroutines, as SplitAll does: each call
// returns only when all ranks have called.
func (c *Comm) Split(color, key int, cfg *Config) (*Comm, error) {
	const fn = "Split"
	if color < NoColor || color > math.MaxInt32 {
		return nil, argErr(fn, "color", "color = %d must be NoColor or at least 0", color)
	}
	if key < math.MinInt32 || key > math.MaxInt32 {
		return nil, argErr(fn, "key", "key = %d is out of int32's range", key)
	}
	cc, err := cfg.c(fn)
	if err != nil {
		return nil, err
	}
	if err := c.begin(fn); err != nil {
		return nil, err
	}
	defer c.end()
	ctx, err := primaryCtx(c.dev)
	if err != nil {
		return nil, err
	}
	h, err := ncclCommSplit(ctx, c.h, int32(color), int32(key), cc)
	if err != nil || h == 0 {
		return nil, err
	}
	return newComm(h, c.dev, ctx)
}

// SplitAll is Split for the ranks of one process: comms[i] splits with
// colors[i] and keys[i], each from its own goroutine, and the result's
// element i is its new communicator (nil for NoColor). On an error, the
// communicators made are closed.
func SplitAll(comms []*Comm, colors, keys []int, cfg *Config) ([]*Comm, error) {
	if len(colors) != len(comms) || len(keys) != len(comms) {
		return nil, argErr("SplitAll", "colors", "%d comms, %d colors and %d keys", len(comms), len(colors), len(keys))
	}
	out := make([]*Comm, len(comms))
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for i := range comms {
		wg.Go(func() {
			out[i], errs[i] = comms[i].Split(colors[i], keys[i], cfg)
		})
	}
	wg.Wait()
	if err := rankErrs(errs); err != nil {
		for _, c := range out {
			c.Close()
		}
		return nil, err
	}
	return out, nil
}

// Shrink makes a communicator of this one's ranks less those in exclude
// (ncclCommShrink, NCCL 2.27.3 and newer; before, a MissingFunctionError):
// every remaining rank calls it, renumbered in order. With abort, the
// parent's operations in flight are stopped first (NCCL_SHRINK_ABORT), to
// shrink away ranks that died. cfg nil gives this one's config.
func (c *Comm) Shrink(exclude []int, cfg *Config, abort bool) (*Comm, error) {
	const fn = "Shrink"
	if len(exclude) == 0 {
		return nil, argErr(fn, "exclude", "exclude is empty")
	}
	if err := c.begin(fn); err != nil {
		return nil, err
	}
	defer c.end()
	ex := make([]int32, len(exclude)) // NCCL sorts it in place
	seen := map[int]bool{}
	for i, r := range exclude {
		if r < 0 || r >= c.count {
			return nil, argErr(fn, "exclude", "exclude[%d] = %d is not a rank of %d", i, r, c.count)
		}
		if r == c.rank {
			return nil, argErr(fn, "exclude", "exclude[%d] = %d is this rank: an excluded rank does not call Shrink", i, r)
		}
		if seen[r] {
			return nil, argErr(fn, "exclude", "rank %d is excluded twice", r)
		}
		seen[r] = true
		ex[i] = int32(r)
	}
	cc, err := cfg.c(fn)
	if err != nil {
		return nil, err
	}
	ctx, err := primaryCtx(c.dev)
	if err != nil {
		return nil, err
	}
	flags := int32(ncclb.ShrinkDefault)
	if abort {
		flags = ncclb.ShrinkAbort
	}
	h, err := ncclCommShrink(ctx, c.h, &ex[0], int32(len(ex)), cc, flags)
	if err != nil {
		return nil, err
	}
	return newComm(h, c.dev, ctx)
}

// rankErrs joins the errors of per-rank calls, each naming its rank.
func rankErrs(errs []error) error {
	var out []error
	for i, err := range errs {
		if err != nil {
			out = append(out, fmt.Errorf("rank %d: %w", i, err))
		}
	}
	return errors.Join(out...)
}

var libVersion = sync.OnceValues(func() (int, error) {
	v, err := ncclGetVersion(0)
	return int(v), err
})

// Version returns the version of the NCCL library in use: "2.28.3".
func Version() (string, error) {
	v, err := libVersion()
	if err != nil {
		return "", err
	}
	return ncclb.VersionString(v), nil
}
