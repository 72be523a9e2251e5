package nvvm_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/testing/bindtest"
)

const okIR = `target triple = "nvptx64-nvidia-cuda"
define void @k(ptr %p) {
  ret void
}
`

// compileOnce creates a program, adds src, compiles it with opts and
// destroys it on every path.
func compileOnce(src string, opts []string) (error, string) {
	p, err := nvvm.CreateProgram()
	if err != nil {
		return err, ""
	}
	defer nvvm.DestroyProgram(&p)
	if err := nvvm.AddModuleToProgram(p, src, uint64(len(src)), "bad.ll"); err != nil {
		log, _ := nvvm.ProgramLog(p)
		return err, log
	}
	err = nvvm.CompileProgram(p, int32(len(opts)), opts)
	log, _ := nvvm.ProgramLog(p)
	return err, log
}

// TestReliabilityBadInput feeds libNVVM invalid LLVM IR, unknown options
// and architectures. Malformed bitcode that libNVVM 12.4 answers by
// exiting the process is in TestReliabilityBitcodeExit.
func TestReliabilityBadInput(t *testing.T) {
	bindtest.BadSources[*nvvm.Error](t, []bindtest.BadSource[nvvm.Result]{
		{Name: "undefined-value", Src: "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @k(ptr %p) {\n  %v = load float, ptr %q\n  ret void\n}\n", Code: nvvm.ErrorCompilation, Log: "bad.ll"},
		{Name: "not-ir", Src: "this is not LLVM IR", Code: nvvm.ErrorCompilation, Log: "bad.ll"},
		{Name: "empty-ish", Src: "\n"},
		{Name: "bitcode-magic-only", Src: "BC\xc0\xde"},
		{Name: "unknown-option", Src: okIR, Opts: []string{"-no-such-option"}, Code: nvvm.ErrorInvalidOption},
		{Name: "unknown-arch", Src: okIR, Opts: []string{"-arch=compute_999"}, Code: nvvm.ErrorInvalidOption},
		{Name: "malformed-arch", Src: okIR, Opts: []string{"-arch=ninety"}, Code: nvvm.ErrorInvalidOption},
	}, 6<<20, false, compileOnce)
}

// exitingBitcode is malformed LLVM bitcode on which libNVVM 12.4 calls
// exit(1) from nvvmCompileProgram, without a message.
var exitingBitcode = "BC\xc0\xde" + strings.Repeat("\xde\xad\xbe\xef\x00\x13", 100)

// TestReliabilityBitcodeExit compiles exitingBitcode in a child process
// (the test binary, re-run) and reports what the library does with it: a
// clean error, or ending the process. cudago cannot guard against a
// library that exits; docs/reliability.md advises compiling untrusted
// bitcode in a subprocess.
func TestReliabilityBitcodeExit(t *testing.T) {
	if os.Getenv("CUDAGO_NVVM_CHILD") == "1" {
		err, log := compileOnce(exitingBitcode, nil)
		println("child-result:", errors.Is(err, nvvm.ErrorCompilation), log)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestReliabilityBitcodeExit$")
	cmd.Env = append(os.Environ(), "CUDAGO_NVVM_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child: %v\n%s", err, out)
	if strings.Contains(string(out), "panic:") || strings.Contains(string(out), "SIGSEGV") {
		t.Errorf("the child crashed in Go code:\n%s", out)
	}
	if err != nil && !strings.Contains(string(out), "child-result:") {
		major, minor, _ := nvvm.Version()
		t.Logf("KNOWN LIBRARY LIMITATION: libNVVM %d.%d ended the process (%v) on malformed bitcode", major, minor, err)
	}
}
