package core

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
)

// Green contexts: a device's streaming multiprocessors split into groups,
// each group the SMs of its own green context, whose streams run kernels
// only there.
//
// The steps are the driver's: a device's SMResource (cuDeviceGetDevResource),
// split into groups (cuDevSmResourceSplitByCount), a descriptor of one or
// more groups (cuDevResourceGenerateDesc), a green context of it
// (cuGreenCtxCreate). The green context converts to a CUcontext
// (cuCtxFromGreenCtx): that is the handle of the *Context that
// Device.CreateGreenContext returns, so that Launch, Allocate, the copies,
// events and graphs work in it as in any Context.
//
// Work queues (CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG and _WORKQUEUE,
// cuDevSmResourceSplit) are not here: the CUDA 13.0 header that the
// bindings come from has only the SM resource type, and the work-queue
// types came with CUDA 13.1, with a CUdevResource whose union has a
// pointer to the next resource; a layout guessed from later headers could
// not be checked against any header here.

// SMResource is a set of a device's streaming multiprocessors: all of them
// (Device.SMResource), those of a green context (Context.SMResource), or a
// group or the remainder of a Split. It is a value: it owns nothing, needs
// no Close, and may be used by several goroutines.
type SMResource struct {
	dev   *Device
	res   driver.DevResource
	split *smSplit // the Split that made it; nil for a device's or context's own
	rest  bool     // the remainder of its split
}

// smSplit is the identity of one Split: the driver takes several
// resources into one descriptor only when one split made them all.
type smSplit struct{ groups int }

// SMResource returns all of the device's SMs (cuDeviceGetDevResource), the
// resource to Split for green contexts.
func (d *Device) SMResource() (*SMResource, error) {
	if err := initDriver(); err != nil {
		return nil, err
	}
	// The result lands in a local first: cgo refuses a pointer into an
	// object that holds Go pointers (r.dev).
	var res driver.DevResource
	if err := cuDeviceGetDevResource(d.handle, &res, driver.DevResourceTypeSm); err != nil {
		return nil, err
	}
	r := &SMResource{dev: d, res: res}
	return r, nil
}

// SMResource returns the SMs of the context: a green context's own
// (cuGreenCtxGetDevResource), which may be split again; for another
// context, all of its device's.
func (c *Context) SMResource() (*SMResource, error) {
	if c.green == nil {
		if !c.primary && c.life.closed() {
			return nil, ErrClosed
		}
		return c.dev.SMResource()
	}
	if _, err := c.acquire(); err != nil {
		return nil, err
	}
	defer c.release()
	var res driver.DevResource // a local: see Device.SMResource
	if err := cuGreenCtxGetDevResource(c.green.h, &res, driver.DevResourceTypeSm); err != nil {
		return nil, err
	}
	return &SMResource{dev: c.dev, res: res}, nil
}

func (r *SMResource) sm() *driver.DevSmResource { return r.res.Anon2.Sm() }

// Device returns the resource's device.
func (r *SMResource) Device() *Device { return r.dev }

// Count returns the number of SMs in the resource.
func (r *SMResource) Count() int { return int(r.sm().SmCount) }

// MinPartitionSize returns the fewest SMs a group of a Split of this
// resource may have (8 on compute capability 9.0).
func (r *SMResource) MinPartitionSize() int { return int(r.sm().MinSmPartitionSize) }

// CoscheduledAlignment returns the number of SMs guaranteed to be
// scheduled together (on one GPU processing cluster): the granularity to
// which a Split rounds its groups up.
func (r *SMResource) CoscheduledAlignment() int { return int(r.sm().SmCoscheduledAlignment) }

// IsRemainder reports whether r is the remainder of a Split: the SMs left
// over, without the groups' guarantees of co-scheduling and performance.
func (r *SMResource) IsRemainder() bool { return r.rest }

// Handle returns the driver's CUdevResource.
func (r *SMResource) Handle() driver.DevResource { return r.res }

// String describes the resource: "132 SMs of device 0 (...)".
func (r *SMResource) String() string {
	what := "SMs"
	switch {
	case r.rest:
		what = "SMs (remainder of a split)"
	case r.split != nil:
		what = "SMs (a group of a split)"
	}
	return fmt.Sprintf("%d %s of %v", r.Count(), what, r.dev)
}

// SMSplitOptions configure SMResource.Split.
type SMSplitOptions struct {
	// Groups is the number of groups to make, at least 1.
	Groups int
	// MinCount is the fewest SMs of each group; the driver rounds it up
	// to the resource's MinPartitionSize and CoscheduledAlignment (unless
	// IgnoreCoscheduling). 0 asks for the smallest groups possible.
	MinCount int
	// IgnoreCoscheduling treats each SM on its own, regardless of the GPU
	// processing clusters (CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING):
	// smaller groups, at the cost of features such as large thread-block
	// clusters.
	IgnoreCoscheduling bool
	// MaxClusterSize asks for groups that allow the largest thread-block
	// clusters (CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
	// compute capability 9.0 and newer).
	MaxClusterSize bool
}

func (o *SMSplitOptions) flags() uint32 {
	var f uint32
	if o.IgnoreCoscheduling {
		f |= uint32(driver.DevSmResourceSplitIgnoreSmCoscheduling)
	}
	if o.MaxClusterSize {
		f |= uint32(driver.DevSmResourceSplitMaxPotentialClusterSize)
	}
	return f
}

// validateSplit checks a split of count SMs (partition: the resource's
// minimum partition size) before the driver sees it. The driver's own
// rules (its rounding of MinCount to the GPU's clusters) are checked by
// asking it how many groups it would make.
func validateSplit(count, partition int, o *SMSplitOptions) error {
	if o.Groups < 1 {
		return fmt.Errorf("core: SMResource.Split: Groups is %d, want at least 1", o.Groups)
	}
	if o.MinCount < 0 {
		return fmt.Errorf("core: SMResource.Split: MinCount is %d, want 0 or more", o.MinCount)
	}
	if o.MinCount > count {
		return fmt.Errorf("core: SMResource.Split: MinCount %d is more than the %d SMs of the resource", o.MinCount, count)
	}
	least := o.MinCount
	if !o.IgnoreCoscheduling && least < partition {
		least = partition
	}
	least = max(least, 1)
	switch {
	case o.Groups > count: // also keeps Groups*least from overflowing
		return fmt.Errorf("core: SMResource.Split: %d groups of at least %d SMs do not fit in the %d SMs of the resource", o.Groups, least, count)
	case o.Groups*least > count:
		return fmt.Errorf("core: SMResource.Split: %d groups of at least %d SMs need %d SMs, the resource has %d",
			o.Groups, least, o.Groups*least, count)
	}
	return nil
}

// MaxGroups returns how many groups of at least opts.MinCount SMs a Split
// with opts would make at most (opts.Groups is not used), as the driver
// counts them.
func (r *SMResource) MaxGroups(options *SMSplitOptions) (int, error) {
	opts := optsOf(options)
	if err := r.splittable(); err != nil {
		return 0, err
	}
	if opts.MinCount < 0 || opts.MinCount > r.Count() {
		return 0, fmt.Errorf("core: SMResource.MaxGroups: MinCount %d is not within 0..%d, the SMs of the resource", opts.MinCount, r.Count())
	}
	var n uint32
	in := r.res
	if err := cuDevSmResourceSplitByCount(nil, &n, &in, nil, opts.flags(), uint32(opts.MinCount)); err != nil {
		return 0, err
	}
	return int(n), nil
}

func (r *SMResource) splittable() error {
	switch {
	case r == nil:
		return errors.New("core: SMResource: nil *SMResource")
	case r.split != nil:
		return errors.New("core: SMResource.Split: the groups and remainder of a split cannot be split again; split the SMResource of a green context made of it")
	case r.res.Type != driver.DevResourceTypeSm:
		return fmt.Errorf("core: SMResource.Split: resource of type %d, not SM", r.res.Type)
	}
	return nil
}

// Split divides the SMs into opts.Groups disjoint groups of at least
// opts.MinCount SMs each (cuDevSmResourceSplitByCount), as the driver
// rounds the count to the GPU's clusters, and returns them with the
// SMs left over (nil when none are). It fails, rather than make fewer
// groups, when fewer fit: MaxGroups says how many do.
//
// A group and the remainder cannot be split again; make a green context
// of one (Device.CreateGreenContext) and split its SMResource instead.
func (r *SMResource) Split(options *SMSplitOptions) (groups []*SMResource, remainder *SMResource, err error) {
	opts := optsOf(options)
	if err := r.splittable(); err != nil {
		return nil, nil, err
	}
	if err := validateSplit(r.Count(), r.MinPartitionSize(), &opts); err != nil {
		return nil, nil, err
	}
	n, err := r.MaxGroups(&opts)
	if err != nil {
		return nil, nil, err
	}
	if n < opts.Groups {
		return nil, nil, fmt.Errorf("core: SMResource.Split: %d groups of at least %d SMs do not fit in %d SMs: the driver makes %d (minimum partition %d SMs, alignment %d)",
			opts.Groups, opts.MinCount, r.Count(), n, r.MinPartitionSize(), r.CoscheduledAlignment())
	}
	out := make([]driver.DevResource, opts.Groups)
	var rest driver.DevResource
	in := r.res
	nb := uint32(opts.Groups)
	if err := cuDevSmResourceSplitByCount(&out[0], &nb, &in, &rest, opts.flags(), uint32(opts.MinCount)); err != nil {
		return nil, nil, err
	}
	if int(nb) != opts.Groups {
		return nil, nil, fmt.Errorf("core: SMResource.Split: the driver made %d groups, not %d", nb, opts.Groups)
	}
	s := &smSplit{groups: opts.Groups}
	for i := range out {
		groups = append(groups, &SMResource{dev: r.dev, res: out[i], split: s})
	}
	if rest.Type == driver.DevResourceTypeSm && rest.Anon2.Sm().SmCount > 0 {
		remainder = &SMResource{dev: r.dev, res: rest, split: s, rest: true}
	}
	return groups, remainder, nil
}

// validateGreen checks the resources of a green context on dev.
func validateGreen(dev *Device, resources []*SMResource) error {
	if len(resources) == 0 {
		return errors.New("core: Device.CreateGreenContext: no SMResource")
	}
	first := resources[0]
	for i, r := range resources {
		switch {
		case r == nil:
			return fmt.Errorf("core: Device.CreateGreenContext: resource %d is a nil *SMResource", i)
		case r.dev != dev:
			return fmt.Errorf("core: Device.CreateGreenContext: resource %d is of %v, not %v", i, r.dev, dev)
		case r.res.Type != driver.DevResourceTypeSm || r.Count() == 0:
			return fmt.Errorf("core: Device.CreateGreenContext: resource %d has no SMs", i)
		}
		if len(resources) == 1 {
			break
		}
		if r.split == nil || r.split != first.split {
			return errors.New("core: Device.CreateGreenContext: several resources must all come from one SMResource.Split")
		}
		for _, o := range resources[:i] {
			if o == r || o.res == r.res {
				return fmt.Errorf("core: Device.CreateGreenContext: resource %d is given twice", i)
			}
		}
	}
	return nil
}

// CreateGreenContext creates a green context of the given SMs: one
// resource (a device's or a green context's SMResource, or a group of a
// Split), or several groups (and the remainder) of one Split. Its
// kernels run only on those SMs (cuGreenCtxCreate; the driver may use
// more of them in a process using MPS or dynamic parallelism, never
// fewer).
//
// The *Context it returns is used as any other: NewStream (its streams
// are always non-blocking, as cuGreenCtxStreamCreate requires), Launch on
// them, Allocate ordered on them, NewEvent, graphs. Its memory is the
// device's (a green context shares the primary context's): Buffers
// allocated on its streams stay valid after its Close, and are then used
// and freed on the device's default stream. Close destroys the green
// context, and with it the streams and events made in it; it needs the
// device's primary context, which it retains while it lives.
//
// The driver documents that a green context is current to one thread at a
// time, and that it does not synchronize calls on one green context made
// from several threads. Core makes a context current in each call, on the
// OS thread that runs it, as for any Context, and leaves it current there
// (it does not pop it): a green context so ends up current on every
// thread that ran a call of it, which the driver's rule does not allow
// for. Calls made one at a time have worked on the H100 (driver 580: the
// green-context tests run kernels, copies and syncs from a goroutine that
// moves between threads); concurrent calls on one green context from
// several goroutines are not synchronized by the driver. So use each
// green Context, with its streams and events, from one goroutine at a time
// (or under a lock of your own), and Close what you make in it rather
// than leaving it to the collector, whose cleanups run on another
// goroutine. Different green contexts may be used at once.
func (d *Device) CreateGreenContext(resources ...*SMResource) (*Context, error) {
	if err := validateGreen(d, resources); err != nil {
		return nil, err
	}
	// The driver advises an active primary context: the green context
	// retains it, and would otherwise initialize it at each creation.
	if _, err := d.primary.acquire(); err != nil {
		return nil, err
	}
	d.primary.release()
	res := make([]driver.DevResource, len(resources))
	for i, r := range resources {
		res[i] = r.res
	}
	desc, err := cuDevResourceGenerateDesc(&res[0], uint32(len(res)))
	if err != nil {
		return nil, err
	}
	g, err := cuGreenCtxCreate(desc, d.handle, uint32(driver.GreenCtxDefaultStream))
	if err != nil {
		return nil, err
	}
	h, err := cuCtxFromGreenCtx(g)
	if err != nil {
		return nil, errors.Join(err, cuGreenCtxDestroy(g))
	}
	return newGreenContext(d, g, h), nil
}

// greenContext is what a green Context owns beyond its CUcontext: the
// green context, and the streams and events made in it, which
// cuGreenCtxDestroy does not destroy. It holds no *Context, so that the
// finalizer of a forgotten green Context can take it.
type greenContext struct {
	h   driver.GreenCtx
	ctx driver.Context // from cuCtxFromGreenCtx

	mu      sync.Mutex
	streams map[driver.Stream]struct{}
	events  map[driver.Event]struct{}
}

func newGreenContext(d *Device, g driver.GreenCtx, h driver.Context) *Context {
	gc := &greenContext{h: g, ctx: h, streams: map[driver.Stream]struct{}{}, events: map[driver.Event]struct{}{}}
	c := &Context{dev: d, green: gc}
	c.h.Store(uintptr(h))
	c.initStreams()
	// Its error has nowhere to go, as a created context's (context.go).
	c.cleanup = runtime.AddCleanup(c, func(g *greenContext) { g.destroy() }, gc)
	return c
}

func (g *greenContext) addStream(s driver.Stream) {
	g.mu.Lock()
	g.streams[s] = struct{}{}
	g.mu.Unlock()
}

func (g *greenContext) addEvent(e driver.Event) {
	g.mu.Lock()
	g.events[e] = struct{}{}
	g.mu.Unlock()
}

func (g *greenContext) removeStream(s driver.Stream) {
	g.mu.Lock()
	delete(g.streams, s)
	g.mu.Unlock()
}

func (g *greenContext) removeEvent(e driver.Event) {
	g.mu.Lock()
	delete(g.events, e)
	g.mu.Unlock()
}

// destroy waits for the green context's work, destroys the events and
// streams still made in it, then the green context itself, and returns
// the first error. No one else uses it any more (its Context is closed,
// or unreachable).
func (g *greenContext) destroy() error {
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	note(cuCtxSynchronize(g.ctx))
	g.mu.Lock()
	events, streams := g.events, g.streams
	g.events, g.streams = nil, nil
	g.mu.Unlock()
	for e := range events {
		note(cuEventDestroy(g.ctx, e))
	}
	for s := range streams {
		note(cuStreamDestroy(g.ctx, s))
	}
	note(cuGreenCtxDestroy(g.h))
	return first
}

// IsGreen reports whether c is a green context (Device.CreateGreenContext).
func (c *Context) IsGreen() bool { return c.green != nil }

// GreenHandle returns the driver's CUgreenCtx of a green context (0 for
// other contexts); Handle returns the CUcontext it converts to.
func (c *Context) GreenHandle() driver.GreenCtx {
	if c.green == nil {
		return 0
	}
	return c.green.h
}

// fallbackStream is where the work of a closed stream of c goes instead
// (a Buffer's copies and free): c's legacy default stream, or, once a
// green context is closed, its device's, since a green context's memory
// is its device's and outlives it.
func (c *Context) fallbackStream() *Stream {
	if c.green != nil && c.life.closed() {
		return c.dev.DefaultStream()
	}
	return c.DefaultStream()
}
