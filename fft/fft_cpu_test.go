package fft

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/cufft"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// These tests need no GPU: they check descriptions, sizes, layouts and
// every argument check that comes before cuFFT is called.

func TestDescErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Desc
		want string
	}{
		{"no shape", Desc{}, "Desc.Shape has 0 dimensions"},
		{"4-D", Desc{Shape: []int{2, 2, 2, 2}}, "Desc.Shape has 4 dimensions"},
		{"zero dim", Desc{Shape: []int{0}}, "Desc.Shape[0] is 0"},
		{"negative dim", Desc{Shape: []int{3, -1}}, "Desc.Shape[1] is -1"},
		{"type", Desc{Shape: []int{8}, Type: 7}, "Desc.Type is Type(7)"},
		{"negative type", Desc{Shape: []int{8}, Type: -1}, "Desc.Type is Type(-1)"},
		{"precision", Desc{Shape: []int{8}, Precision: 2}, "Desc.Precision is Precision(2)"},
		{"batch", Desc{Shape: []int{8}, Batch: -1}, "Desc.Batch is -1"},
		{"huge shape", Desc{Shape: []int{1 << 40, 1 << 40}}, "is too large"},
		{"huge batch", Desc{Shape: []int{1 << 20, 1 << 10}, Batch: 1 << 20}, "with batch 1048576 is too large"},
		{"overflowing product", Desc{Shape: []int{1 << 62, 1 << 62, 4}}, "is too large"},
	} {
		_, _, err := tc.d.Bytes()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "fft: ") {
			t.Errorf("%s: Bytes(%+v) = %v, want an error containing %q", tc.name, tc.d, err, tc.want)
		}
	}
}

func TestDescBytes(t *testing.T) {
	for _, tc := range []struct {
		d       Desc
		in, out int
	}{
		{Desc{Shape: []int{8}}, 64, 64},
		{Desc{Shape: []int{8}, Precision: Double}, 128, 128},
		{Desc{Shape: []int{1}}, 8, 8},
		{Desc{Shape: []int{30}, Batch: 3}, 3 * 30 * 8, 3 * 30 * 8},
		// R2C: n reals in, n/2+1 complex out.
		{Desc{Shape: []int{8}, Type: R2C}, 8 * 4, 5 * 8},
		{Desc{Shape: []int{7}, Type: R2C, Precision: Double}, 7 * 8, 4 * 16},
		{Desc{Shape: []int{1}, Type: R2C}, 4, 8},
		// Only the last dimension is halved.
		{Desc{Shape: []int{5, 7}, Type: C2R, Batch: 2}, 2 * 5 * 4 * 8, 2 * 35 * 4},
		{Desc{Shape: []int{4, 6, 3}, Type: R2C, Precision: Double}, 72 * 8, 4 * 6 * 2 * 16},
		// In place: one buffer of the complex size; the real rows padded.
		{Desc{Shape: []int{4, 6, 3}, Type: R2C, InPlace: true}, 48 * 8, 48 * 8},
		{Desc{Shape: []int{97}, Type: C2R, InPlace: true, Batch: 2}, 2 * 49 * 8, 2 * 49 * 8},
		{Desc{Shape: []int{8}, InPlace: true}, 64, 64}, // ignored for C2C
	} {
		in, out, err := tc.d.Bytes()
		if err != nil || in != tc.in || out != tc.out {
			t.Errorf("Bytes(%+v) = %d, %d, %v; want %d, %d", tc.d, in, out, err, tc.in, tc.out)
		}
	}
}

func TestKey(t *testing.T) {
	shape := []int{5, 7}
	a, err := Desc{Shape: shape}.check("test")
	if err != nil {
		t.Fatal(err)
	}
	shape[0] = 6 // the layout keeps its own copy
	if a.Shape[0] != 5 {
		t.Fatalf("layout shares the caller's Shape: %v", a.Shape)
	}
	same := []Desc{
		{Shape: []int{5, 7}, Batch: 1},
		{Shape: []int{5, 7}, InPlace: true}, // C2C: one plan does both
	}
	for _, d := range same {
		l, err := d.check("test")
		if err != nil || l.key() != a.key() {
			t.Errorf("key(%+v) = %+v, want %+v (%v)", d, l.key(), a.key(), err)
		}
	}
	differ := []Desc{
		{Shape: []int{7, 5}},
		{Shape: []int{5, 7, 1}},
		{Shape: []int{35}},
		{Shape: []int{5, 7}, Batch: 2},
		{Shape: []int{5, 7}, Precision: Double},
		{Shape: []int{5, 7}, Type: R2C},
		{Shape: []int{5, 7}, Type: C2R},
	}
	seen := map[key]Desc{a.key(): {Shape: []int{5, 7}}}
	for _, d := range append(differ, Desc{Shape: []int{5, 7}, Type: R2C, InPlace: true}) {
		l, err := d.check("test")
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[l.key()]; ok {
			t.Errorf("%+v and %+v share key %+v", d, prev, l.key())
		}
		seen[l.key()] = d
	}
}

func TestCufftType(t *testing.T) {
	want := map[[2]int]cufft.Type{
		{int(C2C), int(Single)}: cufft.C2C, {int(R2C), int(Single)}: cufft.R2C, {int(C2R), int(Single)}: cufft.C2R,
		{int(C2C), int(Double)}: cufft.Z2Z, {int(R2C), int(Double)}: cufft.D2Z, {int(C2R), int(Double)}: cufft.Z2D,
	}
	for k, w := range want {
		l, err := Desc{Shape: []int{4}, Type: Type(k[0]), Precision: Precision(k[1])}.check("test")
		if err != nil {
			t.Fatal(err)
		}
		if got := l.cufftType(); got != w {
			t.Errorf("%v %v: cufftType %v, want %v", l.Type, l.Precision, got, w)
		}
	}
}

func TestPlanArgs(t *testing.T) {
	for _, tc := range []struct {
		d    Desc
		want planArgs
	}{
		// Out of place: the basic layout, embeds nil.
		{Desc{Shape: []int{30}, Batch: 3}, planArgs{n: []int64{30}, idist: 30, odist: 30}},
		{Desc{Shape: []int{7}, Type: R2C}, planArgs{n: []int64{7}, idist: 7, odist: 4}},
		{Desc{Shape: []int{5, 7}, Type: C2R}, planArgs{n: []int64{5, 7}, idist: 20, odist: 35}},
		// In place: the padded real rows spelled out.
		{Desc{Shape: []int{7}, Type: R2C, InPlace: true},
			planArgs{n: []int64{7}, inembed: []int64{8}, onembed: []int64{4}, idist: 8, odist: 4}},
		{Desc{Shape: []int{8}, Type: R2C, InPlace: true},
			planArgs{n: []int64{8}, inembed: []int64{10}, onembed: []int64{5}, idist: 10, odist: 5}},
		{Desc{Shape: []int{5, 6}, Type: C2R, InPlace: true},
			planArgs{n: []int64{5, 6}, inembed: []int64{5, 4}, onembed: []int64{5, 8}, idist: 20, odist: 40}},
		{Desc{Shape: []int{4, 6, 3}, Type: R2C, InPlace: true, Batch: 2},
			planArgs{n: []int64{4, 6, 3}, inembed: []int64{4, 6, 4}, onembed: []int64{4, 6, 2}, idist: 96, odist: 48}},
	} {
		l, err := tc.d.check("test")
		if err != nil {
			t.Fatal(err)
		}
		if got := l.planArgs(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("planArgs(%+v) = %+v, want %+v", tc.d, got, tc.want)
		}
	}
}

// fakeMR is a memory resource whose Buffers point at made-up addresses
// that are never used: the checks below fail before any call.
type fakeMR struct{ hostOnly bool }

func (fakeMR) Allocate(int, *core.Stream) (*core.Buffer, error)     { return nil, errors.New("fake") }
func (fakeMR) Deallocate(driver.Deviceptr, int, *core.Stream) error { return nil }
func (fakeMR) Device() *core.Device                                 { return nil }
func (m fakeMR) DeviceAccessible() bool                             { return !m.hostOnly }
func (m fakeMR) HostAccessible() bool                               { return m.hostOnly }

func fakeBuffer(addr driver.Deviceptr, size int) *core.Buffer {
	return core.NewBuffer(addr, size, fakeMR{}, nil)
}

func fakeHostBuffer(addr driver.Deviceptr, size int) *core.Buffer {
	return core.NewBuffer(addr, size, fakeMR{true}, nil)
}

// fakePlan is a Plan with no cuFFT plan, stream or device behind it.
func fakePlan(t testing.TB, d Desc) *Plan {
	t.Helper()
	l, err := d.check("test")
	must(t, err)
	return &Plan{l: l}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestExecChecks runs every check a transform makes before it calls
// cuFFT, on a plan with no cuFFT plan or stream behind it: each must fail
// with its own error, and none may reach the stream.
func TestExecChecks(t *testing.T) {
	const base = 1 << 20
	c2c := fakePlan(t, Desc{Shape: []int{8}})                               // 64 bytes each side
	r2c := fakePlan(t, Desc{Shape: []int{8}, Type: R2C})                    // 32 in, 40 out
	c2r := fakePlan(t, Desc{Shape: []int{5, 7}, Type: C2R, Batch: 2})       // 320 in, 280 out
	inPlace := fakePlan(t, Desc{Shape: []int{7}, Type: R2C, InPlace: true}) // 32 both
	z2z := fakePlan(t, Desc{Shape: []int{8}, Precision: Double})            // 128 each, 16-byte aligned

	closedBuf := fakeBuffer(base, 64)
	must(t, closedBuf.Close())
	shared := fakeBuffer(base, 4096)

	for _, tc := range []struct {
		name    string
		p       *Plan
		inverse bool
		in, out *core.Buffer
		want    string
	}{
		{"nil input", c2c, false, nil, fakeBuffer(base, 64), "nil input or output"},
		{"nil output", c2c, true, fakeBuffer(base, 64), nil, "nil input or output"},
		{"forward C2R", c2r, false, fakeBuffer(base, 320), fakeBuffer(2*base, 280), "a C2R plan only runs the inverse"},
		{"inverse R2C", r2c, true, fakeBuffer(base, 32), fakeBuffer(2*base, 40), "an R2C plan only runs the forward"},
		{"short input", c2c, false, fakeBuffer(base, 56), fakeBuffer(2*base, 64), "input Buffer has 56 bytes; Single C2C [8] needs 64 (8 complex64)"},
		{"short output", c2c, false, fakeBuffer(base, 64), fakeBuffer(2*base, 63), "output Buffer has 63 bytes"},
		{"short R2C output", r2c, false, fakeBuffer(base, 32), fakeBuffer(2*base, 32), "output Buffer has 32 bytes; Single R2C [8] needs 40 (5 complex64)"},
		{"short R2C input", r2c, false, fakeBuffer(base, 28), fakeBuffer(2*base, 40), "needs 32 (8 float32)"},
		{"short C2R input", c2r, true, fakeBuffer(base, 319), fakeBuffer(2*base, 280), "Single C2R [5 7] batch 2 needs 320 (40 complex64)"},
		{"short C2R output", c2r, true, fakeBuffer(base, 320), fakeBuffer(2*base, 279), "needs 280 (70 float32)"},
		{"short in place", inPlace, false, fakeBuffer(base, 28), fakeBuffer(base, 28), "in place needs 32 (4 complex64)"},
		{"unaligned input", c2c, false, fakeBuffer(base+4, 64), fakeBuffer(2*base, 64), "input Buffer address 0x100004 is not aligned to 8 bytes"},
		{"unaligned output", c2c, false, fakeBuffer(base, 64), fakeBuffer(2*base+4, 64), "output Buffer address 0x200004 is not aligned to 8 bytes"},
		{"unaligned double", z2z, false, fakeBuffer(base+8, 128), fakeBuffer(2*base, 128), "not aligned to 16 bytes, as cuFFT requires for Double data"},
		{"in-place plan, two buffers", inPlace, false, fakeBuffer(base, 32), fakeBuffer(2*base, 32), "the plan is in place"},
		{"out-of-place R2C, one buffer", r2c, false, shared, shared, "same memory, but the R2C plan is out of place"},
		{"out-of-place C2R, one buffer", c2r, true, shared, shared, "same memory, but the C2R plan is out of place"},
		{"partial overlap", c2c, false, fakeBuffer(base, 64), fakeBuffer(base+32, 64), "overlap without being the same memory"},
		{"partial overlap R2C", r2c, false, fakeBuffer(base+8, 32), fakeBuffer(base, 40), "overlap without being the same memory"},
		{"host input", c2c, false, fakeHostBuffer(base, 64), fakeBuffer(2*base, 64), "input is fft.fakeMR memory, which the GPU cannot access"},
		{"host output", c2c, false, fakeBuffer(base, 64), fakeHostBuffer(2*base, 64), "output is fft.fakeMR memory, which the GPU cannot access"},
	} {
		var err error
		if tc.inverse {
			err = tc.p.Inverse(tc.in, tc.out)
		} else {
			err = tc.p.Forward(tc.in, tc.out)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "fft: Plan.") {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}

	// A closed Buffer, either side, is core.ErrClosed.
	if err := c2c.Forward(closedBuf, fakeBuffer(2*base, 64)); !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "input") {
		t.Errorf("closed input: %v, want core.ErrClosed", err)
	}
	if err := c2c.Forward(fakeBuffer(2*base, 64), closedBuf); !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "output") {
		t.Errorf("closed output: %v, want core.ErrClosed", err)
	}
	// The direction is checked before anything is compiled.
	if err := r2c.InverseNormalized(fakeBuffer(base, 32), fakeBuffer(2*base, 40)); err == nil || !strings.Contains(err.Error(), "only runs the forward") {
		t.Errorf("InverseNormalized on R2C: %v", err)
	}
	// A closed plan is core.ErrClosed, and Close stays idempotent.
	closed := fakePlan(t, Desc{Shape: []int{8}}) // no State: closed
	if err := closed.Forward(fakeBuffer(base, 64), fakeBuffer(2*base, 64)); !errors.Is(err, core.ErrClosed) {
		t.Errorf("closed plan: %v, want core.ErrClosed", err)
	}
	if err := closed.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var nilPlan *Plan
	if err := nilPlan.Forward(shared, shared); err == nil || !strings.Contains(err.Error(), "nil *Plan") {
		t.Errorf("nil plan: %v", err)
	}
	if err := nilPlan.InverseNormalized(shared, shared); err == nil || !strings.Contains(err.Error(), "nil *Plan") {
		t.Errorf("nil plan: %v", err)
	}
}

func TestPlanAccessors(t *testing.T) {
	p := fakePlan(t, Desc{Shape: []int{5, 7}, Type: R2C})
	d := p.Desc()
	if d.Batch != 1 || !reflect.DeepEqual(d.Shape, []int{5, 7}) || d.Type != R2C {
		t.Errorf("Desc() = %+v", d)
	}
	d.Shape[0] = 9
	if p.Desc().Shape[0] != 5 {
		t.Error("Desc() shares the plan's Shape")
	}
	if in, out := p.Bytes(); in != 35*4 || out != 5*4*8 {
		t.Errorf("Bytes() = %d, %d", in, out)
	}
	if p.WorkSize() != 0 {
		t.Errorf("WorkSize() = %d without a work area", p.WorkSize())
	}
}

func TestNewWithoutStream(t *testing.T) {
	if _, err := NewPlan(nil, Desc{Shape: []int{8}}); err == nil || !strings.Contains(err.Error(), "nil *core.Stream") {
		t.Errorf("NewPlan(nil): %v", err)
	}
	if _, err := New(nil, nil); err == nil || !strings.Contains(err.Error(), "nil *core.Stream") {
		t.Errorf("New(nil, nil): %v", err)
	}
	var zero Cache
	if _, err := zero.Plan(Desc{Shape: []int{8}}); err == nil || !strings.Contains(err.Error(), "not made by New") {
		t.Errorf("zero Cache: %v", err)
	}
	// An invalid Desc fails before the stream is touched (this one has no
	// context behind it).
	s := new(core.Stream)
	if _, err := NewPlan(s, Desc{}); err == nil || !strings.Contains(err.Error(), "Desc.Shape") {
		t.Errorf("NewPlan(bad Desc): %v", err)
	}
	c, err := New(s, nil)
	must(t, err)
	if _, err := c.Plan(Desc{Shape: []int{8}, Batch: -2}); err == nil || !strings.Contains(err.Error(), "Desc.Batch") {
		t.Errorf("Cache.Plan(bad Desc): %v", err)
	}
	if c.Len() != 0 || c.Stream() != s {
		t.Errorf("Len %d, Stream %p", c.Len(), c.Stream())
	}
	must(t, c.Close())
	must(t, c.Close())
	if _, err := c.Plan(Desc{Shape: []int{8}}); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Plan on a closed Cache: %v, want core.ErrClosed", err)
	}
}

// TestScaleSourceCompiles compiles the normalization kernel with the
// local NVRTC (loading it needs a GPU, which the GPU tests do).
func TestScaleSourceCompiles(t *testing.T) {
	prog, err := core.NewProgram(scaleSource, "c++", &core.ProgramOptions{Name: "cudago_fft_scale", Arch: "sm_75", NoCache: true})
	must(t, err)
	defer prog.Close()
	code, err := prog.Compile(core.CodeCubin)
	if err != nil {
		t.Fatalf("%v\n%s", err, prog.Log())
	}
	defer code.Close()
	if len(code.Code()) == 0 {
		t.Fatal("empty cubin")
	}
}
