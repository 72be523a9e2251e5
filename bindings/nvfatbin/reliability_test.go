package nvfatbin_test

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvfatbin"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// buildOnce creates a handle with opts, runs add on it, gets the fatbin
// and destroys the handle on every path.
func buildOnce(opts []string, add func(nvfatbin.Handle) error) error {
	h, err := nvfatbin.Create(opts, uint64(len(opts)))
	if h != 0 {
		defer nvfatbin.Destroy(&h)
	}
	if err != nil {
		return err
	}
	if err := add(h); err != nil {
		return err
	}
	_, err = nvfatbin.Bytes(h)
	return err
}

// TestReliabilityBadInput feeds nvFatbin unknown options, garbage and
// truncated CUBINs, bad architecture strings and PTX without a version:
// each fails with an *Error, and 200 repeats do not grow the process.
func TestReliabilityBadInput(t *testing.T) {
	garbage := []byte(strings.Repeat("\xde\xad\xbe\xef\x00\x13", 100))
	elfHead := append([]byte("\x7fELF\x02\x01\x01\x41"), make([]byte, 120)...)
	cubin := func(b []byte, arch string) func(nvfatbin.Handle) error {
		return func(h nvfatbin.Handle) error {
			err := nvfatbin.AddCubin(h, unsafe.Pointer(&b[0]), uint64(len(b)), arch, "bad")
			runtime.KeepAlive(b)
			return err
		}
	}
	ptx := func(s, arch string) func(nvfatbin.Handle) error {
		return func(h nvfatbin.Handle) error { return nvfatbin.AddPTX(h, s, uint64(len(s)), arch, "bad", "") }
	}
	none := func(nvfatbin.Handle) error { return nil }
	cases := []struct {
		name string
		opts []string
		add  func(nvfatbin.Handle) error
		code nvfatbin.Result
	}{
		{"unknown-option", []string{"-no-such-option"}, none, nvfatbin.ErrorUnrecognizedOption},
		{"garbage-cubin", nil, cubin(garbage, "90"), 0},
		{"truncated-elf", nil, cubin(elfHead, "90"), 0},
		{"bad-arch", nil, ptx(".version 8.0\n.target sm_90\n", "ninety"), 0},
		{"unknown-arch", nil, ptx(".version 8.0\n.target sm_90\n", "999"), 0},
		{"ptx-no-version", nil, ptx("garbage\n", "90"), nvfatbin.ErrorMissingPtxVersion},
		{"empty", nil, none, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := buildOnce(c.opts, c.add)
			t.Logf("%v", err)
			if err == nil {
				return // accepted (nvFatbin checks little): nothing crashed
			}
			testenv.BadInput[*nvfatbin.Error](t, err, c.code, "", "", 6<<20, func() { buildOnce(c.opts, c.add) })
		})
	}
}
