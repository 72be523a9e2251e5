#!/usr/bin/env bash
# setup-cuda.sh — install the CUDA 12.4 compiler and math libraries and tools into <repo>/.cuda
#
# Everything comes from Debian trixie's non-free packages (NCCL from contrib), fetched with
# `apt-get download` through a private apt configuration (.cuda/apt/) and
# unpacked with `dpkg -x` into .cuda/root. Nothing on the system is installed
# or changed: the system's apt sources, lists and dpkg database stay untouched.
#
# Result:
#   .cuda/root/usr/lib/x86_64-linux-gnu/   libnvrtc.so.12, libnvrtc-builtins.so.12.4,
#                                          libnvJitLink.so.12, libnvfatbin.so.12,
#                                          libnvvm.so.4, libcufile.so.0, libcudart.so.12,
#                                          libcublas.so.12, libcublasLt.so.12, libcurand.so.10,
#                                          libcufft.so.11, libcusparse.so.12, libcusolver.so.11,
#                                          libnvToolsExt.so.1, libnccl.so.2 (NCCL 2.22.3),
#                                          libcuda.so.1 (-> nvidia/current/libcuda.so.1),
#                                          libnvidia-ml.so.1 (-> nvidia/current/libnvidia-ml.so.1),
#                                          libcudart_static.a, libcudadevrt.a, stubs/
#   .cuda/root/usr/include/                CUDA headers (cuda.h, cuda_runtime.h, nvrtc.h, ...), nccl.h, nvml.h
#   .cuda/root/usr/lib/nvidia-cuda-toolkit/  real nvcc, cicc, libdevice/libdevice.10.bc
#   .cuda/glibc/                           Debian trixie's glibc (libc6), apart from root/: its
#                                          libnccl2 needs glibc 2.38, which Debian 12 lacks; the
#                                          tests that call NCCL re-run under its loader there
#                                          (internal/testing/testenv.NCCLMain). Nothing else uses it.
#   .cuda/bin/                             nvcc wrapper + links to ptxas, fatbinary, nvlink,
#                                          cuobjdump, nvdisasm, cudafe++, bin2c, ...
#   .cuda/env.sh                           `source` it: PATH += .cuda/bin,
#                                          CUDAGO_LOCAL_CUDA=<abs>/.cuda/root (no LD_LIBRARY_PATH)
#   .cuda/debs/                            the downloaded .debs, only with --keep-debs (then a
#                                          re-extraction is offline); by default they are
#                                          deleted once unpacked
#   .cuda/.stamp                           recipe + package versions; a matching stamp = no-op
#
# Costs (measured): a fresh install downloads 1.8 GiB (22 packages, and 10 MiB of Debian's
# package lists), needs 3.7 GiB free while it runs (the .debs and what they unpack) and leaves
# 1.9 GiB in .cuda (3.6 GiB with --keep-debs); it says how much it fetched and left when it ends.
#
# Packages added to the lists below after an install are unpacked on top of it, without
# re-extracting the rest. A .cuda that is a symbolic link (a git worktree sharing another
# checkout's install) is written through, and env.sh names its real path.
#
# Usage: scripts/setup-cuda.sh [--force] [--verify] [--keep-debs]
#   --force      re-extract .cuda/root (from the kept .debs; downloads what is not kept)
#   --verify     after installing, compile a test kernel with nvcc in every mode and check
#                the libraries (a few seconds)
#   --keep-debs  keep the downloaded .debs in .cuda/debs (1.8 GiB), so that --force or a
#                package added to the lists below needs no download; CUDAGO_KEEP_DEBS=1 too
#
# Works from any cwd, without stdin (CI=true), and offline once installed (or with --keep-debs).
set -euo pipefail

# Bump RECIPE whenever the layout produced below changes: a new value forces re-extraction.
RECIPE=1
SUITE=trixie
# The Debian mirror: CUDAGO_DEBIAN_MIRROR, else the first Debian archive (a URI
# ending in /debian) in this machine's own apt sources, deb822 (.sources) or
# one-line (sources.list) format. No host is written here.
apt_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { sub(/\/$/, "", $i); print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    # deb [options] URI suite components...
    awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } if ($i ~ /\/debian\/?$/) { sub(/\/$/, "", $i); print $i; exit } }' "$f"
  done
}
MIRROR=${CUDAGO_DEBIAN_MIRROR:-$(apt_mirror | head -n 1)}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# Packages unpacked whole with dpkg -x.
PKGS=(
  libnvrtc12             # libnvrtc.so.12
  libnvrtc-builtins12.4  # libnvrtc-builtins.so.12.4 (dlopened by NVRTC)
  libnvjitlink12         # libnvJitLink.so.12
  libnvfatbin12          # libnvfatbin.so.12
  libnvvm4               # libnvvm.so.4
  libcuda1               # libcuda.so.1 (driver userland; no GPU needed just to load it)
  libnvidia-ml1          # libnvidia-ml.so.1 (NVML, driver 550 like libcuda1; nvmlInit fails without a GPU)
  libnvidia-ml-dev       # nvml.h (CUDA 12.4's NVML header, 0.6 MB), which bindings/nvml is generated from
  libcufile0             # libcufile.so.0
  libcudart12            # libcudart.so.12
  # The math libraries: 606 MB of .debs, 1.3 GB unpacked (cuBLASLt, cuFFT and cuSPARSE are most of it).
  libcublas12            # libcublas.so.12 (needs libcublasLt.so.12)
  libcublaslt12          # libcublasLt.so.12
  libcurand10            # libcurand.so.10
  libcufft11             # libcufft.so.11
  libcusparse12          # libcusparse.so.12 (needs libnvJitLink.so.12)
  libcusolver11          # libcusolver.so.11 (needs cuBLAS, cuBLASLt, cuSPARSE, nvJitLink)
  libnvtoolsext1         # libnvToolsExt.so.1 (NVTX)
  libnccl2               # libnccl.so.2 (NCCL 2.22.3, contrib; 235 MB unpacked)
  nvidia-cuda-toolkit    # nvcc, cicc, ptxas, fatbinary, nvlink, cuobjdump, cudafe++, bin2c, libdevice
)
# nvidia-cuda-dev is ~930 MB (2.6 GB unpacked, mostly static cuBLAS/cuFFT/NPP archives);
# only the headers, cudart's static libraries, the stubs and the .so dev links are taken from it.
DEV_PKG=nvidia-cuda-dev
# libnccl-dev: nccl.h, nccl_net.h and the libnccl.so link, not its 245 MB static library.
NCCL_DEV_PKG=libnccl-dev
# trixie's glibc, unpacked into .cuda/glibc (see above), not into root/.
GLIBC_PKG=libc6
ALL_PKGS=("${PKGS[@]}" "$NCCL_DEV_PKG" "$GLIBC_PKG" "$DEV_PKG")
LIBDIR=usr/lib/x86_64-linux-gnu
NCCL_DEV_MEMBERS=(
  './usr/include/*'
  "./$LIBDIR/libnccl.so"
  "./$LIBDIR/pkgconfig/*"
  "./usr/share/doc/$NCCL_DEV_PKG/*"
)
DEV_MEMBERS=(
  './usr/include/*'
  "./$LIBDIR/stubs/*"
  "./$LIBDIR/pkgconfig/*"
  "./$LIBDIR/libcudart_static.a"
  "./$LIBDIR/libcudadevrt.a"
  "./$LIBDIR/libculibos.a"
  "./$LIBDIR/libcudart.so"
  "./$LIBDIR/libnvrtc.so"
  "./$LIBDIR/libnvrtc-builtins.so"
  "./$LIBDIR/libnvJitLink.so"
  "./$LIBDIR/libnvfatbin.so"
  "./$LIBDIR/libnvvm.so"
  "./usr/share/doc/$DEV_PKG/*"
)
TOOLS=(ptxas fatbinary nvlink cuobjdump nvdisasm cudafe++ bin2c cu++filt nvprune)

log() { printf 'setup-cuda: %s\n' "$*" >&2; }
die() { printf 'setup-cuda: ERROR: %s\n' "$*" >&2; exit 1; }
# human prints a byte count in KiB, MiB or GiB, the units of du -h.
human() {
  awk -v b="$1" 'BEGIN { if (b >= 2^30) printf "%.1f GiB", b / 2^30; else if (b >= 2^20) printf "%.0f MiB", b / 2^20; else printf "%.0f KiB", b / 2^10 }'
}
# The bytes fetched this run: the .debs and apt's package lists.
FETCHED=0
FETCHED_DEBS=0
LISTS_BYTES=0
# costs ends an install: what was fetched, what .cuda now holds, and the .debs dropped
# unless they are to be kept.
costs() {
  local kept=""
  if ((KEEP_DEBS)); then
    kept=" (--keep-debs: $(human "$(du -sb "$DEBS" | cut -f1)") of .debs kept in $DEBS)"
  else
    rm -rf "$DEBS"
  fi
  if ((FETCHED)); then
    log "downloaded $(human "$FETCHED") ($FETCHED_DEBS package(s) $(human "$((FETCHED - LISTS_BYTES))"), package lists $(human "$LISTS_BYTES"))"
  else
    log "downloaded nothing"
  fi
  log "$CUDA_DIR now uses $(human "$(du -sb "$CUDA_DIR" | cut -f1)") on disk$kept"
}

FORCE=0
VERIFY=0
KEEP_DEBS=0
[[ "${CUDAGO_KEEP_DEBS:-0}" == 1 ]] && KEEP_DEBS=1
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    --verify) VERIFY=1 ;;
    --keep-debs) KEEP_DEBS=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (try --help)" ;;
  esac
done

SCRIPT_DIR=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
REPO=$(cd "$SCRIPT_DIR/.." && pwd -P)
CUDA_DIR="$REPO/.cuda"
# A link to a shared install: work in (and write env.sh for) its real path.
if [[ -L "$CUDA_DIR" ]]; then
  CUDA_DIR=$(cd "$CUDA_DIR" && pwd -P) || die "$REPO/.cuda is a link to nothing"
fi
ROOT="$CUDA_DIR/root"
DEBS="$CUDA_DIR/debs"
STAMP="$CUDA_DIR/.stamp"
NVCC_REAL="$ROOT/usr/lib/nvidia-cuda-toolkit/bin/nvcc"
case "$CUDA_DIR" in *"'"*|*$'\n'*) die "repository path must not contain quotes or newlines: $REPO" ;; esac

STAMP_HEAD="recipe=$RECIPE suite=$SUITE packages=${ALL_PKGS[*]}"

# env.sh holds absolute paths: rewrite it whenever it differs (e.g. the checkout moved).
write_env() {
  local want
  want="# Generated by scripts/setup-cuda.sh; source it (POSIX sh). Do not edit.
# Puts the CUDA 12.4 tools (nvcc, ptxas, fatbinary, nvlink, cuobjdump, ...) on PATH and
# points cudago at the local CUDA libraries. LD_LIBRARY_PATH is deliberately not set.
export CUDAGO_LOCAL_CUDA='$ROOT'
case \":\$PATH:\" in
  *':$CUDA_DIR/bin:'*) ;;
  *) export PATH='$CUDA_DIR/bin':\"\$PATH\" ;;
esac"
  if [[ ! -f "$CUDA_DIR/env.sh" ]] || [[ "$(cat "$CUDA_DIR/env.sh")" != "$want" ]]; then
    printf '%s\n' "$want" >"$CUDA_DIR/env.sh.tmp"
    mv -f "$CUDA_DIR/env.sh.tmp" "$CUDA_DIR/env.sh"
    log "wrote $CUDA_DIR/env.sh"
  fi
}

installed_ok() {
  [[ $FORCE == 0 && -f "$STAMP" && -x "$NVCC_REAL" && -x "$CUDA_DIR/bin/nvcc" ]] || return 1
  local head
  IFS= read -r head <"$STAMP" || return 1
  [[ "$head" == "$STAMP_HEAD" ]]
}

verify() {
  log "verifying the installation"
  local t lib
  t=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$t'" RETURN
  # A separate bash process, so that -e holds for every step.
  cat >"$t/check.sh" <<'EOF'
set -euo pipefail
. "$1/env.sh"
cd "$2"
cat >x.cu <<'CU'
#include <cstdio>
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
  float *x = nullptr;
  cudaError_t e = cudaMalloc(&x, 1024 * sizeof(float));
  printf("cudaMalloc: %s\n", cudaGetErrorString(e));
  if (e == cudaSuccess) {
    saxpy<<<4, 256>>>(1024, 2.0f, x, x);
    cudaDeviceSynchronize();
  }
  return 0;
}
CU
[[ "$(command -v nvcc)" == "$1/bin/nvcc" ]] || { echo "nvcc on PATH is $(command -v nvcc)"; exit 1; }
nvcc --version | tail -n 2
nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
     -gencode arch=compute_90,code=compute_90 -fatbin x.cu -o x.fatbin
nvcc -cubin -arch sm_90 x.cu -o x.cubin
nvcc -ptx x.cu -o x.ptx
nvcc -o a.out x.cu
./a.out   # statically linked cudart; without a GPU it reports a driver error and exits 0
cuobjdump -lelf -lptx x.fatbin
mkdir ex
(cd ex && cuobjdump -xelf all -xptx all ../x.fatbin >/dev/null && ls)
fatbinary --help >/dev/null
ptxas --version | tail -n 1
EOF
  bash "$t/check.sh" "$CUDA_DIR" "$t" || { rm -rf "$t"; die "verification failed (see output above)"; }
  for lib in libnvrtc.so.12 libnvrtc-builtins.so.12.4 libnvJitLink.so.12 libnvfatbin.so.12 \
             libnvvm.so.4 libcuda.so.1 libcufile.so.0 libcudart.so.12 libcudart_static.a \
             libcublas.so.12 libcublasLt.so.12 libcurand.so.10 libcufft.so.11 libcusparse.so.12 \
             libcusolver.so.11 libnvToolsExt.so.1 libnccl.so.2 libnvidia-ml.so.1; do
    [[ -e "$ROOT/$LIBDIR/$lib" ]] || die "verification failed: missing $ROOT/$LIBDIR/$lib"
  done
  [[ -e "$ROOT/usr/include/nccl.h" ]] || die "verification failed: missing $ROOT/usr/include/nccl.h"
  [[ -e "$ROOT/usr/include/nvml.h" ]] || die "verification failed: missing $ROOT/usr/include/nvml.h"
  "$CUDA_DIR/glibc/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --version >/dev/null ||
    die "verification failed: $CUDA_DIR/glibc's loader does not run"
  log "verify OK"
}

# added_pkgs prints the listed packages an install lacks, when it is of this recipe and
# suite and every package it has is still listed (so they can be unpacked on top of it);
# it fails otherwise (no install, --force, another recipe, a package dropped).
added_pkgs() {
  [[ $FORCE == 0 && -f "$STAMP" && -x "$NVCC_REAL" && -x "$CUDA_DIR/bin/nvcc" ]] || return 1
  local head p q found
  local -a have
  IFS= read -r head <"$STAMP" || return 1
  [[ "$head" == "recipe=$RECIPE suite=$SUITE packages="* ]] || return 1
  read -r -a have <<<"${head#*packages=}"
  for p in "${have[@]}"; do
    found=0
    for q in "${ALL_PKGS[@]}"; do [[ "$p" == "$q" ]] && found=1; done
    ((found)) || return 1
  done
  for q in "${ALL_PKGS[@]}"; do
    found=0
    for p in "${have[@]}"; do [[ "$p" == "$q" ]] && found=1; done
    ((found)) || printf '%s\n' "$q"
  done
}

# old_debs points at .debs that an earlier setup kept (it used to keep them all) and that
# nothing needs, without deleting them: the install may be another checkout's too.
old_debs() {
  if ((!KEEP_DEBS)) && compgen -G "$DEBS/*.deb" >/dev/null; then
    log "$DEBS holds $(human "$(du -sb "$DEBS" | cut -f1)") of .debs kept by an earlier setup; nothing needs them: rm -rf '$DEBS' (or keep them with --keep-debs)"
  fi
}

# ---------------------------------------------------------------- fast path
if installed_ok; then
  write_env
  log "CUDA 12.4 already installed in $CUDA_DIR (stamp matches); nothing to do"
  old_debs
  [[ $VERIFY == 1 ]] && verify
  exit 0
fi

# ---------------------------------------------------------------- preconditions
[[ "$(uname -m)" == x86_64 ]] || die "only x86_64 (amd64) hosts are supported, this is $(uname -m)"
for tool in apt-get dpkg dpkg-deb tar; do
  command -v "$tool" >/dev/null || die "'$tool' not found: this script needs a Debian-like system"
done

mkdir -p "$CUDA_DIR" "$DEBS"
# Serialise concurrent runs (e.g. parallel CI jobs in one checkout).
if command -v flock >/dev/null; then
  exec 9>"$CUDA_DIR/.lock"
  flock 9
  if installed_ok; then   # another run finished meanwhile
    write_env
    log "CUDA 12.4 already installed in $CUDA_DIR (stamp matches); nothing to do"
    old_debs
    [[ $VERIFY == 1 ]] && verify
    exit 0
  fi
fi

START=$SECONDS
ADD=()
if ADDED=$(added_pkgs) && [[ -n "$ADDED" ]]; then
  mapfile -t ADD <<<"$ADDED"
  log "adding ${ADD[*]} to the CUDA 12.4 install in $CUDA_DIR"
else
  log "installing CUDA 12.4 (Debian $SUITE non-free) into $CUDA_DIR"
fi

# The cached .deb of a package, if any (newest version wins if several).
cached_deb() {
  local f best=""
  for f in "$DEBS/$1"_*_amd64.deb; do
    [[ -f "$f" ]] || continue
    if [[ -z "$best" ]] || dpkg --compare-versions "$(dpkg-deb -f "$f" Version)" gt "$(dpkg-deb -f "$best" Version)"; then
      best=$f
    fi
  done
  printf '%s' "$best"
}

# ---------------------------------------------------------------- download (only what is missing)
MISSING=()
WANTED=("${ALL_PKGS[@]}")
((${#ADD[@]})) && WANTED=("${ADD[@]}")
for p in "${WANTED[@]}"; do
  [[ -n "$(cached_deb "$p")" ]] || MISSING+=("$p")
done

if ((${#MISSING[@]})); then
  [[ -r "$KEYRING" ]] || die "$KEYRING not found: install the debian-archive-keyring package"
  [[ -n "$MIRROR" ]] || die "no Debian mirror: none of this machine's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/*.sources or *.list) names a .../debian archive; set CUDAGO_DEBIAN_MIRROR to one"
  APT="$CUDA_DIR/apt"
  mkdir -p "$APT/apt.conf.d" "$APT/preferences.d" "$APT/sources.list.d" "$APT/trusted.gpg.d" \
           "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/state" "$APT/log"
  : >"$APT/state/status"
  echo "deb [arch=amd64 signed-by=$KEYRING] $MIRROR $SUITE main contrib non-free non-free-firmware" \
    >"$APT/sources.list"
  # A self-contained apt configuration: read via APT_CONFIG before anything else, it also
  # redirects the config-parts directory, so the system's /etc/apt (sources, apt.conf.d,
  # preferences, keys), lists, cache and dpkg status are neither read nor written.
  cat >"$APT/apt.conf" <<EOF
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
Dir::Etc::main "$APT/apt.conf";
Dir::Etc::parts "$APT/apt.conf.d";
Dir::Etc::sourcelist "$APT/sources.list";
Dir::Etc::sourceparts "$APT/sources.list.d";
Dir::Etc::preferences "$APT/preferences";
Dir::Etc::preferencesparts "$APT/preferences.d";
Dir::Etc::trusted "$APT/trusted.gpg";
Dir::Etc::trustedparts "$APT/trusted.gpg.d";
Dir::State "$APT/state";
Dir::State::lists "$APT/lists";
Dir::State::status "$APT/state/status";
Dir::Cache "$APT/cache";
Dir::Cache::archives "$APT/cache/archives";
Dir::Log "$APT/log";
Acquire::Languages "none";
Acquire::Retries "3";
APT::Sandbox::User "root";
Debug::NoLocking "true";
EOF
  export APT_CONFIG="$APT/apt.conf"
  APT_OPTS=(-q -o "Dir::Etc::sourcelist=$APT/sources.list" -o "Dir::Etc::sourceparts=$APT/sources.list.d"
            -o "Dir::State::lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o APT::Architecture=amd64)

  log "apt-get update ($SUITE, private lists in $APT/lists)"
  # --error-on=any: a signature that does not verify with $KEYRING, or any failed fetch, is fatal.
  if ! apt-get "${APT_OPTS[@]}" --error-on=any update >"$APT/log/update.log" 2>&1; then
    cat "$APT/log/update.log" >&2
    die "apt-get update of Debian $SUITE failed (network? keyring $KEYRING?); log: $APT/log/update.log"
  fi
  # What apt fetched is compressed; the lists are stored unpacked: its own count is the download.
  LISTS_BYTES=$(awk '/^Fetched / { n = $2; u = $3; m = (u ~ /^k/) ? 1e3 : (u ~ /^M/) ? 1e6 : (u ~ /^G/) ? 1e9 : 1; gsub(/,/, "", n); print int(n * m) }' "$APT/log/update.log" | tail -n 1)
  LISTS_BYTES=${LISTS_BYTES:-0}
  for p in "${MISSING[@]}"; do
    apt-cache "${APT_OPTS[@]}" show "$p" >/dev/null 2>&1 || die "package '$p' not found in Debian $SUITE"
  done

  log "downloading ${#MISSING[@]} package(s): ${MISSING[*]}"
  INCOMING="$DEBS/.incoming"
  rm -rf "$INCOMING"
  mkdir -p "$INCOMING"
  if ! (cd "$INCOMING" && apt-get "${APT_OPTS[@]}" download "${MISSING[@]}" </dev/null >&2); then
    rm -rf "$INCOMING"
    die "apt-get download failed for: ${MISSING[*]} (network down? package removed from $SUITE?)"
  fi
  for p in "${MISSING[@]}"; do
    f=$(compgen -G "$INCOMING/${p}_*_amd64.deb" | head -n 1 || true)
    [[ -n "$f" ]] || die "download of '$p' produced no .deb"
    dpkg-deb -f "$f" Package >/dev/null || die "downloaded $f is not a valid .deb"
    FETCHED_DEBS=$((FETCHED_DEBS + 1))
    FETCHED=$((FETCHED + $(stat -c %s "$f")))
    mv -f "$f" "$DEBS/"
  done
  FETCHED=$((FETCHED + LISTS_BYTES))
  echo >&2
  # The indexes (~55 MiB unpacked) are only needed for a download: the next one runs apt-get update anyway.
  rm -rf "$INCOMING" "$APT/cache/pkgcache.bin" "$APT/cache/srcpkgcache.bin" "$APT/lists"/*_*
else
  log "all ${#WANTED[@]} .debs kept in $DEBS (no network needed)"
fi

# extract_pkg unpacks a cached package into a root (whole, or only its listed members;
# glibc into .cuda/glibc, replacing it) and adds its stamp line to STAMP_BODY.
extract_pkg() {
  local f
  f=$(cached_deb "$1")
  log "dpkg -x $(basename "$f")"
  case "$1" in
    "$NCCL_DEV_PKG") dpkg-deb --fsys-tarfile "$f" | tar -x -C "$2" --wildcards "${NCCL_DEV_MEMBERS[@]}" ;;
    "$GLIBC_PKG")
      rm -rf "$CUDA_DIR/glibc.new" && dpkg -x "$f" "$CUDA_DIR/glibc.new" &&
        rm -rf "$CUDA_DIR/glibc" && mv "$CUDA_DIR/glibc.new" "$CUDA_DIR/glibc" ;;
    *) dpkg -x "$f" "$2" ;;
  esac || return 1
  STAMP_BODY+="$1 $(dpkg-deb -f "$f" Version) $(basename "$f")"
  [[ "$1" == "$NCCL_DEV_PKG" ]] && STAMP_BODY+=" (partial)"
  [[ "$1" == "$GLIBC_PKG" ]] && STAMP_BODY+=" (in glibc/)"
  STAMP_BODY+=$'\n'
}

# dev_links adds the unversioned .so links that are missing (e.g. libcufile.so, whose -dev
# package is not fetched) and drops links whose target was not unpacked.
dev_links() {
  local L="$1/$LIBDIR" so base stem major
  for so in "$L"/lib*.so.[0-9]*; do
    [[ -e "$so" ]] || continue
    base=${so##*/}
    stem=${base%%.so.*}
    [[ -e "$L/$stem.so" || -L "$L/$stem.so" ]] && continue
    major=${base#"$stem".so.}
    major=${major%%.*}
    [[ -e "$L/$stem.so.$major" ]] && ln -s "$stem.so.$major" "$L/$stem.so"
  done
  find "$1" -xtype l -delete
}

# ---------------------------------------------------------------- add packages to the install
if ((${#ADD[@]})); then
  # Unpacked in place: they only add files. The stamp is rewritten last, so an
  # interrupted run unpacks them again next time.
  STAMP_BODY=""
  for p in "${ADD[@]}"; do
    extract_pkg "$p" "$ROOT" || die "unpacking $p failed (corrupt .deb? delete it and rerun)"
  done
  [[ -e "$ROOT/$LIBDIR/nvidia/current/libnvidia-ml.so.1" ]] &&
    ln -sfn nvidia/current/libnvidia-ml.so.1 "$ROOT/$LIBDIR/libnvidia-ml.so.1"
  dev_links "$ROOT"
  { printf '%s\n' "$STAMP_HEAD"; sed 1d "$STAMP"; printf '%s' "$STAMP_BODY"; } >"$STAMP.tmp"
  mv -f "$STAMP.tmp" "$STAMP"
  write_env
  log "added in $((SECONDS - START)) s:"
  printf '%s' "$STAMP_BODY" | while read -r p v _; do log "  $p $v"; done
  costs
  [[ $VERIFY == 1 ]] && verify
  exit 0
fi

# ---------------------------------------------------------------- extract
NEW="$CUDA_DIR/root.new"
rm -rf "$NEW"
mkdir -p "$NEW"
STAMP_BODY=""
DEV_DEB=$(cached_deb "$DEV_PKG")
log "extracting $(basename "$DEV_DEB") (headers + cudart static libs only; ~25 s)"
( dpkg-deb --fsys-tarfile "$DEV_DEB" | tar -x -C "$NEW" --wildcards "${DEV_MEMBERS[@]}" ) &
DEV_PID=$!
for p in "${PKGS[@]}" "$NCCL_DEV_PKG" "$GLIBC_PKG"; do
  extract_pkg "$p" "$NEW" || { kill "$DEV_PID" 2>/dev/null || true; die "unpacking $p failed (corrupt .deb? delete it and rerun)"; }
done
wait "$DEV_PID" || die "extracting $DEV_DEB failed (corrupt? delete it and rerun)"
STAMP_BODY+="$DEV_PKG $(dpkg-deb -f "$DEV_DEB" Version) $(basename "$DEV_DEB") (partial)"$'\n'

# ---------------------------------------------------------------- fix-ups for the relocated prefix
L="$NEW/$LIBDIR"
# libcuda1 ships nvidia/current/libcuda.so*; Debian's alternatives system would link them
# into the library dir: do it here.
ln -sfn nvidia/current/libcuda.so.1 "$L/libcuda.so.1"
ln -sfn libcuda.so.1 "$L/libcuda.so"
ln -sfn nvidia/current/libnvidia-ml.so.1 "$L/libnvidia-ml.so.1"   # the same for NVML
dev_links "$NEW"

# Debian's nvcc.profile is a link to /etc/nvcc.profile with absolute /usr paths: replace it
# with a relocatable one ($(_HERE_) = the real nvcc's directory, .../nvidia-cuda-toolkit/bin).
TK="$NEW/usr/lib/nvidia-cuda-toolkit/bin"
rm -f "$TK/nvcc.profile"
cat >"$TK/nvcc.profile" <<'EOF'
# Written by scripts/setup-cuda.sh: Debian's profile, made relative to this directory.
NVVMIR_LIBRARY_DIR = $(_HERE_)/../libdevice

PATH		+= $(_HERE_):$(_HERE_)/../../../bin:

INCLUDES	+= "-I$(_HERE_)/../../../include" $(_SPACE_)

LIBRARIES	=+ $(_SPACE_) "-L$(_HERE_)/../../x86_64-linux-gnu/stubs" "-L$(_HERE_)/../../x86_64-linux-gnu"
EOF
# Debian's /usr/bin/nvcc is a script with absolute paths: make it relative too.
cat >"$NEW/usr/bin/nvcc" <<'EOF'
#!/bin/sh
# Written by scripts/setup-cuda.sh (relocatable version of Debian's wrapper).
exec "$(dirname "$(readlink -f "$0")")/../lib/nvidia-cuda-toolkit/bin/nvcc" "$@"
EOF
chmod 755 "$NEW/usr/bin/nvcc"
[[ -x "$TK/nvcc" && -x "$TK/cicc" ]] || die "nvidia-cuda-toolkit did not provide nvcc/cicc"

# ---------------------------------------------------------------- bin/ wrappers, swap in, stamp
BIN_NEW="$CUDA_DIR/bin.new"
rm -rf "$BIN_NEW"
mkdir -p "$BIN_NEW"
cat >"$BIN_NEW/nvcc" <<'EOF'
#!/bin/sh
# Written by scripts/setup-cuda.sh. The real nvcc reads ../root/usr/lib/nvidia-cuda-toolkit/bin/
# nvcc.profile, which puts cicc, ptxas, fatbinary, nvlink, cudafe++ on its PATH and adds
# -I<root>/usr/include and -L<root>/usr/lib/x86_64-linux-gnu (cudart_static, cudadevrt).
# The tools need no library from the prefix, so no LD_LIBRARY_PATH is set.
exec "$(dirname "$(readlink -f "$0")")/../root/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$@"
EOF
chmod 755 "$BIN_NEW/nvcc"
for t in "${TOOLS[@]}"; do
  [[ -x "$NEW/usr/bin/$t" ]] || die "tool $t missing from the unpacked toolkit"
  ln -s "../root/usr/bin/$t" "$BIN_NEW/$t"
done

rm -f "$STAMP"
rm -rf "${ROOT:?}" "${CUDA_DIR:?}/bin"
mv "$NEW" "$ROOT"
mv "$BIN_NEW" "$CUDA_DIR/bin"

"$CUDA_DIR/bin/nvcc" --version >/dev/null || die "the installed nvcc does not run"
write_env
printf '%s\n%s' "$STAMP_HEAD" "$STAMP_BODY" >"$STAMP.tmp"
mv -f "$STAMP.tmp" "$STAMP"

log "installed in $((SECONDS - START)) s:"
sed 1d "$STAMP" | while read -r p v _; do log "  $p $v"; done
costs
log "use it with:  source $CUDA_DIR/env.sh"
[[ $VERIFY == 1 ]] && verify
exit 0
