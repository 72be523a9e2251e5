package dl

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"
)

func TestCheck(t *testing.T) {
	if err := Check[code]("lib", "f", 0, 0, nil); err != nil {
		t.Fatalf("success: %v", err)
	}
	msg := func(c code) (string, error) { return fmt.Sprintf("message of %d", c), nil }
	err := Check[code]("lib", "libF", 3, 0, msg)
	var e *Error[code]
	if !errors.As(err, &e) || e.Code != 3 || e.Func != "libF" || e.Message != "message of 3" {
		t.Fatalf("Check = %#v", err)
	}
	if !errors.Is(err, code(3)) {
		t.Errorf("errors.Is(err, 3) is false")
	}
	if err := Check[code]("lib", "f", 4, 0, nil); err.Error() != "lib: f: CODE_4" {
		t.Errorf("no message: %q", err)
	}
}

func TestWithLog(t *testing.T) {
	err := Check[code]("lib", "f", 3, 0, nil)
	wrapped := fmt.Errorf("compiling: %w", err)
	log := func(h int) (string, error) { return fmt.Sprintf("line %d: error", h), nil }
	if got := WithLog[code](wrapped, log, 1); got != wrapped {
		t.Fatalf("WithLog returned another error: %v", got)
	}
	var e *Error[code]
	if !errors.As(wrapped, &e) || e.Log != "line 1: error" {
		t.Errorf("the log did not reach the wrapped *Error: %#v", e)
	}
	noLog := func(int) (string, error) { return "partial", errors.New("no log") }
	unread := Check[code]("lib", "f", 3, 0, nil)
	if WithLog[code](unread, noLog, 2); unread.(*Error[code]).Log != "" {
		t.Errorf("a log that could not be read = %q, want none", unread.(*Error[code]).Log)
	}
	plain := errors.New("plain")
	if WithLog[code](plain, log, 3) != plain {
		t.Errorf("a plain error changed")
	}
}

func TestReadSized(t *testing.T) {
	data := []byte("ptx text\x00\x00")
	size := func(h int) (uint64, error) { return uint64(len(data)), nil }
	get := func(h int, p *byte) error {
		copy(unsafeSlice(p, len(data)), data)
		return nil
	}
	b, err := ReadSized(size, get, 1)
	if err != nil || string(b) != string(data) {
		t.Errorf("ReadSized = %q, %v", b, err)
	}
	// A getter of a void* buffer (nvFatbinGet) reads the same.
	getVoid := func(h int, p unsafe.Pointer) error { return get(h, (*byte)(p)) }
	if b, err := ReadSized(size, getVoid, 1); err != nil || string(b) != string(data) {
		t.Errorf("ReadSized into a void* = %q, %v", b, err)
	}
	b, err = ReadText(size, get, 1)
	if err != nil || string(b) != "ptx text" {
		t.Errorf("ReadText = %q, %v", b, err)
	}
	zero := func(int) (uint64, error) { return 0, nil }
	if b, err := ReadSized(zero, get, 1); b != nil || err != nil {
		t.Errorf("size 0: %q, %v", b, err)
	}
	fail := errors.New("size failed")
	if _, err := ReadSized(func(int) (uint64, error) { return 0, fail }, get, 1); err != fail {
		t.Errorf("size error: %v", err)
	}
}

func unsafeSlice(p *byte, n int) []byte { return unsafe.Slice(p, n) }
