// Package layoutcheck compares the memory layout of generated Go structs
// with what the C compiler computes from NVIDIA's real headers. The
// generated tests of each bindings package call it.
package layoutcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/internal/cudaheaders"
)

// Case is one C expression (sizeof, _Alignof, offsetof) and the Go value
// that must equal it.
type Case struct {
	C  string
	Go uintptr
}

// Check compiles a C program that includes header (e.g. "13.0/cuda.h":
// cuda.h of CUDA 13.0, found as package internal/cudaheaders says) and
// prints every case's C value, and fails t for each mismatch. Without the
// header it skips naming it, or fails when CUDAGO_CUDA_HEADERS is set.
func Check(t *testing.T, header string, cases []Case) {
	t.Helper()
	if len(cases) == 0 {
		t.Skip("no structs in " + header)
	}
	v, file, ok := strings.Cut(header, "/")
	if !ok {
		t.Fatalf("header %q is not version/file", header)
	}
	hs := cudaheaders.Require(t, cudaheaders.Header{Version: v, File: file})
	inc, _ := hs.Dir(v, file)
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil && os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
		// The GPU machine runs prebuilt test binaries and need not have
		// a C compiler; everywhere else cgo needs one, so this fails below.
		t.Skipf("no C compiler on the GPU machine (%v): CI checks the layout", err)
	}
	var src bytes.Buffer
	fmt.Fprintf(&src, "#include <stddef.h>\n#include <stdio.h>\n#include <stdbool.h>\n#include <sys/types.h>\n#include <%s>\nint main(void) {\n", filepath.Base(header))
	for _, c := range cases {
		fmt.Fprintf(&src, "\tprintf(\"%%zu\\n\", (size_t)(%s));\n", c.C)
	}
	src.WriteString("\treturn 0;\n}\n")
	tmp := t.TempDir()
	cfile := filepath.Join(tmp, "layout.c")
	exe := filepath.Join(tmp, "layout")
	if err := os.WriteFile(cfile, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// cuda_fp16.h and cuda_bf16.h declare nothing for C but include
	// <nv/target>, which Debian's 12.4 headers lack (as bindgen does).
	args := []string{"-std=gnu11", "-I", inc, "-D__CUDA_FP16_H__", "-D__CUDA_BF16_H__"}
	if local, ok := hs.Dir("12.4", "cuda_runtime_api.h"); ok && local != inc {
		// Last: the headers shared/cuda-headers/13.0 lacks (cuda_fp16.h,
		// cuda_runtime.h, cudalibxt.h) come from the full 12.4 folder
		// (the local install), as in bindgen.
		args = append(args, "-idirafter", local)
	}
	out, err := exec.Command(cc, append(args, "-o", exe, cfile)...).CombinedOutput()
	if err != nil {
		t.Fatalf("compiling the C layout program against %s: %v\n%s", header, err, out)
	}
	out, err = exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("running the C layout program: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i, bad := 0, 0
	for sc.Scan() {
		v, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 10, 64)
		if err != nil || i >= len(cases) {
			t.Fatalf("bad C output line %d: %q", i, sc.Text())
		}
		if uintptr(v) != cases[i].Go {
			bad++
			t.Errorf("%s: C says %d, Go has %d", cases[i].C, v, cases[i].Go)
		}
		i++
	}
	if i != len(cases) {
		t.Fatalf("C printed %d values for %d cases", i, len(cases))
	}
	t.Logf("%d layout facts checked against %s, %d wrong", len(cases), header, bad)
}
