package libhandle

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
)

// Operands holds the Buffers of one library call open (core.Buffer.Acquire)
// until Release, and checks what needs them held: that the GPU can use
// their memory, that it is Device's (when Device is not nil) and that
// their addresses are aligned. Its errors name Package, Func and the
// argument. The first five Buffers need no allocation.
//
//	ops := libhandle.Operands{Package: "sparse", Func: "SpMV", Device: st.Device()}
//	defer ops.Release()
//	x, err := ops.Add("x", xb, 4, "float32")
type Operands struct {
	Package, Func string
	Device        *core.Device

	// The Buffers held, for Release; their names are needed only by the
	// errors of Add, so they are not kept (a small library call's Go side
	// copies and clears this struct).
	n     int
	fixed [5]*core.Buffer
	more  []*core.Buffer
}

// operand names one Buffer of a call in Add's errors: arg, or arg[idx]
// when idx >= 0.
type operand struct {
	arg string
	idx int
}

func (x *operand) name() string {
	if x.idx < 0 {
		return x.arg
	}
	return fmt.Sprintf("%s[%d]", x.arg, x.idx)
}

// Add acquires b, the argument arg, and returns its device address as the
// bindings take it. align (a power of two; 1 for none) is the alignment
// its address needs, for elements named elem in the error ("float32").
func (o *Operands) Add(arg string, b *core.Buffer, align int, elem string) (unsafe.Pointer, error) {
	return o.AddAt(arg, -1, b, align, elem)
}

// AddAt is Add for arg[idx], one Buffer of a slice of them.
func (o *Operands) AddAt(arg string, idx int, b *core.Buffer, align int, elem string) (unsafe.Pointer, error) {
	x := operand{arg, idx}
	p, err := b.Acquire()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %s: %w", o.Package, o.Func, x.name(), err)
	}
	if o.n < len(o.fixed) {
		o.fixed[o.n] = b
	} else {
		o.more = append(o.more, b)
	}
	o.n++
	if mr := b.MemoryResource(); mr != nil {
		if !mr.DeviceAccessible() {
			return nil, o.argErr(&x, "%s is %T memory, which the GPU cannot access", x.name(), mr)
		}
		if d := mr.Device(); d != o.Device && d != nil && o.Device != nil && d.Ordinal() != o.Device.Ordinal() {
			return nil, o.argErr(&x, "%s is memory of %v, but the stream is on %v", x.name(), d, o.Device)
		}
	}
	if align > 1 && p&driver.Deviceptr(align-1) != 0 { // a mask: a division by a variable is slow
		return nil, o.argErr(&x, "%s's address %#x is not aligned to its %d-byte %s elements", x.name(), uint64(p), align, elem)
	}
	return Ptr(p), nil
}

func (o *Operands) argErr(x *operand, format string, args ...any) error {
	return ArgErr(o.Package, o.Func, x.name(), format, args...)
}

// Release releases what Add acquired.
func (o *Operands) Release() {
	for i := range o.n {
		if i < len(o.fixed) {
			o.fixed[i].Release()
			o.fixed[i] = nil
		} else {
			o.more[i-len(o.fixed)].Release()
		}
	}
	o.n, o.more = 0, o.more[:0]
}

// Ptr converts a device address to a pointer for the bindings (which type
// it further). The address is not Go memory and Go never dereferences
// it; converting through the address's own storage is the form go vet
// accepts, and it is no pointer arithmetic for checkptr to refuse.
func Ptr(p driver.Deviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// PtrTo is Ptr typed: the device address p as a *T.
func PtrTo[T any](p driver.Deviceptr) *T { return (*T)(Ptr(p)) }

// Addr is the device address that a pointer from Add or Ptr holds.
func Addr(p unsafe.Pointer) driver.Deviceptr { return driver.Deviceptr(uintptr(p)) }

// SizeOf is the size in bytes of a T.
func SizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// AddOf is Add for an array of T: its address must be aligned to T's size
// (at most 16 bytes, the most a CUDA type needs).
func AddOf[T any](o *Operands, arg string, b *core.Buffer) (unsafe.Pointer, error) {
	return o.Add(arg, b, min(SizeOf[T](), 16), ElemName[T]())
}

// ElemName is T's name in errors: "float32", "blas.Half".
func ElemName[T any]() string { return reflect.TypeFor[T]().String() }

// CheckDense checks that b, the argument arg, holds a dense rows×cols
// array of T (cols at least 1): what can be checked before it is held.
func CheckDense[T any](pkg, fn, arg string, b *core.Buffer, rows, cols int) error {
	if b == nil {
		return ArgErr(pkg, fn, arg, "nil *core.Buffer for %s", arg)
	}
	es, name := SizeOf[T](), ElemName[T]()
	if rows > math.MaxInt/es/cols {
		return ArgErr(pkg, fn, arg, "%s of %d×%d elements is too large", arg, rows, cols)
	}
	if need := rows * cols * es; b.Size() < need {
		return ArgErr(pkg, fn, arg, "%s holds %d bytes, want %d×%d elements of %s = %d bytes", arg, b.Size(), rows, cols, name, need)
	}
	return nil
}

// CheckOverlap refuses two operands, arg1 of n1 bytes from b1's start and
// arg2 of n2 bytes from b2's, that share a byte: the library would read
// one while it writes the other.
func CheckOverlap(pkg, fn, arg1 string, b1 *core.Buffer, n1 int, arg2 string, b2 *core.Buffer, n2 int) error {
	p, q := uint64(b1.Ptr()), uint64(b2.Ptr())
	if p < q+uint64(n2) && q < p+uint64(n1) {
		return ArgErr(pkg, fn, arg2, "%s and %s overlap", arg1, arg2)
	}
	return nil
}
