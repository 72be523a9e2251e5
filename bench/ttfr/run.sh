#!/usr/bin/env bash
# Time to first result, whole process, on the GPU machine: cudago (cold and
# warm compile cache), its C twin (cuInit + primary context + module load +
# launch + sync only) and cuda.core, interleaved, N rounds.
#   bash bench/ttfr/run.sh [BIN_DIR] [N]     (BIN_DIR holds ttfr; default .gpu/bin)
# Prints one line per run: stack, mode, wall µs (process start to exit,
# measured here), then the program's own JSON line (phases).
set -euo pipefail
bin=${1:-.gpu/bin}
n=${2:-5}
py=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/ttfr_c" "$(dirname "$0")/ttfr.c" -I/usr/local/cuda/include -lcuda
export CUDAGO_CACHE_DIR="$work/cache"
"$bin/ttfr" -write "$work/saxpy.fatbin" >/dev/null
run() { # stack mode cmd...
	local stack=$1 mode=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	"$@" >"$work/out.json"
	t1=$(date +%s%N)
	echo "$stack $mode $(((t1 - t0) / 1000)) $(cat "$work/out.json")"
}
for _ in $(seq "$n"); do
	rm -rf "$work/cache"
	run cudago cold "$bin/ttfr"
	run cudago warm "$bin/ttfr"
	run C - "$work/ttfr_c" "$work/saxpy.fatbin"
	run cuda.core - "$py" "$(dirname "$0")/ttfr_cuda_core.py"
done
