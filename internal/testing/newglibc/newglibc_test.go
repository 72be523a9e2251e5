package newglibc

import (
	"errors"
	"testing"
)

func TestNeeded(t *testing.T) {
	refused := errors.New("pathfinder: cannot find nccl; tried:\n\tlocal install: /x/libnccl.so.2: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by /x/libnccl.so.2)")
	if !Needed(refused) {
		t.Errorf("Needed(%q) = false", refused)
	}
	for _, err := range []error{nil, errors.New("libnccl.so.2: cannot open shared object file"), errors.New("version `GLIBCXX_3.4.32' not found")} {
		if Needed(err) {
			t.Errorf("Needed(%v) = true", err)
		}
	}
}
