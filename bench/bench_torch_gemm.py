#!/usr/bin/env python3
"""Issue 24's GEMM rows through CuPy and PyTorch, to compare with blas's
BenchmarkGEMM (blas/bench_gemm_test.go): the same cases, shapes and inputs.

  float16, bfloat16, float32, float64 GEMM, C = A @ B row-major, at
  8192x8192x8192 and 4096x16384x4096 (m x n x k), CuPy and PyTorch;
  float32 without TF32 on both sides (torch.backends.cuda.matmul.allow_tf32
  False, fp32_precision "ieee"; CUPY_TF32 unset);
  bfloat16 GEMM + bias + GELU at 8192^3: torch._addmm_activation(bias, a, b,
  use_gelu=True) (cuBLASLt's fused GELU_BIAS epilogue) and the unfused
  gelu(a @ b + bias, approximate="tanh");
  FP8 E4M3 at 8192^3 with a bfloat16 result: torch._scaled_mm(a, b,
  scale_a, scale_b, out_dtype=torch.bfloat16), b column-major, scales 1.

Inputs: "const" are ones on both sides, "random" uniform in [-1, 1)
(8192^3 only), drawn in float64 for float64 (every mantissa bit random, as
the Go side's) and in float32 for the other types. Each case: 3 warm-up calls, then --iters calls (default 20)
between two CUDA events, --reps times (median), as the Go side times 20
calls back to back (-test.benchtime 20x).

Run on the GPU machine:
  /opt/torch/.venv/bin/python bench/bench_torch_gemm.py --json py.json
and to compare with the Go benchmarks' output (no GPU needed):
  python3 bench/bench_torch_gemm.py --compare --go go.txt --py py.json [--tune tune.txt]
scripts/gpu/gemm-bench.sh runs all of it.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import gputime

SHAPES = (("8192x8192x8192", 8192, 8192, 8192), ("4096x16384x4096", 4096, 16384, 4096))
DTYPES = ("float16", "bfloat16", "float32", "float64")


def shape_inputs():
    """(tag, m, n, k, random) of every shape and kind of input, in the Go
    benchmark's order: random inputs at 8192^3 only. tag is "shape/inputs"."""
    for shape, m, n, k in SHAPES:
        for random in (False, True):
            if random and m != 8192:
                continue
            yield f"{shape}/{'random' if random else 'const'}", m, n, k, random


def case_names():
    """Every case, in the Go benchmark's order."""
    out = []
    for tag, m, _, _, _ in shape_inputs():
        shape, inputs = tag.split("/")
        for c in ("float16", "bfloat16", "float32", "float32-sgemm", "float64"):
            out.append((c, shape, inputs))
        if m == 8192:
            out.append(("bfloat16-bias-gelu", shape, inputs))
            out.append(("fp8-e4m3-bf16", shape, inputs))
    return out


def tflops(m, n, k, seconds):
    return 2 * m * n * k / seconds / 1e12


ONLY = None  # --only: a regular expression the cases run must match


def wanted(case):
    """Whether case ("float32/8192x8192x8192/const", ...) is to run."""
    return ONLY is None or re.search(ONLY, case) is not None


def plain_gemm(res, side, name, tag, mnk, run, free):
    """Records one plain GEMM case of one side ("torch", "cupy") in res:
    run() makes the inputs and returns the seconds per call, free() gives
    the memory back. float32 is also the float32-sgemm case (the Go side's
    cublasSgemm), and a failure is recorded as the side's error."""
    if not wanted(f"{name}/{tag}"):
        return
    try:
        t = run()
        res.setdefault(f"{name}/{tag}", {})[side] = tflops(*mnk, t)
        if name == "float32":
            res.setdefault(f"float32-sgemm/{tag}", {})[side] = tflops(*mnk, t)
    except Exception as e:  # noqa: BLE001
        res.setdefault(f"{name}/{tag}", {})[f"{side}_error"] = f"{type(e).__name__}: {str(e)[:120]}"
    finally:
        free()


def run_torch(args, res):
    import torch

    # No TF32 for float32: the new API where torch has it (mixing it with
    # the legacy allow_tf32 may be refused), else the legacy one.
    mm = torch.backends.cuda.matmul
    try:
        mm.fp32_precision = "ieee"
    except Exception:  # noqa: BLE001 (older torch)
        mm.allow_tf32 = False
    dev = "cuda"

    def timed(fn):
        return statistics.median(gputime.torch_event_times(torch, fn, args.iters, args.reps))

    def inputs(shape, dt, random):
        if random:
            # float64 drawn as float64: widened float32 values (24 random
            # bits of 53) draw less power on the FP64 units than the Go
            # side's full-precision ones, and run faster.
            wide = torch.float64 if dt == torch.float64 else torch.float32
            return torch.rand(shape, device=dev, dtype=wide).mul_(2).sub_(1).to(dt)
        return torch.ones(shape, device=dev, dtype=dt)

    def matmul(m, n, k, dt, random):
        a, b = inputs((m, k), dt, random), inputs((k, n), dt, random)
        c = torch.empty((m, n), device=dev, dtype=dt)
        return timed(lambda: torch.matmul(a, b, out=c))

    for tag, m, n, k, random in shape_inputs():
        for name in DTYPES:
            dt = getattr(torch, name)
            plain_gemm(res, "torch", name, tag, (m, n, k), lambda: matmul(m, n, k, dt, random), torch.cuda.empty_cache)
        if m == 8192 and wanted(f"bfloat16-bias-gelu/{tag}"):
            try:
                a, b = inputs((m, k), torch.bfloat16, random), inputs((k, n), torch.bfloat16, random)
                bias = inputs((n,), torch.bfloat16, random)
                r = res.setdefault(f"bfloat16-bias-gelu/{tag}", {})
                r["torch_fused"] = tflops(m, n, k, timed(lambda: torch._addmm_activation(bias, a, b, use_gelu=True)))
                gelu = torch.nn.functional.gelu
                r["torch_unfused"] = tflops(m, n, k, timed(lambda: gelu(a @ b + bias, approximate="tanh")))
            except Exception as e:  # noqa: BLE001
                res.setdefault(f"bfloat16-bias-gelu/{tag}", {})["torch_error"] = f"{type(e).__name__}: {str(e)[:120]}"
            finally:
                a = b = bias = None
                torch.cuda.empty_cache()
        if m == 8192 and wanted(f"fp8-e4m3-bf16/{tag}"):
            try:
                a = inputs((m, k), torch.float32, random).to(torch.float8_e4m3fn)
                bt = inputs((n, k), torch.float32, random).to(torch.float8_e4m3fn)
                b = bt.t()  # k x n, column-major, as _scaled_mm wants mat2
                one = torch.ones((), device=dev, dtype=torch.float32)
                r = res.setdefault(f"fp8-e4m3-bf16/{tag}", {})
                try:
                    t = timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                    r["torch_api"] = "torch._scaled_mm"
                except Exception as e:  # noqa: BLE001 (the v2 API, where _scaled_mm is gone)
                    F = torch.nn.functional
                    tw = F.ScalingType.Tensorwise
                    t = timed(lambda: F.scaled_mm(a, b, one, tw, one, tw, output_dtype=torch.bfloat16))
                    r["torch_api"] = f"torch.nn.functional.scaled_mm (_scaled_mm: {type(e).__name__}: {str(e)[:80]})"
                r["torch"] = tflops(m, n, k, t)
            except Exception as e:  # noqa: BLE001
                res.setdefault(f"fp8-e4m3-bf16/{tag}", {})["torch_error"] = f"{type(e).__name__}: {str(e)[:120]}"
            finally:
                a = b = bt = None
                torch.cuda.empty_cache()
    return (f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}; reduced-precision split-K reductions allowed: "
            f"fp16 {mm.allow_fp16_reduced_precision_reduction}, bf16 {mm.allow_bf16_reduced_precision_reduction})")


def run_cupy(args, res):
    os.environ.pop("CUPY_TF32", None)  # no TF32 for float32
    import cupy as cp

    def timed(fn):
        return statistics.median(gputime.cupy_event_times(cp, fn, args.iters, args.reps))

    def inputs(shape, dt, random):
        if random:
            wide = cp.float64 if dt == cp.float64 else cp.float32  # as torch's inputs
            return (cp.random.random(shape, dtype=wide) * 2 - 1).astype(dt)
        return cp.ones(shape, dtype=dt)

    def matmul(m, n, k, dt, random):
        a, b = inputs((m, k), dt, random), inputs((k, n), dt, random)
        c = cp.empty((m, n), dtype=dt)
        return timed(lambda: cp.matmul(a, b, out=c))

    for tag, m, n, k, random in shape_inputs():
        for name in ("float16", "float32", "float64"):
            dt = getattr(cp, name)
            plain_gemm(res, "cupy", name, tag, (m, n, k), lambda: matmul(m, n, k, dt, random),
                       cp.get_default_memory_pool().free_all_blocks)
    return f"CuPy {cp.__version__}"


GO_LINE = re.compile(r"^BenchmarkGEMM/(?P<name>\S+?)-\d+\s+(?P<n>\d+)\s+(?P<ns>[\d.]+) ns/op\s+(?P<tf>[\d.]+) TFLOP/s")
TUNE_LINE = re.compile(r"^BenchmarkMatmulTuneFirstUse/(?P<case>[^/\s]+)/(?P<mode>\S+?)-\d+\s+(?P<n>\d+)\s+(?P<ns>[\d.]+) ns/op(?P<rest>.*)$")


def fmt(v, d=1):
    return "–" if v is None else f"{v:.{d}f}"


def times(ratio):
    return "–" if ratio is None else f"{ratio:.3f}×"


def compare(args):
    go = {}
    with open(args.go) as f:
        for line in f:
            mt = GO_LINE.match(line)
            if mt:
                go.setdefault(mt["name"], []).append(float(mt["tf"]))
    go = {k: statistics.median(v) for k, v in go.items()}  # -test.count 3, as Python's 3 reps
    with open(args.py) as f:
        py = json.load(f)
    cases = py["cases"]
    print(f"GEMM, cudago against CuPy and PyTorch in the same device session: {py.get('meta', '')}\n")
    print("| case | shape | inputs | cudago TFLOP/s | CuPy | PyTorch | cudago ÷ best | target | met |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    for c, shape, inputs in case_names():
        key = f"{c}/{shape}/{inputs}"
        g, r = go.get(key), cases.get(key, {})
        row = f"| {c} | {shape} | {inputs} | {fmt(g)} "
        if c == "bfloat16-bias-gelu":
            for label, other, target in (("fused _addmm_activation", r.get("torch_fused"), 1.0),
                                         ("unfused gelu(a@b+bias)", r.get("torch_unfused"), 1.2)):
                ratio = g / other if g and other else None
                met = "–" if ratio is None else ("yes" if ratio >= target else "no")
                print(f"| {c} vs {label} | {shape} | {inputs} | {fmt(g)} | – | {fmt(other)} | {times(ratio)} | ≥ {target:.2f}× | {met} |")
            continue
        if c == "fp8-e4m3-bf16":
            other = r.get("torch")
            ratio = g / other if g and other else None
            met = "–" if ratio is None else ("yes" if ratio >= 0.97 else "no")
            print(row + f"| – | {fmt(other)} (_scaled_mm) | {times(ratio)} | ≥ 0.97× _scaled_mm | {met} |")
            bf = go.get(f"bfloat16/{shape}/{inputs}")
            ratio = g / bf if g and bf else None
            met = "–" if ratio is None else ("yes" if ratio >= 1.7 else "no")
            print(f"| {c} vs cudago bfloat16 | {shape} | {inputs} | {fmt(g)} | – | {fmt(bf)} (cudago bf16) | {times(ratio)} | ≥ 1.70× | {met} |")
            continue
        cu, to = r.get("cupy"), r.get("torch")
        best = max([v for v in (cu, to) if v is not None], default=None)
        ratio = g / best if g and best else None
        met = "–" if ratio is None else ("yes" if ratio >= 1.0 else "no")
        print(row + f"| {fmt(cu)} | {fmt(to)} | {times(ratio)} | ≥ 1.00× | {met} |")
    for shape in sorted({s for _, s, i in case_names() if i == "random"}):
        f, w = go.get(f"float64-f32values/{shape}/random"), go.get(f"float64/{shape}/random")
        if f and w:
            print(f"\nfloat64 DGEMM {shape} on float32 values widened (24 random mantissa bits): "
                  f"{fmt(f)} TFLOP/s against {fmt(w)} on full float64 random values ({times(f / w)})")
    errs = {k: {kk: vv for kk, vv in v.items() if kk.endswith(("_error", "_api"))} for k, v in cases.items()}
    for k, v in errs.items():
        for kk, vv in v.items():
            print(f"\n{k} {kk}: {vv}")
    if args.tune:
        tune = {}
        with open(args.tune) as f:
            for line in f:
                mt = TUNE_LINE.match(line)
                if not mt:
                    continue
                extra = dict((u, float(v)) for v, u in re.findall(r"([\d.]+) (\S+)", mt["rest"]))
                tune.setdefault(mt["case"], {})[mt["mode"]] = (float(mt["ns"]), extra)
        if tune:
            print("\nFirst use of a shape (BenchmarkMatmulTuneFirstUse: descriptors, heuristic and, tuned, the timing; stream drained):\n")
            print("| shape | tuned | candidates | TuneOff (heuristic only) | a known shape, per call |")
            print("| --- | ---: | ---: | ---: | ---: |")
            for case, modes in tune.items():
                t, te = modes.get("tuned", (None, {}))
                o, _ = modes.get("TuneOff", (None, {}))
                again = te.get("again-ns/op")
                print(f"| {case} | {fmt(t and t / 1e6, 2)} ms | {fmt(te.get('candidates'), 0)} | {fmt(o and o / 1e6, 2)} ms | {fmt(again and again / 1e6, 3)} ms |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--compare", action="store_true", help="print the comparison table of --go and --py")
    ap.add_argument("--go", help="BenchmarkGEMM's output")
    ap.add_argument("--py", help="this script's --json")
    ap.add_argument("--tune", help="BenchmarkMatmulTuneFirstUse's output")
    ap.add_argument("--only", help="run only the cases this regular expression matches (e.g. 'float32/4096')")
    args = ap.parse_args()
    global ONLY
    ONLY = args.only
    if args.compare:
        compare(args)
        return
    res, meta = {}, [time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), f"Python {sys.version.split()[0]}"]
    for f in (run_cupy, run_torch):
        try:
            meta.append(f(args, res))
        except Exception as e:  # noqa: BLE001
            meta.append(f"{f.__name__}: {type(e).__name__}: {str(e)[:120]}")
    meta.append(f"{args.iters} calls x {args.reps} reps (median)")
    out = {"meta": ", ".join(meta), "cases": res}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
