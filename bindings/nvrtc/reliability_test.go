package nvrtc_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/testenv"
)

// compileOnce creates a program, compiles it with opts and destroys it on
// every path, returning the compile error and the log.
func compileOnce(src string, opts []string) (error, string) {
	p, err := nvrtc.CreateProgram(src, "bad.cu", 0, nil, nil)
	if err != nil {
		return err, ""
	}
	defer nvrtc.DestroyProgram(&p)
	err = nvrtc.CompileProgram(p, int32(len(opts)), opts)
	log, _ := nvrtc.ProgramLog(p)
	return err, log
}

// TestReliabilityBadInput feeds NVRTC broken C++, unknown options and
// architectures: each fails with an *Error of the expected code and a log
// naming the fault, and 200 repeats do not grow the process.
func TestReliabilityBadInput(t *testing.T) {
	cases := []struct {
		name, src string
		opts      []string
		code      nvrtc.Result
		log       string
	}{
		{"broken-c++", "__global__ void k() { undefined_thing = 1; }", nil, nvrtc.ErrorCompilation, "undefined_thing"},
		{"unterminated", "__global__ void k() { int x = ", nil, nvrtc.ErrorCompilation, "error"},
		{"binary-garbage", "\x7fELF\x02\x01\x01\x00\xff\xfe\xfd", nil, nvrtc.ErrorCompilation, "error"},
		{"unknown-option", "__global__ void k() {}", []string{"--no-such-option"}, nvrtc.ErrorInvalidOption, "--no-such-option"},
		{"unknown-arch", "__global__ void k() {}", []string{"-arch=sm_999"}, nvrtc.ErrorInvalidOption, "arch"},
		{"malformed-arch", "__global__ void k() {}", []string{"-arch=ninety"}, nvrtc.ErrorInvalidOption, "arch"},
		{"empty-option", "__global__ void k() {}", []string{""}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err, log := compileOnce(c.src, c.opts)
			t.Logf("%v\nlog: %s", err, log)
			if c.code == 0 && err == nil {
				return // NVRTC may accept it; nothing crashed
			}
			testenv.BadInput[*nvrtc.Error](t, err, c.code, log, c.log, 6<<20, func() { compileOnce(c.src, c.opts) })
		})
	}
}
