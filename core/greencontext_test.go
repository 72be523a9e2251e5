package core

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// fakeSM is an SM resource of n SMs on dev, as a split (or, with split
// nil, a device) would give it, without the driver.
func fakeSM(dev *Device, n uint32, split *smSplit) *SMResource {
	r := &SMResource{dev: dev, split: split}
	r.res.Type = driver.DevResourceTypeSm
	r.res.Anon2.Sm().SmCount = n
	r.res.Anon2.Sm().MinSmPartitionSize = 8
	r.res.Anon2.Sm().SmCoscheduledAlignment = 2
	return r
}

func TestSMSplitRules(t *testing.T) {
	for _, c := range []struct {
		opts SMSplitOptions
		want string // "" for no error
	}{
		{SMSplitOptions{Groups: 2, MinCount: 16}, ""},
		{SMSplitOptions{Groups: 2, MinCount: 66}, ""}, // the driver's rounding decides
		{SMSplitOptions{Groups: 16}, ""},
		{SMSplitOptions{Groups: 132, IgnoreCoscheduling: true}, ""},
		{SMSplitOptions{Groups: 1, MinCount: 132}, ""},
		{SMSplitOptions{}, "core: SMResource.Split: Groups is 0, want at least 1"},
		{SMSplitOptions{Groups: -1}, "Groups is -1, want at least 1"},
		{SMSplitOptions{Groups: 1, MinCount: -8}, "MinCount is -8, want 0 or more"},
		{SMSplitOptions{Groups: 1, MinCount: 133}, "MinCount 133 is more than the 132 SMs of the resource"},
		{SMSplitOptions{Groups: 3, MinCount: 64}, "3 groups of at least 64 SMs need 192 SMs, the resource has 132"},
		{SMSplitOptions{Groups: 17}, "17 groups of at least 8 SMs need 136 SMs"}, // the minimum partition
		{SMSplitOptions{Groups: 17, MinCount: 4}, "17 groups of at least 8 SMs need 136 SMs"},
		{SMSplitOptions{Groups: 133, IgnoreCoscheduling: true}, "133 groups of at least 1 SMs do not fit in the 132 SMs of the resource"},
		{SMSplitOptions{Groups: 1 << 62, MinCount: 8}, "4611686018427387904 groups of at least 8 SMs do not fit"},
	} {
		err := validateSplit(132, 8, &c.opts)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.opts, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: got %v, want %q", c.opts, err, c.want)
		}
	}
	if f := (&SMSplitOptions{IgnoreCoscheduling: true, MaxClusterSize: true}).flags(); f != 3 {
		t.Errorf("flags = %d, want CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING|_MAX_POTENTIAL_CLUSTER_SIZE (3)", f)
	}
	if f := (&SMSplitOptions{}).flags(); f != 0 {
		t.Errorf("flags = %d, want 0", f)
	}
}

func TestSMResourceMisuse(t *testing.T) {
	dev := &Device{name: "fake"}
	s := &smSplit{groups: 2}
	g := fakeSM(dev, 66, s)
	if g.Count() != 66 || g.MinPartitionSize() != 8 || g.CoscheduledAlignment() != 2 || g.Device() != dev || g.IsRemainder() {
		t.Errorf("accessors: %d SMs, partition %d, alignment %d, device %v, remainder %v",
			g.Count(), g.MinPartitionSize(), g.CoscheduledAlignment(), g.Device(), g.IsRemainder())
	}
	if got := g.String(); got != "66 SMs (a group of a split) of device 0 (fake, sm_00)" {
		t.Errorf("String() = %q", got)
	}
	// Nothing here reaches the driver: each is refused first.
	for _, c := range []struct {
		r    *SMResource
		want string
	}{
		{g, "the groups and remainder of a split cannot be split again"},
		{&SMResource{dev: dev, split: s, rest: true}, "cannot be split again"},
		{nil, "nil *SMResource"},
		{&SMResource{dev: dev}, "resource of type 0, not SM"},
	} {
		if _, _, err := c.r.Split(&SMSplitOptions{Groups: 1}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Split of %v: %v, want %q", c.r, err, c.want)
		}
		if _, err := c.r.MaxGroups(nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MaxGroups of %v: %v, want %q", c.r, err, c.want)
		}
	}
	whole := fakeSM(dev, 132, nil)
	if _, _, err := whole.Split(&SMSplitOptions{Groups: 0}); err == nil || !strings.Contains(err.Error(), "Groups is 0") {
		t.Errorf("Split into 0 groups: %v", err)
	}
	if _, _, err := whole.Split(&SMSplitOptions{Groups: 2, MinCount: 100}); err == nil || !strings.Contains(err.Error(), "need 200 SMs, the resource has 132") {
		t.Errorf("Split into more than there is: %v", err)
	}
	if _, err := whole.MaxGroups(&SMSplitOptions{MinCount: 133}); err == nil || !strings.Contains(err.Error(), "MinCount 133 is not within 0..132") {
		t.Errorf("MaxGroups of more than there is: %v", err)
	}
}

func TestGreenContextRules(t *testing.T) {
	d0, d1 := &Device{name: "fake", ordinal: 0}, &Device{name: "fake", ordinal: 1}
	a, b := &smSplit{groups: 2}, &smSplit{groups: 2}
	a0, a1, rest := fakeSM(d0, 64, a), fakeSM(d0, 64, a), fakeSM(d0, 4, a)
	a1.res.InternalPadding[0] = 1 // the driver's groups differ inside
	rest.rest = true
	b0 := fakeSM(d0, 64, b)
	whole := fakeSM(d0, 132, nil)
	twin := fakeSM(d0, 64, a) // the same resource as a0, another value
	for _, c := range []struct {
		res  []*SMResource
		want string // "" for no error
	}{
		{[]*SMResource{whole}, ""},
		{[]*SMResource{a0}, ""},
		{[]*SMResource{rest}, ""},
		{[]*SMResource{a0, a1}, ""},
		{[]*SMResource{a0, a1, rest}, ""},
		{nil, "core: Device.CreateGreenContext: no SMResource"},
		{[]*SMResource{nil}, "resource 0 is a nil *SMResource"},
		{[]*SMResource{a0, nil}, "resource 1 is a nil *SMResource"},
		{[]*SMResource{fakeSM(d1, 64, nil)}, "resource 0 is of device 1 (fake, sm_00), not device 0 (fake, sm_00)"},
		{[]*SMResource{fakeSM(d0, 0, nil)}, "resource 0 has no SMs"},
		{[]*SMResource{{dev: d0}}, "resource 0 has no SMs"},
		{[]*SMResource{a0, b0}, "several resources must all come from one SMResource.Split"},
		{[]*SMResource{whole, a0}, "several resources must all come from one SMResource.Split"},
		{[]*SMResource{a0, whole}, "several resources must all come from one SMResource.Split"},
		{[]*SMResource{a0, a0}, "resource 1 is given twice"},
		{[]*SMResource{a0, a1, twin}, "resource 2 is given twice"},
	} {
		err := validateGreen(d0, c.res)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.res, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: got %v, want %q", c.res, err, c.want)
		}
	}
	// Refused before any driver call.
	if _, err := d0.CreateGreenContext(); err == nil {
		t.Error("CreateGreenContext without resources: no error")
	}
}

func TestGreenContextBookkeeping(t *testing.T) {
	d := &Device{name: "fake"}
	d.primary = newPrimaryContext(d)
	if d.primary.IsGreen() || d.primary.GreenHandle() != 0 {
		t.Error("a primary context is not green")
	}
	g := &greenContext{h: 0x1234, streams: map[driver.Stream]struct{}{}, events: map[driver.Event]struct{}{}}
	c := &Context{dev: d, green: g}
	c.initStreams()
	if !c.IsGreen() || c.GreenHandle() != 0x1234 {
		t.Errorf("IsGreen %v, GreenHandle %#x", c.IsGreen(), c.GreenHandle())
	}
	g.addStream(1)
	g.addStream(2)
	g.addEvent(3)
	g.removeStream(1)
	g.removeEvent(3)
	g.removeEvent(4) // never added: nothing happens
	if len(g.streams) != 1 || len(g.events) != 0 {
		t.Errorf("after removals: streams %v, events %v", g.streams, g.events)
	}
	if _, ok := g.streams[2]; !ok {
		t.Errorf("stream 2 forgotten: %v", g.streams)
	}
	// Work of a closed stream goes to the context's default stream while
	// it lives, then to the device's.
	if s := c.fallbackStream(); s != c.DefaultStream() {
		t.Errorf("fallback of a live green context: %v", s)
	}
	c.life.close()
	if s := c.fallbackStream(); s != d.DefaultStream() {
		t.Errorf("fallback of a closed green context: %v, want the device's default stream", s)
	}
	created := &Context{dev: d}
	created.initStreams()
	created.life.close()
	if s := created.fallbackStream(); s != created.DefaultStream() {
		t.Errorf("fallback of a closed created context: %v, want its own default stream", s)
	}
	if _, err := c.SMResource(); !errors.Is(err, ErrClosed) {
		t.Errorf("SMResource of a closed green context: %v", err)
	}
	if _, err := created.SMResource(); !errors.Is(err, ErrClosed) {
		t.Errorf("SMResource of a closed created context: %v", err)
	}
}

// smidSource records on which SM each block ran (%smid), after spinning
// long enough that the blocks spread over every SM they may use.
const smidSource = `
extern "C" __global__ void smids(unsigned *out, long long spin) {
	unsigned id;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
	long long t0 = clock64();
	while (clock64() - t0 < spin) { }
	if (threadIdx.x == 0) out[blockIdx.x] = id;
}
`

var smidKernel testKernelSet

func smidKernelFor(t *testing.T, dev *Device) *Kernel {
	t.Helper()
	return smidKernel.get(t, "smids", smidSource, &ProgramOptions{Name: "smid.cu", Arch: "sm_" + dev.Arch()}, "smids")["smids"]
}

// greenTest is the start of the green context tests: the device, the
// smids kernel and the device's SMs.
func greenTest(t *testing.T) (*Device, *Kernel, *SMResource) {
	t.Helper()
	dev := gpuDevice(t)
	return dev, smidKernelFor(t, dev), try(dev.SMResource()).must(t)
}

// smidRun is one launch of smids whose ids are read after its stream.
type smidRun struct {
	s   *Stream
	buf *Buffer
	n   int
}

// startSMIDs launches smids with n blocks of 128 threads on s, into a
// Buffer allocated on s.
func startSMIDs(t *testing.T, k *Kernel, s *Stream, n int) *smidRun {
	t.Helper()
	buf, err := s.Device().Allocate(n*4, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := buf.Memset32Async(s, 0xffffffff); err != nil {
		t.Fatal(err)
	}
	// 20000 cycles: about 10 µs a block, so that a wave fills every SM
	// before any block is done.
	if err := Launch(s, LaunchConfig{Grid: Dim(uint32(n)), Block: Dim(128)}, k, buf, int64(20000)); err != nil {
		t.Fatal(err)
	}
	return &smidRun{s: s, buf: buf, n: n}
}

// ids waits for the run and returns the SMs its blocks ran on.
func (r *smidRun) ids(t *testing.T) map[uint32]bool {
	t.Helper()
	defer r.buf.Close()
	if err := r.s.Sync(); err != nil {
		t.Fatal(err)
	}
	set := map[uint32]bool{}
	for i, id := range readBack[uint32](t, r.buf, r.n) {
		if id == 0xffffffff {
			t.Fatalf("block %d recorded no SM", i)
		}
		set[id] = true
	}
	return set
}

func sortedIDs(s map[uint32]bool) []uint32 {
	var out []uint32
	for id := range s {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// TestGPUGreenContextSMs splits the device's SMs into two groups, makes a
// green context of each, and checks with %smid where their kernels run.
// The SM ids of each group are learned by running a kernel alone in its
// green context with many blocks: the ids must number exactly the
// group's SM count (all of its SMs, none other), the two sets must be
// disjoint, and a kernel in the primary context must reach more SMs than
// both together hold. Then kernels run in both green contexts at once,
// and every block of each must have run on its group's SMs.
func TestGPUGreenContextSMs(t *testing.T) {
	dev, k, all := greenTest(t)
	if all.Count() != dev.MultiprocessorCount() {
		t.Errorf("the device's SMResource has %d SMs, the device %d", all.Count(), dev.MultiprocessorCount())
	}
	t.Logf("%v: %d SMs, minimum partition %d, co-scheduled alignment %d", dev, all.Count(), all.MinPartitionSize(), all.CoscheduledAlignment())
	groups, rest, err := all.Split(&SMSplitOptions{Groups: 2, MinCount: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 {
		t.Fatalf("%d groups, want 2", len(groups))
	}
	sum := groups[0].Count() + groups[1].Count()
	if rest != nil {
		if !rest.IsRemainder() {
			t.Error("the remainder does not say it is one")
		}
		sum += rest.Count()
	}
	for i, g := range groups {
		if g.Count() < 16 || g.IsRemainder() {
			t.Errorf("group %d: %v, want at least 16 SMs", i, g)
		}
	}
	if groups[0].Count() != groups[1].Count() {
		t.Errorf("the groups have %d and %d SMs: the driver makes symmetrical partitions", groups[0].Count(), groups[1].Count())
	}
	if sum != all.Count() {
		t.Errorf("groups and remainder hold %d SMs, the device %d", sum, all.Count())
	}
	t.Logf("groups of %d and %d SMs, remainder %v", groups[0].Count(), groups[1].Count(), rest)

	var ctxs [2]*Context
	var streams [2]*Stream
	for i, g := range groups {
		c, err := dev.CreateGreenContext(g)
		if err != nil {
			t.Fatalf("CreateGreenContext(group %d): %v", i, err)
		}
		defer c.Close()
		ctxs[i] = c
		if !c.IsGreen() || c.IsPrimary() || c.GreenHandle() == 0 || c.Device() != dev {
			t.Errorf("green context %d: IsGreen %v, IsPrimary %v, GreenHandle %#x", i, c.IsGreen(), c.IsPrimary(), c.GreenHandle())
		}
		h, err := c.Handle()
		if ph, _ := dev.PrimaryContext().Handle(); err != nil || h == 0 || h == ph {
			t.Errorf("green context %d: CUcontext %#x (%v), the primary's %#x", i, h, err, ph)
		}
		r, err := c.SMResource()
		if err != nil || r.Count() != g.Count() {
			t.Errorf("green context %d: SMResource %v, %v; want %d SMs", i, r, err, g.Count())
		}
		if streams[i], err = c.NewStream(nil); err != nil {
			t.Fatal(err)
		}
		defer streams[i].Close()
		if streams[i].Context() != c {
			t.Errorf("stream %d is of another context", i)
		}
	}

	blocks := 16 * dev.MultiprocessorCount()
	var sets [2]map[uint32]bool
	for i := range groups {
		sets[i] = startSMIDs(t, k, streams[i], blocks).ids(t)
		if n := len(sets[i]); n != groups[i].Count() {
			t.Errorf("alone in green context %d, %d blocks ran on %d SMs, want the %d of its group: %v",
				i, blocks, n, groups[i].Count(), sortedIDs(sets[i]))
		}
	}
	for id := range sets[0] {
		if sets[1][id] {
			t.Errorf("SM %d ran blocks of both green contexts: the groups overlap (%v and %v)", id, sortedIDs(sets[0]), sortedIDs(sets[1]))
			break
		}
	}
	primary := startSMIDs(t, k, dev.DefaultStream(), blocks).ids(t)
	if len(primary) < len(sets[0])+len(sets[1]) {
		t.Errorf("in the primary context, %d blocks ran on %d SMs, fewer than the two groups' %d and %d",
			blocks, len(primary), len(sets[0]), len(sets[1]))
	}
	t.Logf("SMs: group 0 %v, group 1 %v, primary context %d", sortedIDs(sets[0]), sortedIDs(sets[1]), len(primary))

	// Both at once, twice as long each.
	runs := [2]*smidRun{startSMIDs(t, k, streams[0], 2*blocks), startSMIDs(t, k, streams[1], 2*blocks)}
	for i, r := range runs {
		for id := range r.ids(t) {
			if !sets[i][id] {
				t.Errorf("running beside green context %d, a block of green context %d ran on SM %d, not of its group %v",
					1-i, i, id, sortedIDs(sets[i]))
				break
			}
		}
	}
}

// greenStream splits r by opts and makes a green context of dev of the
// first group, and a stream in it, both closed at the end of the test; it
// returns them and the group.
func greenStream(t *testing.T, dev *Device, r *SMResource, opts SMSplitOptions) (*Context, *Stream, *SMResource) {
	t.Helper()
	groups, _, err := r.Split(&opts)
	if err != nil {
		t.Fatal(err)
	}
	c := try(dev.CreateGreenContext(groups[0])).must(t)
	t.Cleanup(func() { c.Close() })
	s := try(c.NewStream(nil)).must(t)
	t.Cleanup(func() { s.Close() })
	return c, s, groups[0]
}

// TestGPUGreenContextDefaultStream: the legacy default stream of a green
// context runs on its SMs too, and a green context made of a green
// context's own resource keeps to it.
func TestGPUGreenContextDefaultStream(t *testing.T) {
	dev, k, all := greenTest(t)
	c, s, _ := greenStream(t, dev, all, SMSplitOptions{Groups: 2, MinCount: 16})
	blocks := 16 * dev.MultiprocessorCount()
	own := startSMIDs(t, k, s, blocks).ids(t)
	def := startSMIDs(t, k, c.DefaultStream(), blocks).ids(t)
	for id := range def {
		if !own[id] {
			t.Errorf("on the green context's default stream a block ran on SM %d, not of its group %v", id, sortedIDs(own))
			break
		}
	}
	// Its resource splits again, into a green context of part of its SMs.
	_, s2, sub := greenStream(t, dev, try(c.SMResource()).must(t), SMSplitOptions{Groups: 1, MinCount: 8})
	inner := startSMIDs(t, k, s2, blocks).ids(t)
	if len(inner) != sub.Count() {
		t.Errorf("the green context of %d SMs ran on %d: %v", sub.Count(), len(inner), sortedIDs(inner))
	}
	for id := range inner {
		if !own[id] {
			t.Errorf("the green context split from green context's SMs ran on SM %d, not of them %v", id, sortedIDs(own))
			break
		}
	}
}

// TestGPUGreenContextMisuse: bad splits and resources are refused, and a
// closed green context refuses everything made in it, but for its
// Buffers, whose memory is the device's.
func TestGPUGreenContextMisuse(t *testing.T) {
	dev, k, all := greenTest(t)
	n := all.Count()
	for _, opts := range []SMSplitOptions{
		{Groups: 0},
		{Groups: 2, MinCount: n/2 + 1},
		{Groups: 3, MinCount: n / 2},
		{Groups: 1, MinCount: n + 1},
	} {
		if g, _, err := all.Split(&opts); err == nil || !strings.HasPrefix(err.Error(), "core: SMResource.Split: ") {
			t.Errorf("Split(%+v): %d groups, %v; want an error", opts, len(g), err)
		}
	}
	maxGroups, err := all.MaxGroups(&SMSplitOptions{MinCount: 8})
	if err != nil || maxGroups < 2 || maxGroups > n/8 {
		t.Fatalf("MaxGroups of 8 SMs: %d, %v", maxGroups, err)
	}
	if _, _, err := all.Split(&SMSplitOptions{Groups: maxGroups + 1, MinCount: 8}); err == nil {
		t.Errorf("Split into %d groups of 8 SMs, one more than MaxGroups: no error", maxGroups+1)
	}
	a, _, err := all.Split(&SMSplitOptions{Groups: 2, MinCount: 16})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := all.Split(&SMSplitOptions{Groups: 2, MinCount: 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a[0].Split(&SMSplitOptions{Groups: 1}); err == nil || !strings.Contains(err.Error(), "cannot be split again") {
		t.Errorf("Split of a group: %v", err)
	}
	for _, res := range [][]*SMResource{nil, {a[0], b[1]}, {a[0], a[0]}, {a[0], nil}} {
		if c, err := dev.CreateGreenContext(res...); err == nil {
			c.Close()
			t.Errorf("CreateGreenContext(%v): no error", res)
		}
	}

	// Two groups of one split in one green context.
	both, err := dev.CreateGreenContext(a...)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := both.SMResource(); err != nil || r.Count() != a[0].Count()+a[1].Count() {
		t.Errorf("a green context of two groups: %v, %v; want %d SMs", r, err, a[0].Count()+a[1].Count())
	}
	if err := both.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	c, err := dev.CreateGreenContext(b[0])
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewStream(&StreamOptions{Priority: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.NewEvent(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Record(s); err != nil {
		t.Fatal(err)
	}
	data := make([]float32, 1024)
	for i := range data {
		data[i] = float32(i)
	}
	buf, err := dev.Allocate(len(data)*4, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := CopyToDevice(buf, data); err != nil {
		t.Fatal(err)
	}
	if len(c.green.streams) != 1 || len(c.green.events) != 1 {
		t.Errorf("the green context keeps %d streams and %d events, want 1 and 1", len(c.green.streams), len(c.green.events))
	}
	closeTwice(t, c)
	for name, err := range map[string]error{
		"NewStream":              func() error { _, err := c.NewStream(nil); return err }(),
		"NewEvent":               func() error { _, err := c.NewEvent(nil); return err }(),
		"Sync":                   c.Sync(),
		"SMResource":             func() error { _, err := c.SMResource(); return err }(),
		"Handle":                 func() error { _, err := c.Handle(); return err }(),
		"Launch":                 Launch(s, LaunchConfig{Grid: Dim(1), Block: Dim(32)}, k, buf, int64(0)),
		"Allocate on its stream": func() error { _, err := dev.Allocate(64, s); return err }(),
		"Stream.Sync":            s.Sync(),
		"default stream Sync":    c.DefaultStream().Sync(),
		"Event.Record":           e.Record(dev.DefaultStream()),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	// The Buffer allocated on the green stream is the device's memory: it
	// is read on the device's default stream, its own being gone.
	got := make([]float32, len(data))
	if err := CopyFromDevice(got, buf); err != nil {
		t.Fatalf("reading a Buffer of the closed green context: %v", err)
	}
	if !slices.Equal(got, data) {
		t.Error("a Buffer of the closed green context lost its data")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Stream.Close after the context's: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("Event.Close after the context's: %v", err)
	}
	if err := buf.Close(); err != nil {
		t.Errorf("closing a Buffer of the closed green context: %v", err)
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("the device after it all: %v", err)
	}
}
