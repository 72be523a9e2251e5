#!/usr/bin/env bash
# Two nodes simulated on one host: the host's GPUs split in two halves, each
# half a "node" with its own CUDA_VISIBLE_DEVICES and its own NCCL host id
# (NCCL_HOSTID), so that NCCL joins the halves as it joins two machines: over
# its network transport (sockets on loopback: NCCL_SOCKET_IFNAME=lo,
# NCCL_IB_DISABLE=1), with NVLink/P2P only inside a node. The allreduce
# example and bench/cmd/nccltest (every collective checked on every rank,
# then bandwidth and latency at a small size) run under
#
#   torchrun: two agents, --nnodes 2 --node-rank 0|1, one endpoint (static
#             rendezvous on --master-addr/--master-port; then c10d on
#             --rdzv-endpoint, for the example);
#   Open MPI: the variables mpirun gives each process (OMPI_COMM_WORLD_*,
#             PMIX_NAMESPACE, MASTER_ADDR as `mpirun -x MASTER_ADDR=node0`
#             passes it), set here; each process sees its node's GPUs;
#   Slurm:    the variables srun gives each task (SLURM_PROCID,
#             SLURM_STEP_NUM_TASKS, SLURM_NODEID, SLURM_LOCALID,
#             SLURM_STEP_TASKS_PER_NODE, SLURM_STEP_NODELIST, SLURM_JOB_ID,
#             SLURM_STEP_ID, ...), set here; each task sees its one GPU, as
#             with srun --gpus-per-task 1.
#
# Usage, from the repository root on the GPU machine:
#   bash scripts/gpu/twonodes.sh [BINDIR]     BINDIR holds allreduce and nccltest (default .gpu/bin)
#   bash scripts/gpu/twonodes.sh --print-env openmpi|slurm|nodes
#       prints the variables of each process (or node) and runs nothing: the
#       CPU test TestTwoNodesEnv checks them against rendezvous.FromEnv.
# Environment: GPUS (default: nvidia-smi's count; an even number, 2 or more),
# TORCHRUN (default /opt/torch/.venv/bin/torchrun), TWONODES_PORT (first port,
# default 29600), TWONODES_TIMEOUT (seconds per run, default 60).
# Prints every process's output, prefixed with its run and rank, a line
# "twonodes: PASS|FAIL <run>" per run, and exits 1 if any run failed.
set -euo pipefail

# Every variable a launcher sets that package rendezvous reads: the runs
# start from none of them.
LAUNCHER_VARS=(CUDAGO_RANK CUDAGO_WORLD_SIZE CUDAGO_LOCAL_RANK CUDAGO_LOCAL_WORLD_SIZE CUDAGO_RENDEZVOUS_ADDR
  RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT TORCHELASTIC_USE_AGENT_STORE
  OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK OMPI_COMM_WORLD_LOCAL_SIZE
  PMIX_NAMESPACE OMPI_MCA_ess_base_jobid
  SLURM_PROCID SLURM_STEP_NUM_TASKS SLURM_LOCALID SLURM_NODEID SLURM_STEP_TASKS_PER_NODE SLURM_TASKS_PER_NODE
  SLURM_NTASKS_PER_NODE SLURM_STEP_NODELIST SLURM_JOB_NODELIST SLURM_NODELIST SLURM_JOB_ID SLURM_JOBID
  SLURM_STEP_ID SLURM_STEPID CUDA_VISIBLE_DEVICES NCCL_HOSTID)
for v in "${LAUNCHER_VARS[@]}"; do unset "$v"; done

NODES=2
gpu_count() {
  if [ -n "${GPUS:-}" ]; then echo "$GPUS"; return; fi
  if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L | grep -c '^GPU' || true; else echo 4; fi
}
GPUS=$(gpu_count)
PER_NODE=$((GPUS / NODES))
WORLD=$((PER_NODE * NODES))

# The name of node 0, as a node list would give it: this host's name when it
# resolves (rank 0 then listens on every interface), else localhost.
node0_name() {
  local h
  h=$(hostname 2>/dev/null || true)
  if [ -n "$h" ] && getent hosts "$h" >/dev/null 2>&1; then echo "$h"; else echo localhost; fi
}

# node_env NODE: what every process of the node has.
node_env() {
  local node=$1 first=$(($1 * PER_NODE)) g list=""
  for ((g = first; g < first + PER_NODE; g++)); do list+="${list:+,}$g"; done
  echo "CUDA_VISIBLE_DEVICES=$list"
  echo "NCCL_HOSTID=cudago-twonodes-node$node"
  echo "NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}"
  echo "NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}"
  echo "NCCL_NVLS_ENABLE=0"
}

# openmpi_env RANK RUN: what mpirun -n WORLD --map-by ppr:PER_NODE:node
# -x MASTER_ADDR=node0 gives process RANK (Open MPI 5: PMIX_NAMESPACE).
openmpi_env() {
  local r=$1 run=$2 node=$(($1 / PER_NODE))
  node_env "$node"
  echo "OMPI_COMM_WORLD_RANK=$r"
  echo "OMPI_COMM_WORLD_SIZE=$WORLD"
  echo "OMPI_COMM_WORLD_LOCAL_RANK=$((r % PER_NODE))"
  echo "OMPI_COMM_WORLD_LOCAL_SIZE=$PER_NODE"
  echo "OMPI_COMM_WORLD_NODE_RANK=$node"
  echo "OMPI_UNIVERSE_SIZE=$WORLD"
  echo "PMIX_RANK=$r"
  echo "PMIX_NAMESPACE=prterun-twonodes-$run@1"
  echo "MASTER_ADDR=127.0.0.1"
}

# slurm_env RANK RUN: what srun -N 2 --ntasks-per-node PER_NODE
# --gpus-per-task 1 gives task RANK: its own GPU only.
slurm_env() {
  local r=$1 run=$2 node=$(($1 / PER_NODE))
  node_env "$node" | grep -v '^CUDA_VISIBLE_DEVICES='
  echo "CUDA_VISIBLE_DEVICES=$r"
  echo "SLURM_PROCID=$r"
  echo "SLURM_STEP_NUM_TASKS=$WORLD"
  echo "SLURM_NTASKS=$WORLD"
  echo "SLURM_NPROCS=$WORLD"
  echo "SLURM_NODEID=$node"
  echo "SLURM_LOCALID=$((r % PER_NODE))"
  echo "SLURM_STEP_TASKS_PER_NODE=$PER_NODE(x$NODES)"
  echo "SLURM_TASKS_PER_NODE=$PER_NODE(x$NODES)"
  echo "SLURM_STEP_NUM_NODES=$NODES"
  echo "SLURM_NNODES=$NODES"
  echo "SLURM_STEP_NODELIST=$NODE0,twonodes-sim1"
  echo "SLURM_JOB_NODELIST=$NODE0,twonodes-sim1"
  echo "SLURM_JOB_ID=$((7000 + run))"
  echo "SLURM_STEP_ID=0"
}

NODE0=$(node0_name)

if [ "${1:-}" = "--print-env" ]; then
  case "${2:-}" in
    openmpi | slurm)
      for ((r = 0; r < WORLD; r++)); do
        echo "# rank $r"
        "${2}_env" "$r" 1
      done
      ;;
    nodes)
      for ((n = 0; n < NODES; n++)); do
        echo "# node $n"
        node_env "$n"
      done
      ;;
    *) echo "usage: $0 --print-env openmpi|slurm|nodes" >&2; exit 2 ;;
  esac
  exit 0
fi

if [ "$GPUS" -lt 2 ] || [ $((GPUS % 2)) -ne 0 ]; then
  echo "twonodes: needs an even number of GPUs, 2 or more; this host has $GPUS" >&2
  exit 1
fi
BIN=${1:-.gpu/bin}
TORCHRUN=${TORCHRUN:-/opt/torch/.venv/bin/torchrun}
PORT=${TWONODES_PORT:-29600}
T=${TWONODES_TIMEOUT:-60}
for b in allreduce nccltest; do
  [ -x "$BIN/$b" ] || { echo "twonodes: no $BIN/$b (build with ../shared/gpu/bundle)" >&2; exit 1; }
done
# nccltest over the simulated network: the checks up to 2^16+3 elements and
# the measurements at 64 MiB, so that sockets on loopback finish in seconds.
NCCLTEST_ARGS=(-counts "1,7,1000,65539" -bytes 64MiB -iters 5 -warmup 2 -lat-iters 200 -lat-warmup 20 -rendezvous-timeout "${T}s")
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
failed=()
runs=0

# report RUN STATUS: prints each process's log with a prefix, and the verdict.
report() {
  local run=$1 status=$2 f
  for f in "$LOGS/$run".*.log; do
    [ -e "$f" ] || continue
    sed "s|^|[$run $(basename "$f" .log | sed "s|^$run\.||")] |" "$f"
  done
  if [ "$status" = 0 ]; then echo "twonodes: PASS $run"; else echo "twonodes: FAIL $run (exit $status)"; failed+=("$run"); fi
}

# run_torchrun RUN RDZV BIN ARGS...: two torchrun agents, one per node.
run_torchrun() {
  local run=$1 rdzv=$2 node pids=() status=0 p vars
  shift 2
  runs=$((runs + 1))
  PORT=$((PORT + 2))
  for ((node = 0; node < NODES; node++)); do
    mapfile -t vars < <(node_env "$node")
    local how=(--node-rank "$node" --master-addr 127.0.0.1 --master-port "$PORT")
    if [ "$rdzv" = c10d ]; then how=(--rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "twonodes-$run"); fi
    env "${vars[@]}" timeout -k 5 "$T" "$TORCHRUN" --nnodes "$NODES" "${how[@]}" --nproc-per-node "$PER_NODE" \
      --no-python "$@" >"$LOGS/$run.node$node.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=$?; done
  report "$run" "$status"
}

# run_direct RUN LAUNCHER BIN ARGS...: WORLD processes with the variables
# LAUNCHER gives them.
run_direct() {
  local run=$1 launcher=$2 r pids=() status=0 p vars
  shift 2
  runs=$((runs + 1))
  for ((r = 0; r < WORLD; r++)); do
    mapfile -t vars < <("${launcher}_env" "$r" "$runs")
    env "${vars[@]}" timeout -k 5 "$T" "$@" >"$LOGS/$run.rank$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=$?; done
  report "$run" "$status"
}

echo "twonodes: $WORLD processes on $NODES simulated nodes of $PER_NODE GPUs; node 0 is \"$NODE0\"; $(command -v "$TORCHRUN" || echo "no $TORCHRUN")"
run_torchrun torchrun-static-allreduce static "$BIN/allreduce"
run_torchrun torchrun-static-nccltest static "$BIN/nccltest" "${NCCLTEST_ARGS[@]}"
run_torchrun torchrun-c10d-allreduce c10d "$BIN/allreduce"
run_direct openmpi-allreduce openmpi "$BIN/allreduce"
run_direct openmpi-nccltest openmpi "$BIN/nccltest" "${NCCLTEST_ARGS[@]}"
run_direct slurm-allreduce slurm "$BIN/allreduce"
run_direct slurm-nccltest slurm "$BIN/nccltest" "${NCCLTEST_ARGS[@]}"

if [ ${#failed[@]} -gt 0 ]; then
  echo "twonodes: ${#failed[@]} of $runs runs failed: ${failed[*]}"
  exit 1
fi
echo "twonodes: all $runs runs passed"
