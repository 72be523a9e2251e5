// Package pathfinder finds and loads NVIDIA's shared libraries at run time.
//
// cudago has no link-time dependency on CUDA: every CUDA library is opened
// with dlopen(3) when it is first needed, and its functions are looked up
// with dlsym(3). This package decides which file to open. The generated
// bindings call [Load] and then [Library.Symbol] for each function.
//
// # Libraries
//
//	Lib        sonames tried (newest major first)       override variable
//	Driver     libcuda.so.1                             CUDAGO_DRIVER_PATH
//	NVRTC      libnvrtc.so.13, libnvrtc.so.12           CUDAGO_NVRTC_PATH
//	NVJitLink  libnvJitLink.so.13, libnvJitLink.so.12   CUDAGO_NVJITLINK_PATH
//	NVFatbin   libnvfatbin.so.13, libnvfatbin.so.12     CUDAGO_NVFATBIN_PATH
//	NVVM       libnvvm.so.4, libnvvm.so                 CUDAGO_NVVM_PATH
//	CuFile     libcufile.so.0                           CUDAGO_CUFILE_PATH
//
// # Search order
//
// [Load] tries these places in order and stops at the first library that
// dlopen accepts. Within a place, the newest major version is tried first, so
// libnvrtc.so.13 wins over libnvrtc.so.12 in the same place, but a
// libnvrtc.so.12 in an earlier place wins over a libnvrtc.so.13 in a later
// one.
//
//  1. The override variable CUDAGO_<NAME>_PATH (see the table), naming either
//     the library file itself or a directory holding it (a toolkit root also
//     works: its lib64, lib, nvvm/lib64 and targets/<arch>/lib are searched).
//     Relative paths are relative to the working directory. When the
//     variable is set and nothing loads from it, Load fails with a
//     [*NotFoundError] and searches no further: the user asked for that file.
//  2. Already loaded into the process (dlopen with RTLD_NOLOAD of each
//     soname), for example by a C library linked into the program.
//  3. CUDA_HOME, then CUDA_PATH: their lib64, lib, nvvm/lib64 and
//     targets/<arch>/lib (targets/x86_64-linux/lib on amd64).
//  4. The project-local install made by scripts/setup-cuda.sh: the directory
//     named by CUDAGO_LOCAL_CUDA or, when that is unset, the first .cuda/root
//     found walking up from the working directory (go test runs in the
//     package directory, so tests find the repository's .cuda/root). Its
//     usr/lib/<multiarch>, usr/lib/<multiarch>/nvidia/current,
//     usr/lib/nvidia-cuda-toolkit/{lib64,nvvm/lib64},
//     usr/local/cuda/{lib64,nvvm/lib64,targets/<arch>/lib}, lib64, lib,
//     nvvm/lib64 and targets/<arch>/lib are searched, then, if none holds the
//     library, the whole tree up to 6 levels deep.
//  5. The system loader: dlopen of the bare soname, which honours
//     LD_LIBRARY_PATH, the ld.so cache (ldconfig) and the default directories.
//  6. /usr/local/cuda: lib64, nvvm/lib64, targets/<arch>/lib.
//  7. Debian's packages: the multiarch directory /usr/lib/x86_64-linux-gnu
//     and /usr/lib/x86_64-linux-gnu/nvidia/current ("debian multiarch"),
//     then /usr/lib/nvidia-cuda-toolkit with its lib64 and nvvm/lib64,
//     searched up to 4 levels deep ("debian nvidia-cuda-toolkit").
//
// The driver is the one exception: libcuda.so.1 must match the kernel module
// of the machine, so for [Driver] the system loader (5) is tried right after
// the already loaded check (2), before CUDA_HOME and the local install, which
// only serve machines without an installed driver (a libcuda.so.1 there lets
// the bindings load, though calls will report that no device exists).
//
// Libraries are opened with RTLD_NOW|RTLD_LOCAL and never closed.
// [Library.Found] records which place supplied the library, with the strings
// "env CUDAGO_NVRTC_PATH" (etc.), "already loaded", "CUDA_HOME", "CUDA_PATH",
// "local install", "system loader", "/usr/local/cuda", "debian multiarch"
// and "debian nvidia-cuda-toolkit".
//
// # NVRTC's builtins
//
// libnvrtc.so.N opens libnvrtc-builtins.so.N.M by soname when it first
// compiles. Outside the loader's search path (the local install, CUDA_HOME)
// that would fail, so after loading NVRTC, Load opens the builtins library of
// the same version from the directory of libnvrtc (or through the system
// loader) with RTLD_NOW|RTLD_GLOBAL; the loader then reuses it. The file is
// listed in [Library.Companions]; if it cannot be found, Load still succeeds
// and [Library.Warnings] says why compilation will fail.
//
// # Errors and diagnostics
//
// When nothing loads, [Load] returns a [*NotFoundError] whose message names
// every place tried and dlopen's error for every file that existed but would
// not load, with a hint: set CUDAGO_<NAME>_PATH or CUDA_HOME, or run
// scripts/setup-cuda.sh. Results, successes and failures alike, are cached
// for the life of the process; there is no retry. [Report] loads every
// library and returns its version or error, for `cudago doctor`.
//
// Only Linux with cgo is supported; elsewhere Load returns an error.
package pathfinder
