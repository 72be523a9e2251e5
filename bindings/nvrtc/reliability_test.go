package nvrtc_test

import (
	"testing"

	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/internal/testing/bindtest"
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
	bindtest.BadSources[*nvrtc.Error](t, []bindtest.BadSource[nvrtc.Result]{
		{Name: "broken-c++", Src: "__global__ void k() { undefined_thing = 1; }", Code: nvrtc.ErrorCompilation, Log: "undefined_thing"},
		{Name: "unterminated", Src: "__global__ void k() { int x = ", Code: nvrtc.ErrorCompilation, Log: "error"},
		{Name: "binary-garbage", Src: "\x7fELF\x02\x01\x01\x00\xff\xfe\xfd", Code: nvrtc.ErrorCompilation, Log: "error"},
		{Name: "unknown-option", Src: "__global__ void k() {}", Opts: []string{"--no-such-option"}, Code: nvrtc.ErrorInvalidOption, Log: "--no-such-option"},
		{Name: "unknown-arch", Src: "__global__ void k() {}", Opts: []string{"-arch=sm_999"}, Code: nvrtc.ErrorInvalidOption, Log: "arch"},
		{Name: "malformed-arch", Src: "__global__ void k() {}", Opts: []string{"-arch=ninety"}, Code: nvrtc.ErrorInvalidOption, Log: "arch"},
		{Name: "empty-option", Src: "__global__ void k() {}", Opts: []string{""}}, // NVRTC may accept it
	}, 6<<20, true, compileOnce)
}
