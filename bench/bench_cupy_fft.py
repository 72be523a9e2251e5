#!/usr/bin/env python3
"""Issue 24's FFT targets and the small-GEMM CPU cost through CuPy, timed as
package fft's and blas's Go benchmarks time cudago, and the comparison of
the two (scripts/gpu/fft-bench.sh runs both sides and this script's
--compare).

Measure (on the GPU machine):
    python3 bench/bench_cupy_fft.py [--reps 1] [--json FILE]
Compare (after fft-bench.sh's runs):
    python3 bench/bench_cupy_fft.py --compare DIR

Timing, as the Go benchmarks: GPU time by CUDA events around back-to-back
calls, about a second of them per rep (testing.B's default benchtime makes
the Go side's measured run about a second too), after a short warm-up;
the median of the reps. A sustained second runs at the clocks the GPU
holds under load, which a short burst does not (bench_cupy_math.py's
notes), so both sides are timed sustained.

The cases (inputs of uniform random values in [0, 1), as the Go side's):
    FFTC2C2e24         cupy.fft.fft(x), x complex64 of 2^24
    FFTC2C2e24/plan    the same plan's fft into an output made once (no
                       allocation per call, as cudago's Plan.Forward)
    FFTC2C2D1024x16    cupy.fft.fft2(x), x complex64 of (16, 1024, 1024)
    FFTR2C2e24         cupy.fft.rfft(x), x float32 of 2^24
    GemmSmall64        cupy.matmul(a, b, out=c) of 64×64 float32: CPU time
                       per call, chunks of 500 with untimed syncs between
                       them (as blas's BenchmarkGemmSmall64)
It also reports which libcufft the process loaded (/proc/self/maps) and
cuFFT's version, and each plan's work area.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys
import time

import gputime

N = 1 << 24


def mapped(name):
    """The files of /proc/self/maps whose name contains name."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and name in parts[5] and parts[5] not in out:
                out.append(parts[5])
    return out


def events_time(cp, fn, reps, seconds=1.0):
    """Median seconds per call of fn, and every rep's, timed with CUDA events
    around about `seconds` of back-to-back calls per rep, as estimated
    from 10 calls after 3 of warm-up."""
    est = gputime.cupy_event_times(cp, fn, 10, 1)[0]
    iters = max(1, int(seconds / est))
    ts = gputime.cupy_event_times(cp, fn, iters, reps, warmup=0)
    return statistics.median(ts), ts, iters


def work_area(plan):
    w = getattr(plan, "work_area", None)
    if w is None:
        return 0
    if isinstance(w, list):
        return sum(x.mem.size for x in w)
    return w.mem.size


def measure(reps):
    import cupy as cp
    import cupyx.scipy.fft as cpx_fft
    from cupy.cuda import cufft

    rng = cp.random.RandomState(1234)
    res = {}

    def case(name, fn, nbytes, plan=None, arrays=()):
        t, ts, iters = events_time(cp, fn, reps)
        res[name] = {"ms": t * 1e3, "reps_ms": [x * 1e3 for x in ts], "iters": iters,
                     "GB/s": nbytes / t / 1e9, "work_bytes": work_area(plan) if plan is not None else None,
                     "ptr_mod_2MiB": [hex(a.data.ptr % (2 << 20)) for a in arrays]}

    x = (rng.random_sample(N, dtype=cp.float32) + 1j * rng.random_sample(N, dtype=cp.float32)).astype(cp.complex64)
    y = cp.fft.fft(x)
    plan = cpx_fft.get_fft_plan(x, value_type="C2C")
    case("FFTC2C2e24", lambda: cp.fft.fft(x), 2 * x.nbytes, plan, (x, y))
    del y

    x2 = (rng.random_sample((16, 1024, 1024), dtype=cp.float32)
          + 1j * rng.random_sample((16, 1024, 1024), dtype=cp.float32)).astype(cp.complex64)
    y = cp.fft.fft2(x2)
    plan2 = cpx_fft.get_fft_plan(x2, axes=(-2, -1), value_type="C2C")
    case("FFTC2C2D1024x16", lambda: cp.fft.fft2(x2), 2 * x2.nbytes, plan2, (x2, y))
    del x2, y, plan2

    xr = rng.random_sample(N, dtype=cp.float32)
    y = cp.fft.rfft(xr)
    planr = cpx_fft.get_fft_plan(xr, value_type="R2C")
    case("FFTR2C2e24", lambda: cp.fft.rfft(xr), xr.nbytes + y.nbytes, planr, (xr, y))
    del xr, y, planr

    # After the three transforms, as cudago's C twins run after its rounds'
    # transforms: each side's three meet the same heat. (x and plan stay
    # allocated through the 2-D and R2C cases for this, which since
    # 2026-11-27 03:49 UTC places those cases' arrays elsewhere in CuPy's pool.)
    out = cp.empty_like(x)
    case("FFTC2C2e24/plan", lambda: plan.fft(x, out, cufft.CUFFT_FORWARD), 2 * x.nbytes, plan, (x, out))
    del x, out, plan

    a = rng.random_sample((64, 64), dtype=cp.float32)
    b = rng.random_sample((64, 64), dtype=cp.float32)
    c = cp.empty((64, 64), dtype=cp.float32)
    cp.matmul(a, b, out=c)
    per = gputime.cpu_per_call(cp.cuda.Device().synchronize, lambda: cp.matmul(a, b, out=c), max(reps, 3))
    res["GemmSmall64"] = {"us_per_call": statistics.median(per) * 1e6, "reps_us": [p * 1e6 for p in per]}

    libs = mapped("libcufft")
    ident = {
        "cupy": cp.__version__,
        "python": sys.version.split()[0],
        "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
        "cuda_driver": cp.cuda.runtime.driverGetVersion(),
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "cufft_version": cufft.getVersion(),
        "libcufft_mapped": libs,
        "libcufft_real": os.path.realpath(libs[0]) if libs else "",
        "libcublas_mapped": mapped("libcublas"),
    }
    return ident, res


# --- comparison -------------------------------------------------------------

GO_LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$")


def parse_go(path):
    """Benchmark results of a go test output: {name: [{unit: value}]}, and the
    libcufft lines the fft benchmarks log."""
    res, libs = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            if "libcufft:" in line:
                libs.append(line.split("libcufft:", 1)[1].strip())
                continue
            m = GO_LINE.match(line.strip())
            if not m:
                continue
            vals = m.group(3).split()
            d = {}
            for i in range(0, len(vals) - 1, 2):
                try:
                    d[vals[i + 1]] = float(vals[i])
                except ValueError:
                    pass
            res.setdefault(m.group(1), []).append(d)
    return res, libs


def merge(dst, src):
    for k, v in src.items():
        dst.setdefault(k, []).extend(v)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec=".4f"):
    return "n/a" if x is None else format(x, spec)


def compare(d):
    go, go_libs = {}, []
    for p in sorted(glob.glob(os.path.join(d, "go-fft-[0-9]*.log")) + glob.glob(os.path.join(d, "go-gemm-[0-9]*.log"))):
        r, libs = parse_go(p)
        merge(go, r)
        go_libs += libs
    twins = os.path.join(d, "go-fft-twins.log")
    if os.path.exists(twins):  # the C twins, run once after the rounds
        r, _ = parse_go(twins)
        merge(go, {k: v for k, v in r.items() if not k.endswith("/cudago")})
    extra = {}
    for p in sorted(glob.glob(os.path.join(d, "go-fft-lib-*.log"))):
        r, libs = parse_go(p)
        extra[(libs or ["?"])[0]] = r
    cupy, ident = {}, None
    for p in sorted(glob.glob(os.path.join(d, "cupy-[0-9]*.json"))):
        with open(p) as f:
            j = json.load(f)
        ident = ident or j.get("identity")
        for k, v in j.get("cases", {}).items():
            cupy.setdefault(k, []).append(v)
    rounds = len(glob.glob(os.path.join(d, "cupy-[0-9]*.json")))

    def go_ms(name, res=go):
        return med([x.get("ms/transform") for x in res.get(name, [])])

    def cupy_ms(name):
        return med([x["ms"] for x in cupy.get(name, [])])

    print(f"# Issue 24: FFT and small GEMM, cudago against CuPy ({rounds} rounds, medians)\n")
    print("Libraries:")
    for lib in sorted(set(go_libs)):
        print(f"- cudago (pathfinder's choice): {lib}")
    if ident:
        print(f"- CuPy {ident.get('cupy')}: cufftGetVersion {ident.get('cufft_version')}, mapped "
              f"{', '.join(ident.get('libcufft_mapped') or ['none'])} (= {ident.get('libcufft_real')}); "
              f"CUDA runtime {ident.get('cuda_runtime')}, driver {ident.get('cuda_driver')}, {ident.get('device')}")
    same = ident and any(ident.get("libcufft_real", "?") in lib for lib in go_libs)
    print(f"- same libcufft file on both sides: {'yes' if same else 'NO'}\n")

    print("| case | cudago ms | C twin ms | C twin, CuPy's planning call | cudago, new output per call | CuPy ms | CuPy, plan into fixed out | cudago ÷ CuPy (speed) | target | met |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for name in ("FFTC2C2e24", "FFTC2C2D1024x16", "FFTR2C2e24"):
        g, c = go_ms(f"Benchmark{name}/cudago"), go_ms(f"Benchmark{name}/C")
        cpl, a = go_ms(f"Benchmark{name}/cupyplan"), go_ms(f"Benchmark{name}/alloc")
        cp_, cpp = cupy_ms(name), cupy_ms(name + "/plan")
        ratio = cp_ / g if g and cp_ else None
        met = "n/a" if ratio is None else ("yes" if ratio >= 1.0 else "no")
        print(f"| {name} | {fmt(g)} | {fmt(c)} | {fmt(cpl)} | {fmt(a)} | {fmt(cp_)} | {fmt(cpp)} | {fmt(ratio, '.3f')}× | ≥ 1.00× | {met} |")
    for lib, r in extra.items():
        cells = []
        for name in ("FFTC2C2e24", "FFTC2C2D1024x16", "FFTR2C2e24"):
            g, cp_ = go_ms(f"Benchmark{name}/cudago", r), cupy_ms(name)
            cells.append(f"{name} {fmt(g)} ms ({fmt(cp_ / g if g and cp_ else None, '.3f')}× CuPy)")
        print(f"\ncudago with {lib}: " + "; ".join(cells))

    print("\nPer round (ms): " + "; ".join(
        f"{name}: cudago {[round(x.get('ms/transform', 0), 4) for x in go.get(f'Benchmark{name}/cudago', [])]}"
        f" CuPy {[round(x['ms'], 4) for x in cupy.get(name, [])]}"
        for name in ("FFTC2C2e24", "FFTC2C2D1024x16", "FFTR2C2e24")))

    print("\n| small GEMM 64³ float32, CPU per call | ns | ÷ C loop of cublasSgemm | allocs | target | met |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    sm = go.get("BenchmarkGemmSmall64", [])

    def sm_row(label, v, allocs=None, target=""):
        x = med([r.get(f"{v}/C") for r in sm]) if v != "C" else 1.0
        met = ""
        if target:
            met = "n/a" if x is None or allocs is None else ("yes" if x <= 1.03 and allocs == 0 else "no")
        print(f"| {label} | {fmt(med([r.get(v + '-ns') for r in sm]), '.0f')} | {fmt(x, '.3f')}× | "
              f"{'' if allocs is None else fmt(allocs, '.0f')} | {target} | {met} |")

    sm_row("C loop of cublasSgemm (`C`)", "C")
    sm_row("blas.Gemm (`gemm`)", "gemm", max([r["gemm-allocs"] for r in sm if "gemm-allocs" in r], default=None), "≤ 1.03×, 0 allocs")
    sm_row("blas.Matmul (`matmul`)", "matmul", max([r["matmul-allocs"] for r in sm if "matmul-allocs" in r], default=None), "≤ 1.03×, 0 allocs")
    sm_row("Go loop of one-GEMM C calls (`C-percall`)", "C-percall")
    sm_row("C loop of cublasLtMatmul, Matmul's plan (`C-lt`)", "C-lt")
    sm_row("Go loop of one-matmul C calls (`C-lt-percall`)", "C-lt-percall")
    print(f"\nMatmul ÷ the C loop of its own cublasLtMatmul: {fmt(med([r.get('matmul/C-lt') for r in sm]), '.3f')}×; "
          f"an empty cgo call {fmt(med([r.get('cgo-ns') for r in sm]), '.0f')} ns; "
          f"CuPy's matmul, CPU per call (context): {fmt(med([r['us_per_call'] for r in cupy.get('GemmSmall64', [])]), '.2f')} µs")

    dmon = os.path.join(d, "dmon.log")
    if os.path.exists(dmon):
        clocks, power = [], []
        with open(dmon) as f:
            for line in f:
                p = line.split()
                if line.startswith("#") or len(p) < 8:
                    continue
                try:  # time gpu pwr gtemp mtemp mclk pclk
                    power.append(float(p[2]))
                    clocks.append(float(p[6]))
                except ValueError:
                    pass
        busy = [c for c, w in zip(clocks, power) if w > 150]
        if busy:
            print(f"\nSM clock under load (nvidia-smi dmon, samples above 150 W): min {min(busy):.0f}, median "
                  f"{statistics.median(busy):.0f}, max {max(busy):.0f} MHz; power max {max(power):.0f} W")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--compare", metavar="DIR")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare)
        return
    ident, res = measure(args.reps)
    print(f"bench_cupy_fft {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {json.dumps(ident)}\n")
    print("| case | CuPy | reps | work area |")
    print("| --- | ---: | --- | ---: |")
    for k, v in res.items():
        if "ms" in v:
            print(f"| {k} | {v['ms']:.4f} ms ({v['GB/s']:.0f} GB/s) | {[round(x, 4) for x in v['reps_ms']]} | {v['work_bytes']} |")
        else:
            print(f"| {k} (CPU per call) | {v['us_per_call']:.2f} µs | {[round(x, 2) for x in v['reps_us']]} | |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"identity": ident, "cases": res}, f, indent=1)


if __name__ == "__main__":
    main()
