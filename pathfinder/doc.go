// Package pathfinder finds and loads NVIDIA's shared libraries at run time,
// and finds their headers, tools and device libraries ([Find]).
//
// cudago has no link-time dependency on CUDA: every CUDA library is opened
// with dlopen(3) when it is first needed, and its functions are looked up
// with dlsym(3). This package decides which file to open. The generated
// bindings call [Load] and then [Library.Symbol] for each function.
//
// # Libraries
//
//	Lib        sonames tried (newest major first)        override variable
//	Driver     libcuda.so.1                              CUDAGO_DRIVER_PATH
//	NVML       libnvidia-ml.so.1                         CUDAGO_NVML_PATH
//	NVRTC      libnvrtc.so.13, libnvrtc.so.12            CUDAGO_NVRTC_PATH
//	NVJitLink  libnvJitLink.so.13, libnvJitLink.so.12    CUDAGO_NVJITLINK_PATH
//	NVFatbin   libnvfatbin.so.13, libnvfatbin.so.12      CUDAGO_NVFATBIN_PATH
//	NVVM       libnvvm.so.4, libnvvm.so                  CUDAGO_NVVM_PATH
//	CuFile     libcufile.so.0                            CUDAGO_CUFILE_PATH
//	CUDART     libcudart.so.13, libcudart.so.12          CUDAGO_CUDART_PATH
//	CuBLASLt   libcublasLt.so.13, libcublasLt.so.12      CUDAGO_CUBLASLT_PATH
//	CuBLAS     libcublas.so.13, libcublas.so.12          CUDAGO_CUBLAS_PATH
//	CuFFT      libcufft.so.12, libcufft.so.11            CUDAGO_CUFFT_PATH
//	CuRAND     libcurand.so.10                           CUDAGO_CURAND_PATH
//	CuSPARSE   libcusparse.so.12                         CUDAGO_CUSPARSE_PATH
//	CuSOLVER   libcusolver.so.12, libcusolver.so.11      CUDAGO_CUSOLVER_PATH
//	NVTX       libnvToolsExt.so.1                        CUDAGO_NVTOOLSEXT_PATH
//	NCCL       libnccl.so.2                              CUDAGO_NCCL_PATH
//	CUPTI      libcupti.so.13, libcupti.so.12            CUDAGO_CUPTI_PATH
//	CuDNN      libcudnn.so.9 (and its sub-libraries)     CUDAGO_CUDNN_PATH
//	CuTENSOR   libcutensor.so.2                          CUDAGO_CUTENSOR_PATH
//	CuDLA      libcudla.so.1 (Tegra only)                CUDAGO_CUDLA_PATH
//
// The math libraries number their own majors: CUDA 13 ships
// libcublas.so.13, libcufft.so.12, libcusparse.so.12 and libcusolver.so.12;
// CUDA 12 libcublas.so.12, libcufft.so.11, libcusparse.so.12 and
// libcusolver.so.11; both libcurand.so.10. CUDA 13 has no libnvToolsExt
// (NVTX 3 is header-only). NCCL is versioned apart from CUDA (2.x, one
// soname); its pip wheels, for CUDA 12 and 13 alike, put it in
// nvidia/nccl/lib, and distributions in the system's library directory
// (Debian's and NVIDIA's libnccl2 packages: /usr/lib/x86_64-linux-gnu).
//
// cuDNN, cuTENSOR and CUPTI are installed apart from the toolkit or in
// their own corner of it. cuDNN 9's wheels (nvidia-cudnn-cu12 and -cu13)
// install into nvidia/cudnn/lib, conda's cudnn into $CONDA_PREFIX/lib,
// NVIDIA's Debian packages into the multiarch directory, its archive into
// a lib directory (a toolkit's, when copied there). cuTENSOR's wheels
// (cutensor-cu12, cutensor-cu13) install into site-packages/cutensor/lib,
// its archive into lib/<CUDA major> (13, then 12, are searched below a
// toolkit root), NVIDIA's Debian package into
// /usr/lib/<multiarch>/libcutensor/<CUDA major>. CUPTI lives in a
// toolkit's extras/CUPTI/lib64 (searched below every toolkit root), in
// nvidia/cuda_cupti/lib for CUDA 12's wheel and nvidia/cu13/lib for 13's.
// cuDLA drives the deep learning accelerator of Tegra SoCs and ships only
// with CUDA for Tegra (JetPack, DRIVE OS): on any other machine (not
// arm64, or arm64 without /etc/nv_tegra_release or "nvidia,tegra" in the
// device tree) Load does not search for it and returns a
// [*NotFoundError] whose Unavailable says why, unless CUDAGO_CUDLA_PATH
// names a file to load anyway.
//
// # Search order
//
// [Load] tries these places in order and stops at the first library that
// dlopen accepts. Within a place, the newest major version is tried first, so
// libnvrtc.so.13 wins over libnvrtc.so.12 in the same place, but a
// libnvrtc.so.12 in an earlier place wins over a libnvrtc.so.13 in a later
// one. Each place comes before the next for the reason given.
//
//  1. The override variable CUDAGO_<NAME>_PATH (see the table), naming either
//     the library file itself or a directory holding it (a toolkit root also
//     works: its lib64, lib, nvvm/lib64 and targets/<arch>/lib are searched).
//     Relative paths are relative to the working directory. When the
//     variable is set and nothing loads from it, Load fails with a
//     [*NotFoundError] and searches no further: the user asked for that file.
//  2. Already loaded into the process (dlopen with RTLD_NOLOAD of each
//     soname), for example by a C library linked into the program: a second
//     copy could not be used alongside it.
//  3. CUDA_PATH, then CUDA_HOME: their lib64, lib, nvvm/lib64 and
//     targets/<arch>/lib (targets/x86_64-linux/lib on amd64). Set by the
//     user for this purpose, they name the toolkit wanted. CUDA_PATH comes
//     first, as in NVIDIA's cuda.pathfinder 1.8: it is the variable
//     NVIDIA's installers and documentation use (Check warns when the two
//     name different directories).
//  4. The project-local install made by scripts/setup-cuda.sh: the directory
//     named by CUDAGO_LOCAL_CUDA or, when that is unset, the first .cuda/root
//     found walking up from the working directory (go test runs in the
//     package directory, so tests find the repository's .cuda/root). Its
//     usr/lib/<multiarch>, usr/lib/<multiarch>/nvidia/current,
//     usr/lib/nvidia-cuda-toolkit/{lib64,nvvm/lib64},
//     usr/local/cuda/{lib64,nvvm/lib64,targets/<arch>/lib}, lib64, lib,
//     nvvm/lib64 and targets/<arch>/lib are searched, then, if none holds the
//     library, the whole tree up to 6 levels deep. It exists only where
//     someone installed it for this project, on purpose.
//  5. NVIDIA's pip wheels, where most users' CUDA libraries live today
//     (PyTorch, JAX and CuPy install them): nvidia/cu13/lib (CUDA 13's
//     wheels put every library there), then CUDA 12's own directory such as
//     nvidia/cublas/lib or nvidia/cuda_nvrtc/lib, below each site-packages
//     directory of the active Python environment: VIRTUAL_ENV's
//     lib/python3.*/site-packages, then those of the python3 on PATH
//     (site.getsitepackages and the user's site-packages; python3 is asked
//     once per process, and killed if it has not answered within 3 s). An
//     active environment's libraries are the ones matched to the Python
//     packages that may share the process, and are newer than most system
//     installs. CUDAGO_PYTHON_SITE, a list of site-packages directories
//     separated by ':', replaces VIRTUAL_ENV and python3; CUDAGO_PYTHON_SITE=off
//     turns this place off (nor is python3 run).
//  6. The active conda environment, CONDA_PREFIX: its lib64, lib,
//     nvvm/lib64 and targets/<arch>/lib, where conda's cuda-* packages put
//     the libraries. Like a virtual environment, it was activated for the
//     programs run in it; it comes after pip (as in NVIDIA's
//     cuda.pathfinder) because wheels pip-installed into it are the ones its
//     Python packages load.
//  7. The system loader: dlopen of the bare soname, which honours
//     LD_LIBRARY_PATH, the ld.so cache (ldconfig) and the default directories.
//  8. /usr/local/cuda: lib64, nvvm/lib64, targets/<arch>/lib, where NVIDIA's
//     installers put the toolkit without always registering it with ldconfig.
//  9. Debian's packages: the multiarch directory /usr/lib/x86_64-linux-gnu
//     and /usr/lib/x86_64-linux-gnu/nvidia/current ("debian multiarch"),
//     then /usr/lib/nvidia-cuda-toolkit with its lib64 and nvvm/lib64,
//     searched up to 4 levels deep ("debian nvidia-cuda-toolkit").
//
// The driver is the one exception: libcuda.so.1 must match the kernel module
// of the machine, so for [Driver] the system loader (7) is tried right after
// the already loaded check (2), before CUDA_PATH and the local install, which
// only serve machines without an installed driver (a libcuda.so.1 there lets
// the bindings load, though calls will report that no device exists). Pip
// wheels and conda (5, 6) are not searched for it: they never ship it.
// [NVML], libnvidia-ml.so.1, is part of the driver and is searched the same
// way (the local install's, Debian's libnvidia-ml1, loads anywhere and
// reports that no driver is loaded).
//
// Libraries are opened with RTLD_NOW|RTLD_LOCAL and never closed.
// [Library.Found] records which place supplied the library, with the strings
// "env CUDAGO_NVRTC_PATH" (etc.), "already loaded", "CUDA_PATH", "CUDA_HOME",
// "local install", "CUDAGO_PYTHON_SITE", "VIRTUAL_ENV",
// "python3 site-packages", "CONDA_PREFIX", "system loader",
// "/usr/local/cuda", "debian multiarch" and "debian nvidia-cuda-toolkit".
//
// # Dependencies
//
// cuBLAS needs cuBLASLt, cuSPARSE needs nvJitLink, and cuSOLVER needs
// nvJitLink, cuSPARSE, cuBLASLt and cuBLAS. Before opening such a library,
// Load opens the ones it needs from the same place: first its own
// directory, then where that place keeps each of them (CUDA 12's wheels put
// libcublas.so.12 in nvidia/cublas/lib beside nvidia/cusolver/lib). So one
// install is never mixed with another: left to itself, the loader would
// resolve the library's DT_NEEDED entries through LD_LIBRARY_PATH first,
// then its RUNPATH ($ORIGIN) and ld.so.cache, which may name another CUDA,
// and would find nothing for a pip wheel. Only the sonames the file names
// in DT_NEEDED are loaded, so the majors match (cuSOLVER 11 of CUDA 12
// needs libcublas.so.12; CUDA 13's libcusparse.so.12 needs
// libnvJitLink.so.13). A dependency's own override variable wins; one that
// is already loaded is reused (the loader would reuse it anyway), with a
// warning in [Library.Warnings] when the place held another copy; one the
// place lacks is left to the loader, with a warning naming the file it
// chose, and when the loader finds none the place's attempt says so and the
// search goes on. The dependencies loaded are listed in
// [Library.Companions], and a later Load of one of them reports the place
// it came from.
//
// cuTENSOR needs cuBLASLt (DT_NEEDED), loaded the same way. cuDNN 9 is a
// shim, libcudnn.so.9, that opens its sub-libraries by soname when first
// needed, and cuBLASLt too; for a pip wheel the loader would find none of
// them. So after libcudnn.so.9, Load opens from its directory, in this
// order, libcudnn_graph.so.9 (which the others need),
// libcudnn_engines_precompiled, _engines_runtime_compiled,
// _engines_tensor_ir (9.10 and newer), _heuristic, _ops, _cnn and _adv
// (each .so.9), then the libcublasLt.so.<N> of the CUDA major cuDNN was
// built for (cudnnGetCudartVersion) from the same place; cuDNN's own
// dlopen then finds them loaded. A sub-library that is missing or does
// not load is a warning, not an error: only the calls that need it fail
// (CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED).
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
// not load. When a file was there and the loader refused it, the first such
// file is [NotFoundError.Cause], said on the first line in words with its fix
// ([LoadFailure]): a library built for a newer glibc than the system's
// ("needs glibc 2.38 or newer (GLIBC_2.38), and this system has glibc
// 2.36", as Debian trixie's libnccl.so.2 on Debian 12), a newer libstdc++,
// another word size, a damaged file, a missing dependency. Otherwise the
// message ends with [NotFoundError.Hint], for where the program runs: in a
// clone of cudago (scripts/setup-cuda.sh at or above the working directory,
// or beside CUDAGO_LOCAL_CUDA), that script by its path; elsewhere, as in a
// module that imports cudago, CUDA_PATH, NVIDIA's pip wheel (pip install
// nvidia-cuda-nvrtc for CUDA 13, nvidia-cuda-nvrtc-cu12 for CUDA 12, and so
// on), conda, the .cuda/env.sh of a clone, or CUDAGO_<NAME>_PATH.
// [NotFoundError.Fix] is the one to show. Results, successes and failures alike, are cached
// for the life of the process; there is no retry. [Report] loads every
// library and returns its version or error, for `cudago doctor`. Asking a
// library its version ([Library.Version]) never needs a GPU.
//
// # Guard rails
//
// [Library.CUDA] tells the CUDA release a library belongs to, where it
// can tell, and [Check] looks at every library the process has loaded
// through Load and warns, without failing anything, about a library newer
// than the driver supports (NVRTC 13 with a driver for CUDA 12.x: the code
// it makes will not load; NVRTC 12.8 with a 12.4 driver: its PTX is too
// new to be compiled by the driver) and about libraries of CUDA 12 and 13
// mixed in one process (libcublas.so.12 with libcudart.so.13).
// `cudago doctor` prints its warnings; core logs them (core.SetLogger).
//
// # Headers, tools and device libraries
//
// [Find] finds what is not loaded but used by path: the toolkit's include
// directory ([CUDAHeaders]: cuda_runtime.h and cuda.h), cuDNN's
// ([CuDNNHeaders]: cudnn.h) and NCCL's ([NCCLHeaders]: nccl.h); the tools
// [NVCC], [NVDisasm] and [CuObjDump]; the device runtime libcudadevrt.a
// ([Cudadevrt]) that relocatable device code links with, and libdevice
// ([Libdevice]: nvvm/libdevice/libdevice.10.bc) for libNVVM. It searches
// CUDAGO_<NAME>_PATH, CUDA_PATH, CUDA_HOME, the local install, the pip
// wheels, CONDA_PREFIX, PATH (for tools), /usr/local/cuda and the system's
// directories, in that order, each in its own layout (see Find), and
// returns a [*Located] or an [*ArtifactNotFoundError] that lists the
// places and how to install it. Headers report the version they declare;
// [ToolVersion] asks a tool for its own. [ReportFiles] finds them all for
// `cudago doctor`.
//
// Only Linux with cgo is supported; elsewhere Load returns an error.
package pathfinder
