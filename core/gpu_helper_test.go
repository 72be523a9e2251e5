package core

import (
	"testing"

	"github.com/cudago/cudago/internal/testing/testenv"
)

// requireGPU skips a GPU test without a usable GPU, and fails it instead
// when CUDAGO_REQUIRE_GPU=1 (see testenv.RequireGPU). It returns device 0.
func requireGPU(t testing.TB) *Device {
	t.Helper()
	testenv.RequireGPU(t)
	d, err := GetDevice(0)
	if err != nil {
		t.Fatalf("GetDevice(0): %v", err)
	}
	return d
}
