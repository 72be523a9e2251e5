#!/usr/bin/env python3
"""The math-library cases of packages blas, fft and rng, through CuPy (and
PyTorch for bfloat16, which CuPy's matmul lacks), for comparison.

Run on the GPU machine:  python3 bench/bench_cupy_math.py [--reps 5]
Prints one Markdown table: GPU time by CUDA events (median over the reps).
Each rep runs about a second of back-to-back calls, as the Go benchmarks of
blas, fft and rng do (testing.B's default benchtime): a short burst of
tensor-core GEMMs runs at higher clocks than a sustained second of them, so
both sides must be timed alike. The 5-call burst figures are printed too.
"""
import argparse
import statistics
import sys
import time

import gputime

N_GEMM = 8192
N_FFT = 1 << 24
N_RAND = 64 << 20  # float32 values: 256 MiB


def events_time(cp, fn, iters, reps):
    """Median seconds per call of fn, timed with CUDA events around iters
    calls, after one call of warm-up."""
    return statistics.median(gputime.cupy_event_times(cp, fn, iters, reps, warmup=1))


def cupy_cases(reps):
    import cupy as cp

    res = {}
    for name, dt in (("float32", cp.float32), ("float64", cp.float64), ("float16", cp.float16)):
        a = cp.random.random((N_GEMM, N_GEMM)).astype(dt)
        b = cp.random.random((N_GEMM, N_GEMM)).astype(dt)
        c = cp.empty((N_GEMM, N_GEMM), dtype=dt)
        f = lambda: cp.matmul(a, b, out=c)  # noqa: E731
        t = events_time(cp, f, 600 if name == "float16" else 50, reps)
        res[f"Gemm8192_{name}"] = f"{2 * N_GEMM**3 / t / 1e12:.1f} TFLOP/s"
        t = events_time(cp, f, 5, reps)
        res[f"Gemm8192_{name} (5-call burst)"] = f"{2 * N_GEMM**3 / t / 1e12:.1f} TFLOP/s"
        del a, b, c
    x = (cp.random.random(N_FFT) + 1j * cp.random.random(N_FFT)).astype(cp.complex64)
    t = events_time(cp, lambda: cp.fft.fft(x), 3600, reps)
    res["FFT_C2C_2^24_complex64"] = f"{t * 1e3:.3f} ms"
    rs = cp.random.RandomState(1234)
    t = events_time(cp, lambda: rs.random_sample(N_RAND, dtype=cp.float32), 2000, reps)
    res["UniformFloat32_256MiB"] = f"{N_RAND * 4 / t / 1e9:.1f} GB/s"

    # The CPU cost of one small GEMM call, timed as cudagobench times
    # launches: chunks of 500 calls with untimed syncs between them.
    a = cp.random.random((64, 64)).astype(cp.float32)
    b = cp.random.random((64, 64)).astype(cp.float32)
    c = cp.empty((64, 64), dtype=cp.float32)
    per = gputime.cpu_per_call(cp.cuda.Device().synchronize, lambda: cp.matmul(a, b, out=c), reps)
    res["GemmSmall64_float32 (CPU per call)"] = f"{statistics.median(per) * 1e6:.2f} µs"
    return res


def torch_bf16(reps):
    import torch

    a = torch.rand((N_GEMM, N_GEMM), device="cuda", dtype=torch.bfloat16)
    b = torch.rand((N_GEMM, N_GEMM), device="cuda", dtype=torch.bfloat16)
    c = torch.empty((N_GEMM, N_GEMM), device="cuda", dtype=torch.bfloat16)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    out = {}
    for label, iters in (("", 600), (" (5-call burst)", 5)):
        ts = gputime.torch_event_times(torch, lambda: torch.matmul(a, b, out=c), iters, reps, warmup=0)
        out[f"Gemm8192_bfloat16{label}"] = f"{2 * N_GEMM**3 / statistics.median(ts) / 1e12:.1f} TFLOP/s (PyTorch {torch.__version__})"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    res = {}
    for f in (cupy_cases, torch_bf16):
        try:
            res.update(f(args.reps))
        except Exception as e:  # noqa: BLE001
            res[f.__name__] = f"n/a ({type(e).__name__}: {str(e)[:80]})"
    try:
        import cupy

        ver = f"CuPy {cupy.__version__}"
    except Exception:  # noqa: BLE001
        ver = "no CuPy"
    print(f"bench_cupy_math {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: Python {sys.version.split()[0]}, {ver}, "
          f"{args.reps} reps (median)\n")
    print("| case | CuPy |")
    print("| --- | ---: |")
    for k, v in res.items():
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
