#!/usr/bin/env bash
# Issue 24's FFT targets (complex64 2^24 C2C, batched 2-D 1024×1024 ×16 C2C,
# R2C 2^24: each ≥ 1.00× CuPy) and the small-GEMM CPU cost (64³ float32:
# ≤ 1.03× a C loop on the same cuBLAS handle, 0 allocations), cudago and
# CuPy in one call of about two and a half minutes on one GPU (149 s for
# four rounds on 2026-11-27):
#
#   rounds    FFTBENCH_ROUNDS (default 3) times, alternately, each FFT step
#             after FFTBENCH_REST seconds of rest: fft's
#             BenchmarkFFT{C2C2e24,C2C2D1024x16,R2C2e24}, cudago's
#             sub-benchmarks only, blas's BenchmarkGemmSmall64 (Gemm and
#             Matmul against C loops), and bench/bench_cupy_fft.py (one rep
#             of each case): both sides meet the same clocks, and the medians
#             of the rounds are compared
#   twins     the FFT benchmarks' C twins (the same plan; CuPy's planning
#             call; for 2^24 C2C a new output per call), once
#   libraries cudago's FFT benchmarks (cudago only) again with CuPy's own libcufft
#             (CUDAGO_CUFFT_PATH) and with each other libcufft on the machine
#             (/usr/local/cuda's, the venv's wheels'), when they differ from
#             pathfinder's choice: whether a gap is the library's
#   compare   bench/bench_cupy_fft.py --compare: the table, with ratios
#
# nvidia-smi dmon records power and clocks throughout ($OUT/dmon.log), and
# the summary gives the SM clock under load.
#
# Usage, on the GPU machine, from the repository root with the bundle
# (../shared/gpu/bundle ./fft ./blas here; carry .gpuc, or .gpu):
#   bash scripts/gpu/fft-bench.sh
# Writes $OUT/{go-fft-N,go-gemm-N,cupy-N,go-fft-twins,go-fft-lib-*}.log, cupy-N.json,
# dmon.log, env.txt and summary.md ($OUT: the device tool's folder, else
# ./fft-bench-out) and prints the summary. Back here, the chart's figures:
# cudagobench [-gemm-logs DIR] -fft-logs DIR -libs-json FILE
# (docs/benchmarks.md, "Results").
# Environment: FFTBENCH_ROUNDS, FFTBENCH_REST (seconds, default 8), PYTHON
# (default /opt/torch/.venv/bin/python3).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/fft-bench-out}
mkdir -p "$OUT"
export CUDAGO_REQUIRE_GPU=1
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
ROUNDS=${FFTBENCH_ROUNDS:-3}
# Seconds of rest before each side's transforms: a memory-bound transform's
# time moves by up to 1 % with what the GPU ran just before (R2C 2^24: 0.1887
# ms rested, 0.1900 ms inside the rounds, 2026-11-27), so each side starts
# from the same rest (dmon.log has the memory temperature).
REST=${FFTBENCH_REST:-8}
FFT_CASES='FFT(C2C2e24|C2C2D1024x16|R2C2e24)$'

if [ ! -x .gpu/fft.test ] && [ -f .gpuc/gpu.tgz ]; then tar xzf .gpuc/gpu.tgz; fi
for f in .gpu/fft.test .gpu/blas.test; do
  [ -x "$f" ] || { echo "fft-bench: no $f: build the bundle first (../shared/gpu/bundle ./fft ./blas)"; exit 1; }
done
echo "fft-bench: $(date -u +%FT%TZ), $ROUNDS rounds"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader
env | grep -E '^(PATH|VIRTUAL_ENV|CONDA_PREFIX|CUDA_HOME|CUDA_PATH|LD_LIBRARY_PATH|CUDAGO_[A-Z_]*)=' | sort >"$OUT/env.txt"
nvidia-smi dmon -s pc -o T >"$OUT/dmon.log" 2>&1 &
DMON=$!
trap 'kill $DMON 2>/dev/null' EXIT

gofft() { # gofft LOG PATTERN [env...]: fft's benchmarks, -test.v for their library log
  local log=$1 pat=$2
  shift 2
  (cd fft && env "$@" timeout 150 ../.gpu/fft.test -test.run '^$' -test.bench "$pat" -test.v) >"$log" 2>&1 ||
    echo "fft-bench: fft.test failed, see $log"
}

for r in $(seq 1 "$ROUNDS"); do
  echo "=== round $r ($SECONDS s)"
  sleep "$REST"
  gofft "$OUT/go-fft-$r.log" "$FFT_CASES/cudago\$"
  (cd blas && timeout 90 ../.gpu/blas.test -test.run '^$' -test.bench 'GemmSmall64' -test.benchtime 1x) >"$OUT/go-gemm-$r.log" 2>&1 ||
    echo "fft-bench: blas.test failed, see $OUT/go-gemm-$r.log"
  sleep "$REST"
  timeout 150 "$PY" bench/bench_cupy_fft.py --reps 1 --json "$OUT/cupy-$r.json" >"$OUT/cupy-$r.log" 2>&1 ||
    echo "fft-bench: bench_cupy_fft.py failed, see $OUT/cupy-$r.log"
  grep -hE 'libcufft:|^Benchmark.*(ms/transform|gemm/C)' "$OUT/go-fft-$r.log" "$OUT/go-gemm-$r.log" | sed 's/^ *//'
  grep -E '^\| FFT|^\| Gemm' "$OUT/cupy-$r.log"
done

# The C twins (same plan; CuPy's planning call; a new output per call),
# once after the rounds: in the rounds each side runs its three transforms
# and nothing else between them, so that each meets the same heat.
echo "=== twins ($SECONDS s)"
gofft "$OUT/go-fft-twins.log" "$FFT_CASES"
grep -hE '^Benchmark.*ms/transform' "$OUT/go-fft-twins.log" | sed 's/^ *//'

# The other libcufft files, each once: CuPy's, /usr/local/cuda's and the
# venv's wheels', unless it is the file pathfinder chose.
echo "=== libraries ($SECONDS s)"
chosen=$(sed -n 's/.*libcufft: .* = \([^,]*\), cufftGetVersion.*/\1/p' "$OUT/go-fft-1.log" | head -1)
cupylib=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["identity"]["libcufft_real"])' "$OUT/cupy-1.json" 2>/dev/null)
site=$("$PY" -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null)
seen=" $chosen "
i=0
for lib in "$cupylib" /usr/local/cuda/lib64/libcufft.so.* "$site"/nvidia/cu13/lib/libcufft.so.* "$site"/nvidia/cufft/lib/libcufft.so.*; do
  [ -f "$lib" ] || continue
  real=$(readlink -f "$lib")
  case "$seen" in *" $real "*) continue ;; esac
  seen="$seen $real "
  i=$((i + 1))
  gofft "$OUT/go-fft-lib-$i.log" "$FFT_CASES/cudago\$" CUDAGO_CUFFT_PATH="$real"
  grep -hE 'libcufft:|^Benchmark.*ms/transform' "$OUT/go-fft-lib-$i.log" | sed 's/^ *//'
done

echo "=== compare ($SECONDS s)"
"$PY" bench/bench_cupy_fft.py --compare "$OUT" | tee "$OUT/summary.md"
