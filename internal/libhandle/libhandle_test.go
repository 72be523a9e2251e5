package libhandle

import (
	"errors"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// failingMemory is memory whose Deallocate fails, to see Close report it.
type failingMemory struct{ core.MemoryResource }

var errFree = errors.New("free failed")

func (failingMemory) Deallocate(driver.Deviceptr, int, *core.Stream) error { return errFree }

// TestCloseZero: a State that never ran an operation owns nothing on the
// GPU; Close frees what also gives (once), joins its errors but for
// core.ErrClosed, and later operations give core.ErrClosed.
func TestCloseZero(t *testing.T) {
	var st State[uintptr]
	kept := core.NewBuffer(0, 64, nil, nil)
	closedBefore := core.NewBuffer(0, 64, nil, nil)
	closedBefore.Close()
	failing := core.NewBuffer(0x1000, 64, failingMemory{}, nil)
	calls := 0
	also := func() []*core.Buffer {
		calls++
		return []*core.Buffer{nil, kept, closedBefore, failing}
	}
	if err := st.Close(also); !errors.Is(err, errFree) {
		t.Errorf("Close = %v, want the failing buffer's %v", err, errFree)
	}
	if _, err := kept.Acquire(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("a buffer also gave is open after Close: Acquire = %v", err)
	}
	if err := st.Close(also); err != nil || calls != 1 {
		t.Errorf("second Close = %v with also called %d times, want nil and once", err, calls)
	}
	if _, err := st.Begin(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Begin after Close = %v, want core.ErrClosed", err)
	}
	if n := st.WorkspaceSize(); n != 0 {
		t.Errorf("WorkspaceSize = %d, want 0", n)
	}
	if st.Lib() != 0 || st.Stream() != nil {
		t.Errorf("Lib = %v, Stream = %v after Close of a zero State", st.Lib(), st.Stream())
	}
}

// TestPins: Add gives the buffer's address and holds it until Release; a
// closed buffer gives core.ErrClosed and is not held.
func TestPins(t *testing.T) {
	a := core.NewBuffer(0, 64, nil, nil)
	b := core.NewBuffer(0, 64, nil, nil)
	v, err := b.View(16, 16)
	if err != nil {
		t.Fatal(err)
	}
	closed := core.NewBuffer(0, 8, nil, nil)
	closed.Close()
	var p Pins
	if ptr, err := p.Add(a); err != nil || ptr != nil {
		t.Errorf("Add(a) = %v, %v, want address 0", ptr, err)
	}
	if ptr, err := p.Add(v); err != nil || uintptr(ptr) != 16 {
		t.Errorf("Add(view at 16) = %v, %v, want address 16", ptr, err)
	}
	if _, err := p.Add(closed); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Add(closed) = %v, want core.ErrClosed", err)
	}
	if p.n != 2 {
		t.Errorf("Pins holds %d buffers, want 2", p.n)
	}
	p.Release()
	if p.n != 0 || p.bufs[0] != nil || p.bufs[1] != nil {
		t.Errorf("after Release: n = %d, bufs = %v", p.n, p.bufs)
	}
}
