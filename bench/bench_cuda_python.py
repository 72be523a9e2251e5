#!/usr/bin/env python3
"""The cases of cudagobench through cuda.core and CuPy, for comparison.

Run on the GPU machine:  python3 bench/bench_cuda_python.py [--reps 7] [--json FILE]
Prints one Markdown table (median per-operation CPU time over the reps);
a case a library cannot run is reported as "n/a" with the reason. --json
also writes the figures for cudagobench's chart (cudagobench -python FILE):
{"line": header, "results": {"cuda.core"|"CuPy": {case: {"us": µs per
operation} | {"gbps": GB/s} | {"error": why}}}}, a case the library has
no code for left out.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

# The kernels of bench.go's Source: the same file, so that both sides
# launch the same code.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")) as f:
    SRC = f.read()

N = 256
COPY = 256 << 20


CHUNK = 500  # as cudagobench's LaunchChunk


def timeit(fn, iters, reps):
    fn(max(1, iters // 10))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        el = fn(iters)
        if not isinstance(el, float):
            el = time.perf_counter() - t0
        ts.append(el / iters)
    return statistics.median(ts)


def chunked(body, sync):
    """Times body in chunks of CHUNK with untimed syncs between them, as
    cudagobench does for async launches: the CPU cost of the call, not the
    rate at which the GPU drains a full queue. Returns the seconds."""
    def f(n):
        el = 0.0
        done = 0
        while done < n:
            m = min(CHUNK, n - done)
            sync()
            t0 = time.perf_counter()
            body(m)
            el += time.perf_counter() - t0
            done += m
        sync()
        return el
    return f


def cuda_core_cases():
    try:
        from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    arch = "".join(str(x) for x in dev.compute_capability)
    mod = Program(SRC, code_type="c++", options=ProgramOptions(arch=f"sm_{arch}")).compile("cubin")
    k0, ks, km = mod.get_kernel("noargs"), mod.get_kernel("saxpy"), mod.get_kernel("mixed")
    one = LaunchConfig(grid=1, block=1)
    cfg = LaunchConfig(grid=1, block=N)
    x, y, out = (dev.allocate(N * 4, stream=s) for _ in range(3))
    cases = {}

    def empty_body(n):
        for _ in range(n):
            launch(s, one, k0)

    def saxpy_body(n):
        a, nn = np.float32(2), np.int32(N)
        for _ in range(n):
            launch(s, cfg, ks, a, x, y, out, nn)

    def mixed_body(n):
        args = (out, np.int32(1), np.float32(2), np.float64(3), np.int64(4), np.uint8(5), np.int16(6), x)
        for _ in range(n):
            launch(s, one, km, *args)

    empty, saxpy, mixed = (chunked(b, s.sync) for b in (empty_body, saxpy_body, mixed_body))

    def lsync(n):
        for _ in range(n):
            launch(s, one, k0)
            s.sync()

    def pool_body(n):
        for _ in range(n):
            b = dev.allocate(1 << 20, stream=s)
            b.close(s)

    pool = chunked(pool_body, s.sync)

    cases["LaunchEmpty"] = (empty, 20000)
    cases["LaunchSaxpy"] = (saxpy, 20000)
    cases["LaunchMixed8"] = (mixed, 20000)
    cases["LaunchSync"] = (lsync, 5000)
    cases["MemPool"] = (pool, 20000)
    try:
        gb = s.create_graph_builder()
        gb.begin_building()
        for _ in range(100):
            launch(gb, one, k0)
        gb.end_building()
        g = gb.complete()

        def graph(n):
            for _ in range(n):
                g.launch(s)
                s.sync()

        cases["Graph100"] = (graph, 300, 100)
    except Exception as e:  # noqa: BLE001
        cases["Graph100"] = e
    return cases


def cupy_cases():
    import cupy as cp
    import cupyx

    s = cp.cuda.Stream(non_blocking=False)
    mod = cp.RawModule(code=SRC, options=("-std=c++17",))
    k0, ks, km = mod.get_function("noargs"), mod.get_function("saxpy"), mod.get_function("mixed")
    x = cp.ones(N, dtype=cp.float32)
    y = cp.ones(N, dtype=cp.float32)
    out = cp.zeros(N, dtype=cp.float32)
    cases = {}

    def empty_body(n):
        with s:
            for _ in range(n):
                k0((1,), (1,), ())

    def saxpy_body(n):
        a, nn = np.float32(2), np.int32(N)
        with s:
            for _ in range(n):
                ks((1,), (N,), (a, x, y, out, nn))

    def mixed_body(n):
        args = (out, np.int32(1), np.float32(2), np.float64(3), np.int64(4), np.uint8(5), np.int16(6), x)
        with s:
            for _ in range(n):
                km((1,), (1,), args)

    empty, saxpy, mixed = (chunked(b, s.synchronize) for b in (empty_body, saxpy_body, mixed_body))

    def lsync(n):
        with s:
            for _ in range(n):
                k0((1,), (1,), ())
                s.synchronize()

    pool = cp.cuda.MemoryAsyncPool()

    def mpool_body(n):
        with s:
            for _ in range(n):
                m = pool.malloc(1 << 20)
                del m

    mpool = chunked(mpool_body, s.synchronize)

    d = cp.empty(COPY, dtype=cp.uint8)
    pageable = np.full(COPY, 7, dtype=np.uint8)
    pinned = cupyx.empty_pinned(COPY, dtype=np.uint8)
    pinned[:] = 3

    def h2d(src):
        def f(n):
            for _ in range(n):
                d.set(src)
            cp.cuda.Device().synchronize()
        return f

    def d2h(dst):
        def f(n):
            for _ in range(n):
                d.get(out=dst)
            cp.cuda.Device().synchronize()
        return f

    cases["LaunchEmpty"] = (empty, 20000)
    cases["LaunchSaxpy"] = (saxpy, 20000)
    cases["LaunchMixed8"] = (mixed, 20000)
    cases["LaunchSync"] = (lsync, 5000)
    cases["MemPool"] = (mpool, 20000)
    cases["CopyH2DPinned_256MiB"] = (h2d(pinned), 8, 1, COPY)
    cases["CopyH2DPageable_256MiB"] = (h2d(pageable), 4, 1, COPY)
    cases["CopyD2HPinned_256MiB"] = (d2h(pinned), 8, 1, COPY)
    cases["CopyD2HPageable_256MiB"] = (d2h(pageable), 4, 1, COPY)
    return cases


ORDER = ["LaunchEmpty", "LaunchSaxpy", "LaunchMixed8", "LaunchSync", "MemPool", "Graph100",
         "CopyH2DPinned_256MiB", "CopyH2DPageable_256MiB", "CopyD2HPinned_256MiB", "CopyD2HPageable_256MiB"]


def run(lib, make, reps):
    """Returns the table's cells and the figures for --json, by case."""
    res, figs = {}, {}
    try:
        cases = make()
    except Exception as e:  # noqa: BLE001
        msg = f"n/a ({type(e).__name__}: {e})"
        return {c: msg for c in ORDER}, {c: {"error": msg} for c in ORDER}
    for name in ORDER:
        c = cases.get(name)
        if c is None:
            res[name] = "–"
            continue
        if isinstance(c, Exception):
            res[name] = f"n/a ({type(c).__name__})"
            figs[name] = {"error": res[name]}
            continue
        fn, iters = c[0], c[1]
        per = c[2] if len(c) > 2 else 1
        nbytes = c[3] if len(c) > 3 else 0
        try:
            t = timeit(fn, iters, reps)
        except Exception as e:  # noqa: BLE001
            res[name] = f"n/a ({type(e).__name__}: {str(e)[:60]})"
            figs[name] = {"error": res[name]}
            continue
        figs[name] = {"gbps": nbytes / t / 1e9} if nbytes else {"us": t / per * 1e6}
        res[name] = f"{nbytes / t / 1e9:.1f} GB/s" if nbytes else f"{t / per * 1e6:.2f} µs"
        print(f"{lib:10s} {name:24s} {res[name]}", file=sys.stderr)
    return res, figs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON for cudagobench -python")
    args = ap.parse_args()
    versions = []
    for mod in ("cuda.core", "cupy", "cuda.bindings"):
        try:
            m = __import__(mod, fromlist=["__version__"])
            versions.append(f"{mod} {getattr(m, '__version__', '?')}")
        except Exception:  # noqa: BLE001
            pass
    cc, ccf = run("cuda.core", cuda_core_cases, args.reps)
    cu, cuf = run("cupy", cupy_cases, args.reps)
    line = (f"bench_cuda_python {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: Python {sys.version.split()[0]}, "
            + ", ".join(versions) + f", {args.reps} reps (median)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"line": line, "results": {"cuda.core": ccf, "CuPy": cuf}}, f, indent=2)
            f.write("\n")
    print(line + "\n")
    print("| case | cuda.core | CuPy |")
    print("| --- | ---: | ---: |")
    for name in ORDER:
        print(f"| {name} | {cc.get(name, '–')} | {cu.get(name, '–')} |")


if __name__ == "__main__":
    main()
