"""The timing loops that the Python twins of cudago's Go benchmarks share
(bench_cupy_fft.py, bench_cupy_math.py, bench_torch_gemm.py), so that each
script times a case exactly as the others, and the Go side, do.

The scripts import it from their own folder: `python3 bench/x.py` puts
bench/ first on sys.path.
"""
import time


def cupy_event_times(cp, fn, iters, reps, warmup=3):
    """Seconds per call of fn, one figure a rep: warmup calls and a device
    sync (none for warmup=0: the caller has synced), then per rep iters
    back-to-back calls between two CUDA events."""
    if warmup:
        for _ in range(warmup):
            fn()
        cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, end) / 1e3 / iters)
    return ts


def torch_event_times(torch, fn, iters, reps, warmup=3):
    """cupy_event_times through PyTorch's CUDA events."""
    if warmup:
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        ts.append(start.elapsed_time(end) / 1e3 / iters)
    return ts


def cpu_per_call(sync, fn, reps, chunks=20, chunk=500):
    """CPU seconds per call of fn, one figure a rep, timed as cudagobench
    times launches: chunks of `chunk` calls with untimed syncs between
    them, so that what is timed is the call, not a full queue draining.
    The loop's own cost and fn's frame (a lambda around the call, which
    an inline loop would not pay) are timed on an empty function and
    taken off."""
    empty = lambda: None  # noqa: E731 (the same frame as fn's)
    t0 = time.perf_counter()
    for _ in range(chunks * chunk):
        empty()
    frame = (time.perf_counter() - t0) / (chunks * chunk)
    per = []
    for _ in range(reps):
        el, n = 0.0, 0
        for _ in range(chunks):
            sync()
            t0 = time.perf_counter()
            for _ in range(chunk):
                fn()
            el += time.perf_counter() - t0
            n += chunk
        per.append(el / n - frame)
    sync()
    return per
