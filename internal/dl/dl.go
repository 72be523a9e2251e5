// Package dl holds what every generated bindings package shares: the table
// of lazily resolved entry points, the typed error, and C string helpers.
package dl

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cudago/cudago/internal/version"
	"github.com/cudago/cudago/pathfinder"
)

// Proc describes one entry point of a library.
type Proc struct {
	Name    string   // the C API name: cuMemAlloc, nvrtcCompileProgram
	Symbols []string // symbols to try with dlsym, in order
	Since   string   // first CUDA version whose header declares it: "12.4"
	Version int      // cuGetProcAddress version (driver only), e.g. 3020
	// Removed is the header version that no longer declares it (only older
	// headers do), "" while the newest one does: a library of that release
	// may lack it.
	Removed string
}

// Resolver finds the address of p in lib.
type Resolver func(lib *pathfinder.Library, p *Proc) (unsafe.Pointer, error)

// Table resolves a library's entry points on first use, once each; a
// failure is remembered and returned on every later call.
type Table struct {
	lib     pathfinder.Lib
	resolve Resolver
	procs   []Proc
	ptrs    []unsafe.Pointer // read and written atomically
	mu      sync.Mutex
	errs    []error

	indexOnce sync.Once
	index     map[string]int // C name -> index, built on first Index
}

// NewTable returns a table for lib's procs.
func NewTable(lib pathfinder.Lib, r Resolver, procs []Proc) *Table {
	return &Table{lib: lib, resolve: r, procs: procs, ptrs: make([]unsafe.Pointer, len(procs)), errs: make([]error, len(procs))}
}

// Get returns the address of entry point i, resolving it on first use.
func (t *Table) Get(i int) (unsafe.Pointer, error) {
	if p := atomic.LoadPointer(&t.ptrs[i]); p != nil {
		return p, nil
	}
	return t.slow(i)
}

func (t *Table) slow(i int) (unsafe.Pointer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := atomic.LoadPointer(&t.ptrs[i]); p != nil {
		return p, nil
	}
	if t.errs[i] != nil {
		return nil, t.errs[i]
	}
	lib, err := pathfinder.Load(t.lib)
	if err != nil {
		// Not cached: a library may be found later (after the user sets a
		// path), and Load caches its own result anyway.
		return nil, fmt.Errorf("%s: %w", t.procs[i].Name, err)
	}
	p, err := t.resolve(lib, &t.procs[i])
	if err != nil {
		t.errs[i] = err
		return nil, err
	}
	atomic.StorePointer(&t.ptrs[i], p)
	return p, nil
}

// Proc returns entry point i's description.
func (t *Table) Proc(i int) *Proc { return &t.procs[i] }

// Len is the number of entry points.
func (t *Table) Len() int { return len(t.procs) }

// Index returns the index of the entry point with C name name, or -1.
// It is a map lookup: the generated StatusError calls it on every failure
// (a polled CUDA_ERROR_NOT_READY among them).
func (t *Table) Index(name string) int {
	t.indexOnce.Do(func() {
		t.index = make(map[string]int, len(t.procs))
		for i := range t.procs {
			if _, dup := t.index[t.procs[i].Name]; !dup {
				t.index[t.procs[i].Name] = i
			}
		}
	})
	if i, ok := t.index[name]; ok {
		return i
	}
	return -1
}

// MissingFunctionError says that the loaded library lacks an entry point,
// and which version of it is needed.
type MissingFunctionError struct {
	Func    string // C name
	Lib     string // path of the library that was searched
	Have    string // version of that library, if known
	Need    string // version that first has the function, if known
	Symbols []string
}

func (e *MissingFunctionError) Error() string {
	s := fmt.Sprintf("%s is not available in %s", e.Func, e.Lib)
	if e.Have != "" {
		s += " (version " + e.Have + ")"
	}
	if e.Need != "" {
		s += ": it needs version " + e.Need + " or newer"
	}
	return s
}

// Dlsym is the Resolver for libraries whose symbols are looked up by name.
func Dlsym(lib *pathfinder.Library, p *Proc) (unsafe.Pointer, error) {
	for _, s := range p.Symbols {
		if ptr, err := lib.Symbol(s); err == nil && ptr != nil {
			return ptr, nil
		}
	}
	have, _ := lib.Version()
	need := p.Since
	if need != "" && have != "" && !version.Less(have, need) {
		need = "" // the library is new enough, yet lacks it: say only what was tried
	}
	return nil, &MissingFunctionError{Func: p.Name, Lib: lib.Path, Have: have, Need: need, Symbols: p.Symbols}
}

// VersionLess reports whether dotted version a is older than b: "12.4" <
// "12.10" < "13.0". It is version.Less; a version that does not parse is
// older than every valid one.
func VersionLess(a, b string) bool { return version.Less(a, b) }

// CUDAVersion formats a CUDA version number: 12040 -> "12.4". A negative
// number, which no CUDA call returns, is written as it is.
func CUDAVersion(v int) string {
	ver, err := version.FromCUDA(v)
	if err != nil {
		return strconv.Itoa(v)
	}
	return ver.String()
}

// Code is a library's status type, as internal/bindgen generates it: an
// error whose Explanation is the header's documentation of the value ("" where
// the header has none). The driver's also has Sticky (see Error.Sticky).
type Code interface {
	~int32 | ~uint32
	error
	Explanation() string
}

// Error is a failed call: the library, the function, the status code with
// its name and the library's message for it, and the compiler or linker
// log where the library keeps one. errors.Is(err, code) matches the code.
//
// Its message is "lib: func: CODE_NAME (message)". Where the library has no
// message for the code (nvJitLink has none), the first sentence of the
// header's explanation stands in for it; a sticky code adds that the
// context can no longer be used.
type Error[C Code] struct {
	Lib     string
	Func    string
	Code    C
	Message string
	Log     string
}

func (e *Error[C]) Error() string {
	name := e.Code.Error()
	s := e.Lib + ": " + e.Func + ": " + name
	msg := e.Message
	if msg == name {
		msg = ""
	}
	if msg == "" {
		msg = strings.TrimSuffix(firstSentence(e.Code.Explanation()), ".")
	}
	if e.Sticky() {
		if msg != "" {
			msg += "; "
		}
		msg += "sticky: the context can no longer be used"
	}
	if msg != "" {
		s += " (" + msg + ")"
	}
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Unwrap returns the status code, so errors.Is and errors.As see it.
func (e *Error[C]) Unwrap() error { return e.Code }

// Explanation returns what the library's header says the code means ("" if
// it says nothing): a longer text than Message.
func (e *Error[C]) Explanation() string { return e.Code.Explanation() }

// Sticky reports whether the code leaves the context unusable: every later
// call in it fails the same way until it is destroyed or reset, or the
// process ends (a kernel that faulted: CUDA_ERROR_ILLEGAL_ADDRESS,
// CUDA_ERROR_LAUNCH_FAILED, ...). Only the driver's codes can be sticky:
// its Result has a Sticky method, generated from cuda.h's text, which this
// asks through an optional interface. Callers write
// errors.As(err, &e) && e.Sticky() with e a *driver.Error (package core's
// IsSticky does it for any error).
func (e *Error[C]) Sticky() bool {
	s, ok := any(e.Code).(interface{ Sticky() bool })
	return ok && s.Sticky()
}

// firstSentence returns the first sentence of a one-line text.
func firstSentence(s string) string {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' && s[i+2] >= 'A' && s[i+2] <= 'Z' {
			return s[:i+1]
		}
	}
	return s
}

// CountError is returned by a generated function, without calling the
// library, when a count argument is negative or larger than the slice (or
// string) whose elements it counts: the library would read past the end of
// that slice.
type CountError struct {
	Lib     string // the bindings package: "nvrtc"
	Func    string // the C function
	Count   string // the C name of the count parameter
	Value   int64  // the count passed
	Counted string // the C name of the parameter it counts
	Len     int    // its elements (a string: its bytes and the NUL the C copy adds)
}

func (e *CountError) Error() string {
	return e.Lib + ": " + e.Func + ": " + e.Count + " = " + strconv.FormatInt(e.Value, 10) +
		" is out of range: " + e.Counted + " holds " + strconv.Itoa(e.Len)
}

// CString returns s as a NUL-terminated byte slice for a C call.
func CString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// CStrings copies ss into one C allocation holding an array of pointers to
// NUL-terminated strings (C memory, as cgo requires for pointers to
// pointers). Release it with Free. A nil or empty ss gives nil.
func CStrings(ss []string) unsafe.Pointer {
	if len(ss) == 0 {
		return nil
	}
	n := len(ss) * int(unsafe.Sizeof(uintptr(0)))
	total := n
	for _, s := range ss {
		total += len(s) + 1
	}
	mem := C.malloc(C.size_t(total))
	if mem == nil {
		panic("cudago: out of C memory")
	}
	buf := unsafe.Slice((*byte)(mem), total)
	ptrs := unsafe.Slice((*unsafe.Pointer)(mem), len(ss))
	off := n
	for i, s := range ss {
		copy(buf[off:], s)
		buf[off+len(s)] = 0
		ptrs[i] = unsafe.Pointer(&buf[off])
		off += len(s) + 1
	}
	return mem
}

// Free releases memory from CStrings.
func Free(p unsafe.Pointer) {
	if p != nil {
		C.free(p)
	}
}

// GoString copies a NUL-terminated C string; nil gives "".
func GoString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	return C.GoString((*C.char)(p))
}
