package nvvm_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/testing/testenv"
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
	cases := []struct {
		name, src string
		opts      []string
		code      nvvm.Result
		log       string
	}{
		{"undefined-value", "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @k(ptr %p) {\n  %v = load float, ptr %q\n  ret void\n}\n", nil, nvvm.ErrorCompilation, "bad.ll"},
		{"not-ir", "this is not LLVM IR", nil, nvvm.ErrorCompilation, "bad.ll"},
		{"empty-ish", "\n", nil, 0, ""},
		{"bitcode-magic-only", "BC\xc0\xde", nil, 0, ""},
		{"unknown-option", okIR, []string{"-no-such-option"}, nvvm.ErrorInvalidOption, ""},
		{"unknown-arch", okIR, []string{"-arch=compute_999"}, nvvm.ErrorInvalidOption, ""},
		{"malformed-arch", okIR, []string{"-arch=ninety"}, nvvm.ErrorInvalidOption, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err, log := compileOnce(c.src, c.opts)
			t.Logf("%v\nlog: %s", err, log)
			testenv.BadInput[*nvvm.Error](t, err, c.code, log, c.log, 6<<20, func() { compileOnce(c.src, c.opts) })
		})
	}
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
