package libhandle

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/lib"
)

// failingMemory is memory whose Deallocate fails, to see Close report it.
type failingMemory struct{ core.MemoryResource }

var errFree = errors.New("free failed")

func (failingMemory) Deallocate(driver.Deviceptr, int, *core.Stream) error { return errFree }
func (failingMemory) DeviceAccessible() bool                               { return true }
func (failingMemory) Device() *core.Device                                 { return nil }

// hostMemory is memory the GPU cannot access.
type hostMemory struct{ core.MemoryResource }

func (hostMemory) DeviceAccessible() bool { return false }

// TestCloseZero: a State that never ran an operation owns nothing on the
// GPU; Close frees the kept Buffers (once), joins their errors but for
// core.ErrClosed, and later operations give core.ErrClosed.
func TestCloseZero(t *testing.T) {
	st := &State[uintptr]{lib: Lib[uintptr]{Package: "test"}}
	kept := core.NewBuffer(0, 64, nil, nil)
	closedBefore := core.NewBuffer(0, 64, nil, nil)
	closedBefore.Close()
	failing := core.NewBuffer(0x1000, 64, failingMemory{}, nil)
	for _, b := range []*core.Buffer{nil, kept, closedBefore, failing} {
		st.Keep(b)
	}
	if err := st.Close(); !errors.Is(err, errFree) {
		t.Errorf("Close = %v, want the failing buffer's %v", err, errFree)
	}
	if _, err := kept.Acquire(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("a kept buffer is open after Close: Acquire = %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, _, err := st.Begin(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Begin after Close = %v, want core.ErrClosed", err)
	}
	if err := st.Do(func() error { return nil }); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Do after Close = %v, want core.ErrClosed", err)
	}
	if err := st.Err(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Err after Close = %v, want core.ErrClosed", err)
	}
	if n := st.WorkspaceSize(); n != 0 {
		t.Errorf("WorkspaceSize = %d, want 0", n)
	}
	if st.Created() || st.Stream() != nil {
		t.Errorf("Created = %v, Stream = %v after Close of an unused State", st.Created(), st.Stream())
	}
}

// TestNil: a nil State is a closed one, and New refuses a nil stream with
// an ArgError.
func TestNil(t *testing.T) {
	var st *State[uintptr]
	if _, _, err := st.Begin(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Begin = %v", err)
	}
	if st.Close() != nil || st.Stream() != nil || st.Device() != nil || st.WorkspaceSize() != 0 || st.Created() {
		t.Error("nil State")
	}
	if !errors.Is(st.Err(), core.ErrClosed) || !errors.Is(st.Do(func() error { return nil }), core.ErrClosed) {
		t.Error("nil State: Err or Do is not core.ErrClosed")
	}
	_, err := New(Lib[uintptr]{Package: "pkg"}, "New", nil)
	var ae *lib.ArgError
	if !errors.As(err, &ae) || ae.Package != "pkg" || ae.Func != "New" || ae.Arg != "stream" ||
		!strings.HasPrefix(err.Error(), "pkg: New: nil *core.Stream") {
		t.Errorf("New(nil) = %v, want an ArgError for stream", err)
	}
}

// TestOperands: Add gives the Buffer's address and holds it until Release;
// a closed Buffer gives core.ErrClosed, memory the GPU cannot access and a
// misaligned address give ArgErrors naming the argument; more Buffers than
// the fixed room are held too.
func TestOperands(t *testing.T) {
	a := core.NewBuffer(0, 64, nil, nil)
	b := core.NewBuffer(0x1000, 64, nil, nil)
	v, err := b.View(16, 16)
	if err != nil {
		t.Fatal(err)
	}
	closed := core.NewBuffer(0, 8, nil, nil)
	closed.Close()
	host := core.NewBuffer(0x2000, 8, hostMemory{}, nil)
	odd := core.NewBuffer(0x3002, 8, nil, nil)

	o := Operands{Package: "pkg", Func: "F"}
	if p, err := o.Add("a", a, 4, "float32"); err != nil || p != nil {
		t.Errorf("Add(a) = %v, %v, want address 0", p, err)
	}
	if p, err := o.Add("v", v, 16, "complex128"); err != nil || Addr(p) != 0x1010 {
		t.Errorf("Add(view at 0x1010) = %v, %v", p, err)
	}
	if _, err := o.AddAt("c", 2, closed, 1, ""); !errors.Is(err, core.ErrClosed) || !strings.HasPrefix(err.Error(), "pkg: F: c[2]: ") {
		t.Errorf("AddAt(closed) = %v, want core.ErrClosed from pkg: F: c[2]", err)
	}
	wantArg := func(err error, arg, msg string) {
		t.Helper()
		var ae *lib.ArgError
		if !errors.As(err, &ae) || ae.Arg != arg || !strings.Contains(err.Error(), msg) {
			t.Errorf("got %v, want an ArgError for %s containing %q", err, arg, msg)
		}
	}
	_, err = o.Add("h", host, 1, "")
	wantArg(err, "h", "pkg: F: h is libhandle.hostMemory memory, which the GPU cannot access")
	_, err = o.AddAt("x", 1, odd, 4, "float32")
	wantArg(err, "x[1]", "pkg: F: x[1]'s address 0x3002 is not aligned to its 4-byte float32 elements")
	if o.n != 4 {
		t.Errorf("Operands holds %d buffers, want 4 (the refused ones are held too)", o.n)
	}
	for range 4 {
		if _, err := o.Add("more", b, 1, ""); err != nil {
			t.Fatal(err)
		}
	}
	if o.n != 8 || len(o.more) != 3 {
		t.Errorf("n = %d, %d more, want 8 and 3", o.n, len(o.more))
	}
	o.Release()
	if o.n != 0 || o.fixed[0] != nil || len(o.more) != 0 {
		t.Errorf("after Release: n = %d, fixed[0] = %v, more = %v", o.n, o.fixed[0], o.more)
	}
}

func TestCheckOverlap(t *testing.T) {
	root := core.NewBuffer(0x1000, 256, nil, nil)
	x, _ := root.View(0, 64)
	y, _ := root.View(64, 64)
	if err := CheckOverlap("pkg", "F", "x", x, 64, "y", y, 64); err != nil {
		t.Errorf("adjacent: %v", err)
	}
	err := CheckOverlap("pkg", "F", "x", x, 65, "y", y, 64)
	var ae *lib.ArgError
	if !errors.As(err, &ae) || ae.Arg != "y" || err.Error() != "pkg: F: x and y overlap" {
		t.Errorf("overlapping: %v", err)
	}
}

func TestPtr(t *testing.T) {
	if p := PtrTo[float64](0x1230); Addr(Ptr(0x1230)) != 0x1230 || Addr(unsafe.Pointer(p)) != 0x1230 {
		t.Errorf("Ptr round trip: %v", p)
	}
	if SizeOf[complex128]() != 16 || SizeOf[int32]() != 4 {
		t.Error("SizeOf")
	}
	if ElemName[float32]() != "float32" || ElemName[complex128]() != "complex128" || ElemName[lib.Transpose]() != "lib.Transpose" {
		t.Error("ElemName")
	}
}
