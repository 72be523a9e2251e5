package dl

import (
	"bytes"
	"errors"
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

// WithLog sets the Log of the *Error[C] in err's chain (a compiler's or
// linker's log) and returns err; other errors are returned unchanged.
func WithLog[C Code](err error, log string) error {
	var e *Error[C]
	if errors.As(err, &e) {
		e.Log = log
	}
	return err
}

// ReadSized fetches a result of h that the library hands out in two calls:
// size, then get into a buffer of that size. A size of 0 gives nil.
func ReadSized[H any](size func(H) (uint64, error), get func(H, *byte) error, h H) ([]byte, error) {
	n, err := size(h)
	if err != nil || n == 0 {
		return nil, err
	}
	buf := make([]byte, n)
	if err := get(h, &buf[0]); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadText is ReadSized for text: the trailing NULs are dropped.
func ReadText[H any](size func(H) (uint64, error), get func(H, *byte) error, h H) ([]byte, error) {
	b, err := ReadSized(size, get, h)
	return bytes.TrimRight(b, "\x00"), err
}
