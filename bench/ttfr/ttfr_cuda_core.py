#!/usr/bin/env python3
"""The cuda.core twin of bench/cmd/ttfr: compile saxpy with NVRTC for the
device's architecture and sm_75 (cubin) and PTX, build a fatbin with
nvFatbin, load it, run it, check it. Prints one JSON line like ttfr; the
imports are timed as their own phase."""
import time

START = time.perf_counter()
import json  # noqa: E402
import os  # noqa: E402

# bench/cmd/ttfr's kernel: the same file, so that both compile the same code.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmd", "ttfr", "saxpy.cu")) as f:
    SRC = f.read()


def main():
    phases = []
    last = [START]

    def mark(name):
        t = time.perf_counter()
        phases.append({"name": name, "ms": round((t - last[0]) * 1e3, 3)})
        last[0] = t

    import numpy as np
    from cuda.core import Device, LaunchConfig, ObjectCode, Program, ProgramOptions, launch
    from cuda.bindings import nvfatbin
    from cuda.bindings import driver as cu
    mark("imports")
    dev = Device(0)
    dev.set_current()
    arch = "".join(str(v) for v in dev.compute_capability)
    mark("device")
    h = nvfatbin.create([], 0)
    for target, a in (("cubin", f"sm_{arch}"), ("cubin", "sm_75"), ("ptx", f"compute_{arch}")):
        code = Program(SRC, code_type="c++", options=ProgramOptions(arch=a)).compile(target).code
        if target == "cubin":
            nvfatbin.add_cubin(h, code, len(code), a.split("_")[1], "saxpy")
        else:
            code = bytes(code) + b"\0"
            nvfatbin.add_ptx(h, code, len(code), a.split("_")[1], "saxpy", "")
        mark(f"compile {target} {a}")
    size = nvfatbin.size(h)
    fat = bytearray(size)
    nvfatbin.get(h, fat)
    nvfatbin.destroy(h)
    mark("fatbin")
    k = ObjectCode.from_fatbin(bytes(fat)).get_kernel("saxpy")
    mark("load")
    n = 128 * 32
    a = np.float32(5.1)
    x = np.arange(n, dtype=np.float32)
    y = 2 * x
    s = dev.create_stream()
    bx = dev.allocate(x.nbytes, stream=s)
    by = dev.allocate(y.nbytes, stream=s)
    bo = dev.allocate(x.nbytes, stream=s)
    s.sync()
    for b, h in ((bx, x), (by, y)):
        (err,) = cu.cuMemcpyHtoD(int(b.handle), h.ctypes.data, h.nbytes)
        assert err == cu.CUresult.CUDA_SUCCESS, err
    mark("alloc+copy in")
    launch(s, LaunchConfig(grid=32, block=128), k, a, bx, by, bo, np.uint64(n))
    s.sync()
    mark("launch+sync")
    out = np.empty(n, dtype=np.float32)
    (err,) = cu.cuMemcpyDtoH(out.ctypes.data, int(bo.handle), out.nbytes)
    assert err == cu.CUresult.CUDA_SUCCESS, err
    want = a * x + y
    if not np.allclose(out, want, rtol=1e-3):
        raise SystemExit("ttfr_cuda_core: wrong result")
    mark("copy out+check")
    print(json.dumps({"stack": "cuda.core", "total_ms": round((time.perf_counter() - START) * 1e3, 3), "phases": phases}))


main()
