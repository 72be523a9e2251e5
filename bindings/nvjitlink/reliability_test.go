package nvjitlink_test

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvjitlink"
	"github.com/cudago/cudago/internal/testing/testenv"
)

const brokenPTX = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n\tbogus.instruction %r1;\n\tret;\n}\n"

// linkOnce creates a handle with opts, adds data of type typ, completes,
// and destroys the handle on every path. It returns the first error and
// the error log.
func linkOnce(opts []string, typ nvjitlink.InputType, data []byte) (error, string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := nvjitlink.Create(uint32(len(opts)), opts)
	if h != 0 {
		defer nvjitlink.Destroy(&h)
	}
	if err != nil {
		return err, ""
	}
	buf := append(append([]byte(nil), data...), 0)
	if err := nvjitlink.AddData(h, typ, unsafe.Pointer(&buf[0]), uint64(len(buf)), "input"); err != nil {
		log, _ := nvjitlink.ErrorLog(h)
		return err, log
	}
	err = nvjitlink.Complete(h)
	log, _ := nvjitlink.ErrorLog(h)
	runtime.KeepAlive(buf)
	return err, log
}

// TestReliabilityBadInput feeds nvJitLink broken PTX, garbage LTO-IR and
// CUBIN, unknown options and architectures: each fails with an *Error of
// the expected code, and 200 repeats do not grow the process beyond what
// nvJitLink itself keeps (see docs/reliability.md).
func TestReliabilityBadInput(t *testing.T) {
	garbage := []byte(strings.Repeat("\xde\xad\xbe\xef\x00\x13", 100))
	cases := []struct {
		name string
		opts []string
		typ  nvjitlink.InputType
		data []byte
		code nvjitlink.Result
		log  string
		// limit is the RSS growth allowed over 200 repeats. nvJitLink 12.4
		// keeps about 90 KiB per failed AddData of PTX or ELF input even
		// after nvJitLinkDestroy (the handle is destroyed here on every
		// path): those cases get 64 MiB, the rest 6 MiB.
		limit int64
	}{
		{"broken-ptx", []string{"-arch=sm_90"}, nvjitlink.InputPtx, []byte(brokenPTX), nvjitlink.ErrorPtxCompile, "bogus", 64 << 20},
		{"garbage-ltoir", []string{"-arch=sm_90", "-lto"}, nvjitlink.InputLtoir, garbage, 0, "", 6 << 20},
		{"garbage-cubin", []string{"-arch=sm_90"}, nvjitlink.InputCubin, garbage, 0, "", 64 << 20},
		{"garbage-any", []string{"-arch=sm_90"}, nvjitlink.InputAny, garbage, 0, "", 64 << 20},
		{"unknown-option", []string{"-arch=sm_90", "-no-such-option"}, nvjitlink.InputPtx, []byte(brokenPTX), nvjitlink.ErrorUnrecognizedOption, "", 6 << 20},
		{"no-arch", nil, nvjitlink.InputPtx, []byte(brokenPTX), 0, "", 6 << 20},
		{"unknown-arch", []string{"-arch=sm_999"}, nvjitlink.InputPtx, []byte(brokenPTX), 0, "", 64 << 20},
		{"malformed-arch", []string{"-arch=ninety"}, nvjitlink.InputPtx, []byte(brokenPTX), 0, "", 6 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err, log := linkOnce(c.opts, c.typ, c.data)
			t.Logf("%v\nlog: %s", err, log)
			testenv.BadInput[*nvjitlink.Error](t, err, c.code, log, c.log, c.limit, func() { linkOnce(c.opts, c.typ, c.data) })
		})
	}
}
