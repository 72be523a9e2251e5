#!/usr/bin/env bash
# Issue 22's NCCL run on a machine with several GPUs (nvidia-h100-x4: 4), in
# one call of at most MULTIGPU_BUDGET seconds (default 460), every step under
# `timeout`, NCCL_NVLS_ENABLE=0 throughout:
#
#   tests     package nccl's GPU tests: one rank, and every GPU as a rank of one
#             process (InitAll + Group, a goroutine per rank, in place, 1 GiB,
#             Split and Shrink, one process per GPU)
#   cudago    bench/cmd/nccltest under torchrun, one process per GPU: every
#             operation checked on every rank, busbw at 1 GiB, 8-byte latency
#   torch     bench/bench_torch_dist.py under torchrun: the same measurements
#             through torch.distributed
#   twonodes  scripts/gpu/twonodes.sh: two simulated nodes of half the GPUs
#             each, under torchrun, Open MPI's and Slurm's variables
#
# Both sides use one NCCL: torch's own libnccl (its pip wheel), given to cudago
# with CUDAGO_NCCL_PATH when it is 2.28.3 or newer; else pathfinder's choice.
#
# Usage, on the GPU machine, from the repository root with the bundle
# (../shared/gpu/bundle ./nccl here; carry .gpuc, or .gpu):
#   bash scripts/gpu/multigpu.sh
# Writes $OUT/{tests,cudago,torch,twonodes,summary}.log ($OUT: the device
# tool's folder, else ./multigpu-out) and prints the summary: each step's
# verdict and the busbw/latency table, cudago against torch, with ratios.
# Environment: MULTIGPU_BUDGET (seconds), TORCHRUN (default
# /opt/torch/.venv/bin/torchrun), MULTIGPU_STEPS (default "tests cudago torch twonodes").
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/multigpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export CUDAGO_REQUIRE_GPU=1
BUDGET=${MULTIGPU_BUDGET:-460}
TORCHRUN=${TORCHRUN:-/opt/torch/.venv/bin/torchrun}
PY=$(dirname "$TORCHRUN")/python3
STEPS=${MULTIGPU_STEPS:-tests cudago torch twonodes}
START=$SECONDS
SUMMARY=$OUT/summary.log
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

if [ ! -x .gpu/nccl.test ] && [ -f .gpuc/gpu.tgz ]; then tar xzf .gpuc/gpu.tgz; fi
for f in .gpu/nccl.test .gpu/bin/nccltest .gpu/bin/allreduce; do
  [ -x "$f" ] || { say "multigpu: no $f: build the bundle first (../shared/gpu/bundle ./nccl)"; exit 1; }
done
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say "multigpu: $(date -u +%FT%TZ), $NGPU GPU(s), budget ${BUDGET}s"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
nvidia-smi topo -m 2>&1 | grep -E '^(GPU[0-9]|\s+GPU0)' | tee -a "$SUMMARY"

# torch's NCCL, for both sides.
read -r TORCH_NCCL_VERSION TORCH_NCCL_LIB < <(timeout 60 "$PY" -c '
import glob, os, torch
v = torch.cuda.nccl.version()
v = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "nccl", "lib", "libnccl.so*"))
print(v, os.path.realpath(libs[0]) if libs else "-")' 2>/dev/null || echo "? -")
newer() { printf '%s\n%s\n' "$2" "$1" | sort -V -C; } # newer A B: A >= B
if [ "${TORCH_NCCL_LIB:--}" != - ] && newer "$TORCH_NCCL_VERSION" 2.28.3; then
  export CUDAGO_NCCL_PATH=$TORCH_NCCL_LIB
  say "multigpu: torch's NCCL $TORCH_NCCL_VERSION ($TORCH_NCCL_LIB), for cudago too (CUDAGO_NCCL_PATH)"
else
  say "multigpu: torch's NCCL is ${TORCH_NCCL_VERSION:-?} (${TORCH_NCCL_LIB:--}): cudago takes pathfinder's NCCL; the comparison crosses NCCL versions"
fi

declare -A verdict rc took
# step NAME SECONDS CMD...: CMD under timeout, min(SECONDS, what is left of the
# budget less a margin), its output in $OUT/NAME.log.
step() {
  local name=$1 want=$2 t s0
  shift 2
  t=$((BUDGET - (SECONDS - START) - 15))
  [ "$t" -gt "$want" ] && t=$want
  if [ "$t" -lt 20 ]; then
    verdict[$name]="not run (budget spent)"
    return
  fi
  echo "=== $name (at most ${t}s): $*"
  s0=$SECONDS
  STEP_TIMEOUT=$t timeout -k 10 "$t" "$@" >"$OUT/$name.log" 2>&1
  rc[$name]=$?
  took[$name]=$((SECONDS - s0))
  [ "${rc[$name]}" = 124 ] && echo "multigpu: $name: killed after ${t}s" >>"$OUT/$name.log"
  tail -n 3 "$OUT/$name.log"
}

for s in $STEPS; do
  # shellcheck disable=SC2016 # tests: expanded by the inner bash, where STEP_TIMEOUT is set
  case $s in
    tests) step tests 200 bash -c 'cd nccl && exec ../.gpu/nccl.test -test.v -test.run GPU -test.timeout "$((STEP_TIMEOUT - 5))s"' ;;
    cudago) step cudago 80 "$TORCHRUN" --nproc-per-node "$NGPU" --no-python .gpu/bin/nccltest ;;
    torch) step torch 90 "$TORCHRUN" --nproc-per-node "$NGPU" bench/bench_torch_dist.py ;;
    twonodes) step twonodes 150 env TWONODES_TIMEOUT=45 bash scripts/gpu/twonodes.sh .gpu/bin ;;
    *) say "multigpu: unknown step $s" ;;
  esac
done

# The verdicts.
count() { grep -c -E -- "$1" "$2" 2>/dev/null || true; }
if [ -n "${rc[tests]+x}" ]; then
  f=$OUT/tests.log
  multi=$(count '^--- PASS: TestGPUMulti' "$f")
  skipped=$(grep -E -- '--- SKIP: TestGPU' "$f" | awk '{print $3}' | tr '\n' ' ')
  if [ "${rc[tests]}" = 0 ] && grep -q '^PASS$' "$f" && [ -z "$skipped" ]; then v=PASS; else v=FAIL; fi
  verdict[tests]="$v (exit ${rc[tests]}, ${took[tests]}s): $(count '^--- PASS: TestGPU' "$f") GPU tests passed ($multi multi-GPU), $(count '^--- FAIL' "$f") failed, skipped: ${skipped:-none}"
  grep -E 'cases checked on every rank|: run and checked on' "$f" | sed 's/^ */  /' >>"$SUMMARY"
fi
if [ -n "${rc[cudago]+x}" ]; then
  f=$OUT/cudago.log
  good=$(count 'CHECK impl=cudago .* failed=0 ' "$f")
  if [ "${rc[cudago]}" = 0 ] && [ "$good" = "$NGPU" ] && [ "$(count 'FAIL impl=' "$f")" = 0 ]; then v=PASS; else v=FAIL; fi
  verdict[cudago]="$v (exit ${rc[cudago]}, ${took[cudago]}s): $good of $NGPU ranks checked every case, $(count 'FAIL impl=' "$f") wrong results, $(count 'RESULT impl=cudago' "$f") measurements"
  grep -m1 -o 'nccltest: rank 0 .*' "$f" >>"$SUMMARY"
fi
if [ -n "${rc[torch]+x}" ]; then
  f=$OUT/torch.log
  if [ "${rc[torch]}" = 0 ] && [ "$(count 'ranks_failed=[1-9]' "$f")" = 0 ]; then v=PASS; else v=FAIL; fi
  verdict[torch]="$v (exit ${rc[torch]}, ${took[torch]}s): $(count 'RESULT impl=torch' "$f") measurements"
  grep -m1 -o 'bench_torch_dist: .*' "$f" >>"$SUMMARY"
fi
if [ -n "${rc[twonodes]+x}" ]; then
  f=$OUT/twonodes.log
  if [ "${rc[twonodes]}" = 0 ]; then v=PASS; else v=FAIL; fi
  verdict[twonodes]="$v (exit ${rc[twonodes]}, ${took[twonodes]}s): $(grep -m1 -E '^twonodes: (all|[0-9]+ of)' "$f" || echo 'no verdict line')"
  grep -E '^twonodes: (PASS|FAIL) ' "$f" | sed 's/^/  /' >>"$SUMMARY"
  grep -o 'RESULT impl=cudago op=allreduce .*' "$f" | sed 's/^/  two-node sim: /' >>"$SUMMARY"
fi
say ""
say "== steps"
for s in $STEPS; do say "$(printf '%-9s %s' "$s" "${verdict[$s]:-not run}")"; done

# The table: RESULT lines of both sides (anything a launcher put before them
# is dropped).
results() { grep -h -o 'RESULT impl=.*' "$OUT/cudago.log" "$OUT/torch.log" 2>/dev/null; }
say ""
say "== cudago against torch.distributed ($NGPU ranks; busbw as nccl-tests; latency: median of 8-byte AllReduce + sync)"
results | awk '
{ delete kv; for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
  op = kv["op"]; if (!(op in seen)) { seen[op] = 1; order[++nops] = op }
  if (op == "allreduce_latency") v[kv["impl"], op] = kv["median_us"]; else v[kv["impl"], op] = kv["busbw_GBps"]
  bytes[op] = kv["bytes"] }
END {
  printf "%-24s %13s %13s %13s %8s  %s\n", "op", "cudago", "torch", "cudago/torch", "target", "met"
  for (i = 1; i <= nops; i++) {
    op = order[i]; c = v["cudago", op]; t = v["torch", op]
    lat = (op == "allreduce_latency"); unit = lat ? " us" : " GB/s"
    r = (c != "" && t != "" && t > 0) ? c / t : -1
    target = lat ? "<= 1.00" : ">= 0.97"
    met = (r < 0) ? "n/a" : ((lat ? r <= 1.0 : r >= 0.97) ? "yes" : "NO")
    size = lat ? "8 B" : (bytes[op] == 1073741824 ? "1 GiB" : bytes[op] " B")
    printf "%-24s %13s %13s %13s %8s  %s\n", op " " size, (c == "" ? "-" : c unit), (t == "" ? "-" : t unit), (r < 0 ? "-" : sprintf("%.3f", r)), target, met
  }
}' | tee -a "$SUMMARY"
say ""
say "multigpu: done in $((SECONDS - START))s; logs in $OUT"
