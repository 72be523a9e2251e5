#!/usr/bin/env bash
# The float32 and float64 GEMMs at 4096x16384x4096, cudago (blas's
# BenchmarkGEMM) and CuPy/PyTorch (bench/bench_torch_gemm.py --only), each
# side after the same 20 s rest and in both orders, with the temperature, SM
# clock and power sampled during each: gemm-bench.sh runs these cases on the
# Go side after some 80 s of other GEMMs and on the Python side after 20 s,
# which cost the Go side up to 0.7 % (docs/benchmarks.md). About 2 minutes.
#
# Usage, on the GPU machine, from the repository root with the bundle
# (../shared/gpu/bundle ./blas here; carry .gpuc, or .gpu):
#   bash scripts/gpu/gemm-rest.sh
# Writes $OUT/<order>-{go.txt,py.json,go.smi,py.smi} ($OUT: the device
# tool's folder, else ./gemm-rest-out) and prints each phase's mean
# temperature, clock and power, and each order's comparison rows.
cd "$(dirname "$0")/../.." || exit 1
if [ ! -x .gpu/blas.test ] && [ -f .gpuc/gpu.tgz ]; then tar xzf .gpuc/gpu.tgz; fi
[ -x .gpu/blas.test ] || { echo "gemm-rest: no .gpu/blas.test: build the bundle first (../shared/gpu/bundle ./blas)"; exit 1; }
export CUDAGO_REQUIRE_GPU=1
PY=${PYTHON:-/opt/torch/.venv/bin/python}; X=${OUT:-$PWD/gemm-rest-out}; mkdir -p $X
G='BenchmarkGEMM/^float(32|32-sgemm|64)$/^4096'; P='^float(32|32-sgemm|64)/4096'
for order in "go py" "py go"; do
  o=${order// /-}
  for side in $order; do
    sleep 20
    nvidia-smi --query-gpu=timestamp,temperature.gpu,clocks.sm,power.draw --format=csv,noheader -lms 250 > $X/$o-$side.smi & m=$!
    if [ $side = go ]; then (cd blas && ../.gpu/blas.test -test.run '^$' -test.bench "$G" -test.benchtime 20x -test.count 3) > $X/$o-go.txt 2>&1
    else $PY bench/bench_torch_gemm.py --only "$P" --json $X/$o-py.json > /dev/null 2>&1; fi
    kill $m
    awk -F', ' '{t+=$2; c+=$3; p+=$4; n++} END {printf "%s %s: mean temp %.1f C, SM %.0f MHz, %.0f W over %d samples\n", o, s, t/n, c/n, p/n, n}' o=$o s=$side $X/$o-$side.smi
  done
  $PY bench/bench_torch_gemm.py --compare --go $X/$o-go.txt --py $X/$o-py.json | grep -E '4096x16384x4096 \| const' | grep -E 'float(32|64)'
done
