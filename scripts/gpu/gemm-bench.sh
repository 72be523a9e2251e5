#!/usr/bin/env bash
# Issue 24's GEMM rows in one call on one GPU (111 s on an H100, 2026-11-27;
# the step timeouts add up to 560 s, under the device tool's 600 s a call),
# every step under `timeout`:
#
#   go      blas's BenchmarkGEMM (-test.benchtime 20x -test.count 3: 20
#           calls after 3 warm-ups, the first of which tunes the shape,
#           three times, the median compared as Python's 3 reps are): float16, bfloat16,
#           float32 (Matmul; and SGEMM), float64 (DGEMM) at 8192³ and
#           4096×16384×4096, bfloat16 + bias + GELU and FP8 E4M3 at 8192³;
#           const (ones) and random inputs
#   tune    BenchmarkMatmulTuneFirstUse: what the first Matmul of a shape
#           costs, tuned and not
#   python  bench/bench_torch_gemm.py: the same cases through CuPy and
#           PyTorch (torch._addmm_activation, unfused gelu(a@b+bias),
#           torch._scaled_mm)
#   table   the comparison, with ratios and the issue's targets
#
# Usage, on the GPU machine, from the repository root with the bundle
# (../shared/gpu/bundle ./blas here; carry .gpuc, or .gpu):
#   bash scripts/gpu/gemm-bench.sh
# Writes $OUT/{gpu,go,tune,py,table}.txt and py.json ($OUT: the device tool's
# folder, else ./gemm-bench-out) and prints the table last. Back here, the
# chart's figures: cudagobench -gemm-logs DIR [-fft-logs DIR] -libs-json FILE
# (docs/benchmarks.md, "Results").
# Environment: PYTHON (default /opt/torch/.venv/bin/python), GEMM_BENCH_STEPS
# (default "go tune python").
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/gemm-bench-out}
mkdir -p "$OUT"
PY=${PYTHON:-/opt/torch/.venv/bin/python}
STEPS=${GEMM_BENCH_STEPS:-go tune python}
if [ ! -x .gpu/blas.test ] && [ -f .gpuc/gpu.tgz ]; then tar xzf .gpuc/gpu.tgz; fi
[ -x .gpu/blas.test ] || { echo "gemm-bench: no .gpu/blas.test: build the bundle first (../shared/gpu/bundle ./blas)"; exit 1; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
} 2>&1 | tee "$OUT/gpu.txt"
status=0
for step in $STEPS; do
  t0=$SECONDS
  case $step in
  go)
    (cd blas && timeout 300 ../.gpu/blas.test -test.run '^$' -test.bench '^BenchmarkGEMM$' -test.benchtime 20x -test.count 3 -test.benchmem) >"$OUT/go.txt" 2>&1 || status=1
    grep -E '^(Benchmark|FAIL|ok|PASS|---)' "$OUT/go.txt" ;;
  tune)
    (cd blas && timeout 60 ../.gpu/blas.test -test.run '^$' -test.bench 'MatmulTuneFirstUse' -test.benchtime 5x) >"$OUT/tune.txt" 2>&1 || status=1
    grep -E '^(Benchmark|FAIL|ok|PASS|---)' "$OUT/tune.txt" ;;
  python)
    timeout 200 "$PY" bench/bench_torch_gemm.py --json "$OUT/py.json" >"$OUT/py.txt" 2>&1 || status=1
    tail -n 3 "$OUT/py.txt" ;;
  *) echo "gemm-bench: unknown step $step"; status=1 ;;
  esac
  echo "gemm-bench: $step took $((SECONDS - t0)) s"
done
if [ -f "$OUT/go.txt" ] && [ -f "$OUT/py.json" ]; then
  args=(--compare --go "$OUT/go.txt" --py "$OUT/py.json")
  [ -f "$OUT/tune.txt" ] && args+=(--tune "$OUT/tune.txt")
  "$PY" bench/bench_torch_gemm.py "${args[@]}" | tee "$OUT/table.txt"
fi
echo "gemm-bench: $([ $status = 0 ] && echo ok || echo FAILED) in $SECONDS s"
exit $status
