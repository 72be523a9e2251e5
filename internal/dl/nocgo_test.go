package dl

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBuildWithoutCgo builds with CGO_ENABLED=0: a package that calls CUDA
// fails with a message saying that cgo and a C compiler are needed, and the
// pure-Go packages still build.
func TestBuildWithoutCgo(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	if testing.Short() {
		t.Skip("builds packages with the go command")
	}
	build := func(pkgs ...string) (string, error) {
		cmd := exec.Command(gobin, append([]string{"build"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const mod = "github.com/cudago/cudago/"
	if out, err := build(mod+"fatbin", mod+"rendezvous", mod+"internal/version", mod+"pathfinder"); err != nil {
		t.Fatalf("pure-Go packages do not build with CGO_ENABLED=0: %v\n%s", err, out)
	}
	for _, pkg := range []string{"core", "internal/dl", "bindings/nvtx", "cmd/cudago"} {
		out, err := build(mod + pkg)
		if err == nil {
			t.Errorf("%s built with CGO_ENABLED=0", pkg)
			continue
		}
		if !strings.Contains(out, "set_CGO_ENABLED_1_and_install_a_C_compiler") {
			t.Errorf("%s without cgo: the error does not say that cgo is needed:\n%s", pkg, out)
		}
		if strings.Contains(out, "build constraints exclude all Go files") {
			t.Errorf("%s without cgo: still says build constraints exclude all Go files:\n%s", pkg, out)
		}
	}
}
