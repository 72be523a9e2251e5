// Package nccl binds NCCL, NVIDIA's collective communication library
// (nccl.h): all-reduce, broadcast, reduce, all-gather, reduce-scatter and
// point-to-point send and receive between GPUs, in one process or many.
// Package github.com/cudago/cudago/nccl puts it on core's Buffers and
// Streams; this is the C API as it is.
//
// Every function of nccl.h is here, generated from NCCL 2.28.3's header
// (the 13.0 folder of the shared headers) plus NCCL 2.22.3's (Debian's,
// from the local install; see funcs_gen.go): ncclAllReduce is AllReduce,
// ncclFloat32 is Float32, ncclSum is Sum, and the error comes last.
// NCCL's pnccl* profiling aliases are left out. The header documents no
// parameter directions; the pointers a call writes one value through are
// results (CommInitRankConfig returns the Comm, GetUniqueId the
// UniqueId), the others stay pointers (CommInitAll's array of Comms).
//
// A failed call is an *Error: the function, the Result code, NCCL's
// message for it (ncclGetErrorString) and, in Log, NCCL's last warning
// (ncclGetLastError), which says what went wrong in words. That text is
// the process's most recent NCCL warning, kept by NCCL in one global
// buffer that nothing clears, so it may come from an earlier failure.
// errors.Is(err, InvalidArgument) matches by code.
//
// NCCL is versioned apart from CUDA. GetVersion returns the loaded
// library's code (22203 for 2.22.3; VersionString formats it); Major,
// Minor, Patch and VersionCode are the header's, 2.28.3. A function newer
// than the loaded library (CommShrink needs 2.27.3) returns a
// *MissingFunctionError naming the version that first has it. Since the
// 2.28 header's Config is larger than older libraries', and NCCL copies
// only the size it knows from a Config's Size field, DefaultConfig works
// with them all (the fields they lack are ignored).
//
// The library (libnccl.so.2) is found and loaded by package pathfinder on
// first use; it is opened with dlopen, never linked. NCCL starts threads
// and reads its NCCL_* environment variables when it is first used (see
// package github.com/cudago/cudago/nccl, which sets NCCL_NVLS_ENABLE=0).
package nccl

//go:generate go run ../../internal/bindgen -lib nccl

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/cudago/cudago/internal/dl"
)

// Error is a failed NCCL call; errors.Is(err, InvalidUsage) matches by code.
// Log holds ncclGetLastError's text when NCCL had one.
type Error = dl.Error[Result]

// MissingFunctionError is returned by a function the loaded library lacks.
type MissingFunctionError = dl.MissingFunctionError

func check(i int, r Result) error {
	if r == Success {
		return nil
	}
	msg, _ := GetErrorString(r)
	last, _ := GetLastError(0)
	return &Error{Lib: "nccl", Func: procs.Proc(i).Name, Code: r, Message: msg, Log: last}
}

// The values nccl.h's NCCL_CONFIG_INITIALIZER gives a Config (the macros
// are not integer constants the generator can read: INT_MIN and NULL).
const (
	ConfigMagic    = 0xcafebeef    // Config.Magic
	ConfigUndefInt = math.MinInt32 // NCCL_CONFIG_UNDEF_INT: an int field left to NCCL
)

// DefaultConfig returns what NCCL_CONFIG_INITIALIZER makes: the size of
// the struct, the magic number, the header's version and every attribute
// undefined (ConfigUndefInt, nil), so that NCCL chooses it. Set the
// attributes wanted on the result.
func DefaultConfig() Config {
	return Config{
		Size:                uint64(unsafe.Sizeof(Config{})),
		Magic:               ConfigMagic,
		Version:             VersionCode,
		Blocking:            ConfigUndefInt,
		CgaClusterSize:      ConfigUndefInt,
		MinCTAs:             ConfigUndefInt,
		MaxCTAs:             ConfigUndefInt,
		SplitShare:          ConfigUndefInt,
		TrafficClass:        ConfigUndefInt,
		CollnetEnable:       ConfigUndefInt,
		CTAPolicy:           ConfigUndefInt,
		ShrinkShare:         ConfigUndefInt,
		NvlsCTAs:            ConfigUndefInt,
		NChannelsPerNetPeer: ConfigUndefInt,
		NvlinkCentricSched:  ConfigUndefInt,
	}
}

// VersionCodeOf is the NCCL_VERSION macro: the code of version x.y.z as
// GetVersion returns it. NCCL changed the encoding at 2.9.
func VersionCodeOf(x, y, z int) int {
	if x <= 2 && y <= 8 {
		return x*1000 + y*100 + z
	}
	return x*10000 + y*100 + z
}

// VersionString formats a version code: 22203 is "2.22.3", 2708 (before
// 2.9) "2.7.8".
func VersionString(code int) string {
	x, y, z := code/10000, code%10000/100, code%100
	if code < 10000 {
		x, y = code/1000, code%1000/100
	}
	return strconv.Itoa(x) + "." + strconv.Itoa(y) + "." + strconv.Itoa(z)
}
