package dl

import (
	"bytes"
	"errors"
	"unsafe"
)

// What every bindings package's hand-written glue needs, written once: the
// error of a failed call, a log attached to it, and results the C APIs
// hand out as a size call followed by a fill call.

// Check returns nil when code is success, else an *Error naming the
// library and function, with message(code) as its message where the
// library has an error-string call (message may be nil).
func Check[C Code](lib, fn string, code, success C, message func(C) (string, error)) error {
	if code == success {
		return nil
	}
	e := &Error[C]{Lib: lib, Func: fn, Code: code}
	if message != nil {
		e.Message, _ = message(code)
	}
	return e
}

// WithLog sets the Log of the *Error[C] in err's chain to what read
// reads from h (a compiler's or linker's log; one it cannot read is left
// out) and returns err; other errors are returned unchanged. The
// generated calls of the functions that leave a log call it on failure.
func WithLog[C Code, H any](err error, read func(H) (string, error), h H) error {
	var e *Error[C]
	if errors.As(err, &e) {
		if log, lerr := read(h); lerr == nil {
			e.Log = log
		}
	}
	return err
}

// ReadSized fetches a result of h that the library hands out in two calls:
// size, then get into a buffer of that size (a char* or a void* in C). A
// size of 0 gives nil.
func ReadSized[H any, P *byte | unsafe.Pointer](size func(H) (uint64, error), get func(H, P) error, h H) ([]byte, error) {
	n, err := size(h)
	if err != nil || n == 0 {
		return nil, err
	}
	buf := make([]byte, n)
	if err := get(h, P(unsafe.Pointer(&buf[0]))); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadText is ReadSized for text: the trailing NULs are dropped.
func ReadText[H any, P *byte | unsafe.Pointer](size func(H) (uint64, error), get func(H, P) error, h H) ([]byte, error) {
	b, err := ReadSized(size, get, h)
	return bytes.TrimRight(b, "\x00"), err
}
