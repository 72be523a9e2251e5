package core

import "errors"

// ErrClosed is returned by an operation on a resource after its Close.
var ErrClosed = errors.New("cudago/core: use of a closed resource")
