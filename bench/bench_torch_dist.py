#!/usr/bin/env python3
"""bench/cmd/nccltest's measurements through torch.distributed over NCCL.

Run on the GPU machine, one process per GPU, beside nccltest:

    torchrun --nproc-per-node 4 bench/bench_torch_dist.py [--bytes 1GiB] [--iters 50] ...
    torchrun --nproc-per-node 4 --no-python .gpu/bin/nccltest -check=false

Same sizes, iteration counts and formulas as nccltest, and the same
RESULT lines (impl=torch), which rank 0 prints:

    RESULT impl=torch op=allreduce dtype=float32 bytes=1073741824 ranks=4 iters=50 time_us=... algbw_GBps=... busbw_GBps=...
    RESULT impl=torch op=allreduce_latency dtype=float32 bytes=8 ranks=4 iters=1000 median_us=... p10_us=... p90_us=...

Bandwidth (allreduce, allgather, reducescatter, alltoall, float32): after
--warmup calls, --iters calls back to back, timed to the end of the GPU
work; time is the mean per call, averaged over the ranks. bytes is the
largest tensor's size (all_gather_into_tensor's output, reduce_scatter_tensor's
input, all_to_all_single's input and output); algbw = bytes / time, busbw =
algbw x 2(n-1)/n for all_reduce and x (n-1)/n for the others (nccl-tests).
all_reduce is in place (torch has no other form); NCCL runs both alike.
Latency: --lat-iters all_reduce calls of 8 bytes, each followed by a sync
of the current stream and timed alone, after --lat-warmup; median, p10 and
p90, each averaged over the ranks. Each operation's result is checked once
before it is timed (CHECK lines), so that a broken setup cannot pass as fast.
"""
import argparse
import os
import re
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # as package nccl does

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

UNITS = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 1 << 30), ("MB", 1 << 20),
         ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)]
OPS = ("allreduce", "allgather", "reducescatter", "alltoall")


def parse_bytes(s):
    t, mult = s.strip(), 1
    for suffix, m in UNITS:
        if t.endswith(suffix):
            t, mult = t[: -len(suffix)].strip(), m
            break
    n = int(t)
    if n < 1:
        raise ValueError(f"--bytes {s!r}")
    return n * mult


def bus_factor(op, n):
    f = (n - 1) / n
    return 2 * f if op == "allreduce" else f


def nccl_library():
    """The libnccl this process mapped, from /proc/self/maps."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                m = re.search(r"(/\S*libnccl\.so\S*)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return "?"


class Bench:
    def __init__(self, args):
        self.args = args
        self.local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(self.local)
        self.dev = torch.device("cuda", self.local)
        try:
            dist.init_process_group("nccl", device_id=self.dev)
        except TypeError:  # torch before 2.3
            dist.init_process_group("nccl")
        self.rank, self.n = dist.get_rank(), dist.get_world_size()
        self.ok = True

    def mean(self, vals):
        t = torch.tensor(vals, dtype=torch.float64, device=self.dev)
        dist.all_reduce(t)
        return (t / self.n).tolist()

    def sync(self):
        torch.cuda.current_stream().synchronize()

    def say(self, line):
        if self.rank == 0:
            print(line, flush=True)

    def check(self, what, got, want):
        good = torch.equal(got, want)
        flags = torch.tensor([0 if good else 1], device=self.dev)
        dist.all_reduce(flags)
        bad = int(flags.item())
        self.say(f"CHECK impl=torch op={what} ranks_failed={bad}")
        if bad:
            self.ok = False

    def tensors(self, op, size):
        """The op's input and output tensors (float32), and the call."""
        n = self.n
        count = max(size // 4, 1) if op == "allreduce" else max(size // 4 // n, 1)
        f32 = dict(dtype=torch.float32, device=self.dev)
        if op == "allreduce":
            x = torch.empty(count, **f32)
            return x, x, count * 4, lambda: dist.all_reduce(x)
        if op == "allgather":
            inp, out = torch.empty(count, **f32), torch.empty(count * n, **f32)
            return inp, out, count * n * 4, lambda: dist.all_gather_into_tensor(out, inp)
        if op == "reducescatter":
            inp, out = torch.empty(count * n, **f32), torch.empty(count, **f32)
            return inp, out, count * n * 4, lambda: dist.reduce_scatter_tensor(out, inp)
        inp, out = torch.empty(count * n, **f32), torch.empty(count * n, **f32)
        return inp, out, count * n * 4, lambda: dist.all_to_all_single(out, inp)

    def check_op(self, op, inp, out, call):
        """Runs call once on known values (rank q's element j is
        (j + 3q) % 17: small integers, whose sums are exact in any order)
        and checks the result on every rank."""
        n, r, dev = self.n, self.rank, self.dev

        def val(q, j):
            return ((j + 3 * q) % 17).float()

        def idx(m, start=0):
            return torch.arange(start, start + m, device=dev, dtype=torch.int32)

        inp.copy_(val(r, idx(inp.numel())))
        call()
        self.sync()
        if op in ("allreduce", "reducescatter"):
            j = idx(out.numel(), r * out.numel() if op == "reducescatter" else 0)
            want = torch.zeros_like(out)
            for q in range(n):
                want += val(q, j)
        elif op == "allgather":
            k = idx(out.numel())
            want = val(k // inp.numel(), k % inp.numel())
        else:  # alltoall: block q of out is block r of rank q's input
            c = out.numel() // n
            k = idx(out.numel())
            want = val(k // c, r * c + k % c)
        self.check(op, out, want)
        inp.zero_()

    def bandwidth(self, op):
        a = self.args
        inp, out, nbytes, call = self.tensors(op, a.bytes)
        self.check_op(op, inp, out, call)
        for _ in range(a.warmup):
            call()
        self.sync()
        t0 = time.perf_counter()
        for _ in range(a.iters):
            call()
        self.sync()
        per = (time.perf_counter() - t0) / a.iters
        (t,) = self.mean([per])
        algbw = nbytes / t / 1e9
        self.say(f"RESULT impl=torch op={op} dtype=float32 bytes={nbytes} ranks={self.n} iters={a.iters} "
                 f"time_us={t * 1e6:.1f} algbw_GBps={algbw:.2f} busbw_GBps={algbw * bus_factor(op, self.n):.2f}")
        del inp, out

    def latency(self):
        a = self.args
        x = torch.zeros(2, dtype=torch.float32, device=self.dev)
        for _ in range(a.lat_warmup):
            dist.all_reduce(x)
            self.sync()
        ts = []
        for _ in range(a.lat_iters):
            t0 = time.perf_counter()
            dist.all_reduce(x)
            self.sync()
            ts.append(time.perf_counter() - t0)
        ts.sort()

        def q(p):
            return ts[min(int(p * len(ts)), len(ts) - 1)]

        med, p10, p90 = self.mean([q(0.5), q(0.1), q(0.9)])
        self.say(f"RESULT impl=torch op=allreduce_latency dtype=float32 bytes=8 ranks={self.n} iters={a.lat_iters} "
                 f"median_us={med * 1e6:.2f} p10_us={p10 * 1e6:.2f} p90_us={p90 * 1e6:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=parse_bytes, default=1 << 30, help="size of the bandwidth measurements")
    ap.add_argument("--ops", default=",".join(OPS), help="operations to measure")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--lat-iters", type=int, default=1000)
    ap.add_argument("--lat-warmup", type=int, default=100)
    args = ap.parse_args()
    ops = [o for o in args.ops.split(",") if o]
    for o in ops:
        if o not in OPS:
            ap.error(f"--ops: {o!r} is not one of {', '.join(OPS)}")
    b = Bench(args)
    v = torch.cuda.nccl.version()
    v = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    b.say(f"bench_torch_dist: {b.n} ranks, torch {torch.__version__}, NCCL {v} ({nccl_library()}), "
          f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}, {torch.cuda.get_device_name(b.dev)}")
    for op in ops:
        b.bandwidth(op)
    b.latency()
    dist.destroy_process_group()
    sys.exit(0 if b.ok else 1)


if __name__ == "__main__":
    main()
