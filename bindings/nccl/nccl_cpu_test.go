package nccl

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudago/cudago/internal/testing/bindtest"
	"github.com/cudago/cudago/internal/testing/layoutcheck"
	"github.com/cudago/cudago/internal/testing/newglibc"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/pathfinder"
)

// Debian's libnccl2 needs glibc 2.38: on CI's Debian 12 the tests run
// under the glibc setup-cuda.sh unpacks (see internal/testing/newglibc).
func TestMain(m *testing.M) {
	os.Exit(newglibc.Main(m, func() error { _, err := pathfinder.Load(pathfinder.NCCL); return err }))
}

// TestCount checks that every function of nccl.h is bound: 40 (the 2.28.3
// header's ncclX; 2.22.3's are a subset), without the pncclX aliases.
func TestCount(t *testing.T) {
	if procs.Len() != 40 || len(Functions) != 40 {
		t.Errorf("%d entry points and %d names, want 40 (nccl.h)", procs.Len(), len(Functions))
	}
	for c := range Functions {
		if strings.HasPrefix(c, "pnccl") {
			t.Errorf("%s is bound", c)
		}
	}
	if NumResults != 8 || NumTypes != 12 || NumOps != 5 {
		t.Errorf("NumResults %d, NumTypes %d, NumOps %d; want 8, 12, 5", NumResults, NumTypes, NumOps)
	}
}

// localNCCL returns the version of Debian's libnccl2 that setup-cuda.sh
// installed ("2.22.3" from the stamp's "libnccl2 2.22.3-1-1 ..."), or ""
// when the library in use is not the local install's.
func localNCCL(t *testing.T, lib *pathfinder.Library) string {
	t.Helper()
	if lib.Found != "local install" {
		return ""
	}
	root := testenv.LocalCUDA(t)
	f, err := os.Open(filepath.Join(filepath.Dir(root), ".stamp"))
	if err != nil {
		t.Fatalf("the local install has no stamp: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == "libnccl2" {
			v, _, _ := strings.Cut(fields[1], "-") // 2.22.3-1-1: upstream 2.22.3, release 1, Debian 1
			return v
		}
	}
	t.Fatal("the local install's stamp lists no libnccl2")
	return ""
}

// TestVersion asks the loaded NCCL its version code: the same as
// pathfinder reads, and for the local install the .deb's version.
func TestVersion(t *testing.T) {
	lib, have := bindtest.Load(t, pathfinder.NCCL)
	code, err := GetVersion()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: version code %d (%s)", lib.Path, code, VersionString(int(code)))
	if VersionString(int(code)) != have {
		t.Errorf("GetVersion = %d (%s), pathfinder says %s", code, VersionString(int(code)), have)
	}
	if deb := localNCCL(t, lib); deb != "" {
		var x, y, z int
		if n, _ := fmt.Sscanf(deb, "%d.%d.%d", &x, &y, &z); n != 3 || int(code) != VersionCodeOf(x, y, z) {
			t.Errorf("GetVersion = %d, the installed libnccl2 is %s", code, deb)
		}
	}
	if code < 22203 {
		t.Errorf("GetVersion = %d: older than the oldest header read (2.22.3)", code)
	}
}

func TestVersionCodes(t *testing.T) {
	for _, c := range []struct {
		x, y, z, code int
		s             string
	}{{2, 22, 3, 22203, "2.22.3"}, {2, 28, 3, 22803, "2.28.3"}, {2, 9, 6, 20906, "2.9.6"}, {2, 8, 4, 2804, "2.8.4"}, {2, 7, 8, 2708, "2.7.8"}} {
		if got := VersionCodeOf(c.x, c.y, c.z); got != c.code {
			t.Errorf("VersionCodeOf(%d, %d, %d) = %d, want %d", c.x, c.y, c.z, got, c.code)
		}
		if got := VersionString(c.code); got != c.s {
			t.Errorf("VersionString(%d) = %q, want %s", c.code, got, c.s)
		}
	}
	if VersionCodeOf(Major, Minor, Patch) != VersionCode {
		t.Errorf("the header's NCCL_VERSION_CODE %d is not NCCL_VERSION(%d, %d, %d)", VersionCode, Major, Minor, Patch)
	}
}

// TestEntryPoints resolves every function in the loaded NCCL: those of
// its version's header are found, newer ones (2.22.3 lacks
// ncclCommInitRankScalable, 2.23.4; ncclResetDebugInit, 2.24.3;
// ncclCommShrink and the window registration, 2.27.3; AlltoAll, Gather
// and Scatter, 2.28.3) give a *MissingFunctionError naming their version.
func TestEntryPoints(t *testing.T) {
	n := bindtest.Resolves(t, pathfinder.NCCL, procs)
	if n < 32 {
		t.Errorf("only %d of 40 functions found (2.22.3 has 32)", n)
	}
	_, have := bindtest.Load(t, pathfinder.NCCL)
	if have == "2.22.3" {
		var missing *MissingFunctionError
		_, err := CommShrink(0, nil, 0, nil, ShrinkDefault)
		if !errors.As(err, &missing) || missing.Need != "2.27.3" || missing.Have != "2.22.3" || missing.Func != "ncclCommShrink" {
			t.Errorf("CommShrink on 2.22.3 = %v, want a *MissingFunctionError needing 2.27.3", err)
		}
		if err := AlltoAll(nil, nil, 0, Float32, 0, 0); !errors.As(err, &missing) || missing.Need != "2.28.3" {
			t.Errorf("AlltoAll on 2.22.3 = %v, want a *MissingFunctionError needing 2.28.3", err)
		}
	}
}

// TestErrorStrings checks NCCL's message for every result code (the same
// text in 2.22.3 and 2.28.3).
func TestErrorStrings(t *testing.T) {
	bindtest.Load(t, pathfinder.NCCL)
	want := map[Result]string{
		Success:            "no error",
		UnhandledCudaError: "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
		SystemError:        "unhandled system error (run with NCCL_DEBUG=INFO for details)",
		InternalError:      "internal error - please report this issue to the NCCL developers",
		InvalidArgument:    "invalid argument (run with NCCL_DEBUG=WARN for details)",
		InvalidUsage:       "invalid usage (run with NCCL_DEBUG=WARN for details)",
		RemoteError:        "remote process exited or there was a network error",
		InProgress:         "NCCL operation in progress",
		NumResults:         "unknown result code",
	}
	for r, w := range want {
		got, err := GetErrorString(r)
		if err != nil || got != w {
			t.Errorf("GetErrorString(%v) = %q, %v; want %q", r, got, err, w)
		}
		if r != Success && !strings.HasPrefix(r.Error(), "nccl") {
			t.Errorf("%d.Error() = %q", r, r.Error())
		}
	}
}

// TestErrorValue makes NCCL fail without a GPU (ncclGroupEnd outside a
// group) and checks the error: the code, NCCL's message and its last
// warning, matched by errors.Is and errors.As.
func TestErrorValue(t *testing.T) {
	bindtest.Load(t, pathfinder.NCCL)
	err := GroupEnd()
	if !errors.Is(err, InvalidUsage) {
		t.Fatalf("GroupEnd outside a group = %v, want ncclInvalidUsage", err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is not an *Error", err)
	}
	if e.Func != "ncclGroupEnd" || e.Message != "invalid usage (run with NCCL_DEBUG=WARN for details)" ||
		e.Log != "ncclGroupEnd: not in a group call." {
		t.Errorf("error %+v", *e)
	}
	const msg = "nccl: ncclGroupEnd: ncclInvalidUsage (invalid usage (run with NCCL_DEBUG=WARN for details))\nncclGroupEnd: not in a group call."
	if err.Error() != msg {
		t.Errorf("message %q, want %q", err.Error(), msg)
	}
	if errors.Is(err, InvalidArgument) {
		t.Error("errors.Is matches another code")
	}
}

// TestUniqueID: ncclGetUniqueId needs no GPU (it starts NCCL's bootstrap
// listener on a network interface); ids differ and hold more than zeros.
func TestUniqueID(t *testing.T) {
	bindtest.Load(t, pathfinder.NCCL)
	a, err := GetUniqueId()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GetUniqueId()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == (UniqueId{}) || unsafe.Sizeof(a) != UniqueIdBytes {
		t.Errorf("ids %x and %x (size %d)", a.Internal[:24], b.Internal[:24], unsafe.Sizeof(a))
	}
}

// TestDefaultConfig compares DefaultConfig with NCCL_CONFIG_INITIALIZER as
// the C compiler evaluates it from the 2.28.3 header (a negative int
// prints as its size_t conversion, as uintptr(int64(x)) does in Go).
func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	field := func(name string) string {
		return "((ncclConfig_t)NCCL_CONFIG_INITIALIZER)." + name
	}
	i := func(v int32) uintptr { return uintptr(int64(v)) }
	cases := []layoutcheck.Case{
		{C: field("size"), Go: uintptr(c.Size)},
		{C: field("magic"), Go: uintptr(c.Magic)},
		{C: field("version"), Go: uintptr(c.Version)},
		{C: field("blocking"), Go: i(c.Blocking)},
		{C: field("cgaClusterSize"), Go: i(c.CgaClusterSize)},
		{C: field("minCTAs"), Go: i(c.MinCTAs)},
		{C: field("maxCTAs"), Go: i(c.MaxCTAs)},
		{C: field("netName"), Go: uintptr(c.NetName)},
		{C: field("splitShare"), Go: i(c.SplitShare)},
		{C: field("trafficClass"), Go: i(c.TrafficClass)},
		{C: field("commName"), Go: uintptr(c.CommName)},
		{C: field("collnetEnable"), Go: i(c.CollnetEnable)},
		{C: field("CTAPolicy"), Go: i(c.CTAPolicy)},
		{C: field("shrinkShare"), Go: i(c.ShrinkShare)},
		{C: field("nvlsCTAs"), Go: i(c.NvlsCTAs)},
		{C: field("nChannelsPerNetPeer"), Go: i(c.NChannelsPerNetPeer)},
		{C: field("nvlinkCentricSched"), Go: i(c.NvlinkCentricSched)},
		{C: "NCCL_CONFIG_UNDEF_INT", Go: i(ConfigUndefInt)},
		{C: "NCCL_CONFIG_UNDEF_PTR", Go: 0},
		{C: "sizeof(ncclConfig_t)", Go: unsafe.Sizeof(c)},
		{C: "NCCL_SPLIT_NOCOLOR", Go: i(SplitNocolor)},
	}
	layoutcheck.Check(t, "13.0/nccl.h", cases)
}
