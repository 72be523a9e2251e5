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

	"github.com/cudago/cudago/internal/fsutil"
)

// Case is one C expression (sizeof, _Alignof, offsetof) and the Go value
// that must equal it.
type Case struct {
	C  string
	Go uintptr
}

// Headers returns NVIDIA's headers in ../shared/cuda-headers. Where they
// are missing it skips t on the GPU machine (CUDAGO_REQUIRE_GPU=1: the
// bundle carries the repository, not ../shared, and these tests run in
// CI) and fails t elsewhere.
func Headers(t testing.TB) string {
	t.Helper()
	dir, err := fsutil.FindShared("cuda-headers", "13.0/cuda.h")
	if err != nil {
		if os.Getenv("CUDAGO_REQUIRE_GPU") == "1" {
			t.Skipf("%v: shared/ is not carried to the GPU machine; this test runs in CI", err)
		}
		t.Fatal(err)
	}
	return dir
}

// Check compiles a C program that includes header (e.g. "13.0/cuda.h") and
// prints every case's C value, and fails t for each mismatch.
func Check(t *testing.T, header string, cases []Case) {
	t.Helper()
	if len(cases) == 0 {
		t.Skip("no structs in " + header)
	}
	dir := Headers(t)
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
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
	inc := filepath.Join(dir, filepath.Dir(header))
	args := []string{"-std=gnu11", "-I", inc, "-I", filepath.Join(dir, "13.0")}
	if local := localInclude(); local != "" {
		// Last: the headers the shared 13.0 folder lacks (cuda_fp16.h,
		// cuda_runtime.h, cudalibxt.h) come from the local 12.4 install.
		args = append(args, "-idirafter", local)
		// cuda_fp16.h and cuda_bf16.h declare nothing for C but include
		// <nv/target>, which Debian's 12.4 headers lack (as bindgen does).
		args = append(args, "-D__CUDA_FP16_H__", "-D__CUDA_BF16_H__")
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

// localInclude returns the include folder of the local CUDA 12.4 install
// (scripts/setup-cuda.sh), or "" when there is none.
func localInclude() string {
	if r := os.Getenv("CUDAGO_LOCAL_CUDA"); r != "" {
		return filepath.Join(r, "usr", "include")
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		c := filepath.Join(d, ".cuda", "root", "usr", "include")
		if _, err := os.Stat(filepath.Join(c, "cuda_runtime_api.h")); err == nil {
			return c
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
