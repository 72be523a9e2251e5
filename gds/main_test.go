package gds

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain gives cuFile the configuration the tests need, before anything
// opens its driver (it reads the configuration then): compatibility mode
// allowed, so that the tests run without the nvidia-fs kernel module, and
// its log in a temporary folder rather than cufile.log in the package's.
// A cufile.json, rather than CUFILE_ALLOW_COMPAT_MODE alone, because
// cuFile's stream API needs one. The log is printed when a test failed.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gds-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg := filepath.Join(dir, "cufile.json")
	json := fmt.Sprintf(`{
	// written by gds's TestMain
	"logging": { "dir": %q, "level": "ERROR" },
	"properties": { "allow_compat_mode": true }
}
`, dir)
	if err := os.WriteFile(cfg, []byte(json), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("CUFILE_ENV_PATH_JSON", cfg)
	code := m.Run()
	if code != 0 {
		if b, err := os.ReadFile(filepath.Join(dir, "cufile.log")); err == nil && len(b) > 0 {
			fmt.Fprintf(os.Stderr, "cufile.log:\n%s", b)
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
