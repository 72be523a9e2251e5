#!/usr/bin/env python3
"""Cross-device copies through PyTorch, for core's BenchmarkPeerCopy.

Run on a machine with 2 GPUs:  python3 bench/bench_torch_peer.py
Copies 64 MiB and 1 GiB between cuda:0 and cuda:1, both ways, with
dst.copy_(src) (PyTorch enables peer access itself), and prints GB/s two
ways, as the Go rows are timed: "sync" waits after every copy (as
Buffer.CopyFrom does), "async" queues the copies back to back and waits
once at the end (as CopyFromAsync in a loop). Wall-clock time, median of
5 reps of about 0.5 s each, after a warm-up.
"""
import statistics
import time

import torch


def gbps(n, fn, sync_each):
    fn()
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    # iterations for about half a second
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    iters = max(3, int(0.5 / max(time.perf_counter() - t0, 1e-6)))
    rates = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
            if sync_each:
                torch.cuda.synchronize(0)
                torch.cuda.synchronize(1)
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)
        rates.append(n * iters / (time.perf_counter() - t0) / 1e9)
    return statistics.median(rates)


def main():
    assert torch.cuda.device_count() >= 2, "needs 2 GPUs"
    print("| size | direction | PyTorch copy_ sync (GB/s) | PyTorch copy_ async (GB/s) |")
    print("| --- | --- | ---: | ---: |")
    for n in (64 << 20, 1 << 30):
        for a, b in ((0, 1), (1, 0)):
            src = torch.ones(n, dtype=torch.uint8, device=f"cuda:{a}")
            dst = torch.empty(n, dtype=torch.uint8, device=f"cuda:{b}")

            def copy():
                with torch.cuda.device(b):
                    dst.copy_(src, non_blocking=True)

            s = gbps(n, copy, True)
            q = gbps(n, copy, False)
            assert torch.equal(dst.cpu()[:4096], src.cpu()[:4096])
            print(f"| {n >> 20} MiB | {a}to{b} | {s:.1f} | {q:.1f} |", flush=True)
            del src, dst
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
