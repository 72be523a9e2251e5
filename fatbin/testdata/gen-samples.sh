#!/bin/bash
# Generates sample fat binaries and the matching cuobjdump listings.
# Usage: gen-samples.sh OUTDIR   (needs nvcc, cuobjdump, fatbinary on PATH)
set -u
out=${1:?outdir}
mkdir -p "$out" && cd "$out" || exit 1
log() { echo "+ $*" >>cmds.log; "$@" >>cmds.log 2>&1; echo "rc=$?" >>cmds.log; }
nvcc --version >version.txt 2>&1
nvcc --help >nvcc_help.txt 2>&1
fatbinary --help >fatbinary_help.txt 2>&1
cuobjdump --help >cuobjdump_help.txt 2>&1
cat >x.cu <<'CU'
__device__ int dv;
__global__ void k(float *a, float b) { a[threadIdx.x] *= b + dv; }
int main() { k<<<1, 1>>>(0, 1.0f); return 0; }
CU
cat >y.cu <<'CU'
extern __device__ int dv;
__global__ void k2(int *a) { a[threadIdx.x] = dv; }
CU
A=${ARCHS:-"75 80 90"}
G=""; for a in $A; do G="$G -gencode arch=compute_$a,code=sm_$a"; done
last=${A##* }
G="$G -gencode arch=compute_$last,code=compute_$last"
log nvcc -fatbin $G x.cu -o plain.fatbin
for m in none default size speed balance; do log nvcc -fatbin $G --compress-mode=$m x.cu -o cm_$m.fatbin; done
log nvcc -fatbin $G -Xfatbin -compress-all x.cu -o compall.fatbin
log nvcc -fatbin $G -Xfatbin -compress=false x.cu -o nocomp.fatbin
log nvcc -fatbin -G -gencode arch=compute_$last,code=[sm_$last,compute_$last] x.cu -o debug.fatbin
log nvcc -fatbin -lineinfo -Xptxas -v,-O2 -gencode arch=compute_$last,code=[sm_$last,compute_$last] x.cu -o opts.fatbin
log nvcc -fatbin -gencode arch=compute_$last,code=lto_$last x.cu -o lto.fatbin
log nvcc -fatbin -rdc=true -gencode arch=compute_$last,code=[sm_$last,lto_$last,compute_$last] x.cu -o rdc.fatbin
log nvcc -c $G x.cu -o x.o
log nvcc -c -rdc=true $G x.cu -o xrdc.o
log nvcc -c -rdc=true $G y.cu -o yrdc.o
log nvcc $G x.cu -o a.out
log nvcc -rdc=true $G x.cu y.cu -o b.out
log nvcc -shared -Xcompiler -fPIC $G x.cu -o libx.so
log nvcc -cubin -arch=sm_$last x.cu -o x.cubin
log nvcc -ptx -arch=sm_$last x.cu -o x.ptx
log fatbinary --create=fb1.fatbin -64 --image3=kind=elf,sm=$last,file=x.cubin --image3=kind=ptx,sm=$last,file=x.ptx
log fatbinary --create=fb2.fatbin -64 --compress-all --image3=kind=elf,sm=$last,file=x.cubin --image3=kind=ptx,sm=$last,file=x.ptx
log fatbinary --create=fb3.fatbin -64 --ident=hello.cu --image3=kind=elf,sm=$last,file=x.cubin --image3=kind=ptx,sm=$last,file=x.ptx
for f in *.fatbin *.o *.out *.so; do
  [ -f "$f" ] || continue
  cuobjdump -lelf -lptx "$f" >"$f.list" 2>&1; echo "rc=$?" >>"$f.list"
  cuobjdump "$f" >"$f.dump" 2>&1
  mkdir -p "x_$f" && (cd "x_$f" && cuobjdump -xelf all -xptx all "../$f" >../"$f.xlog" 2>&1; ls -la >>../"$f.xlog")
done
# LTO-IR via --keep, then nvFatbin samples when the library is there.
mkdir -p keep && (cd keep && nvcc -dc -dlto -arch=sm_$last --keep ../x.cu -o x.o >/dev/null 2>&1; ls -la) >keep.ls 2>&1
lto=$(ls keep/*.ltoir keep/*lto* 2>/dev/null | head -1); [ -n "$lto" ] || lto=-
src=${NVFATBIN_SRC:-}
if [ -n "$src" ] && [ -n "${CUDA_HOME:-}" ]; then
  log gcc -o nvfb "$src" -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" -lnvfatbin -Wl,-rpath,"$CUDA_HOME/lib64"
  log ./nvfb nvfb_plain.fatbin $last x.cubin x.ptx "$lto" -64
  log ./nvfb nvfb_comp.fatbin $last x.cubin x.ptx "$lto" -64 -compress=true -compress-all
  log ./nvfb nvfb_size.fatbin $last x.cubin x.ptx "$lto" -64 -compress-all -compress-mode=size
  log ./nvfb nvfb_speed.fatbin $last x.cubin x.ptx "$lto" -64 -compress-all -compress-mode=speed
  log ./nvfb nvfb_host.fatbin $last x.cubin x.ptx "$lto" -64 -host=windows
  for f in nvfb_*.fatbin; do
    [ -f "$f" ] || continue
    cuobjdump -lelf -lptx "$f" >"$f.list" 2>&1; echo "rc=$?" >>"$f.list"
    cuobjdump "$f" >"$f.dump" 2>&1
    mkdir -p "x_$f" && (cd "x_$f" && cuobjdump -xelf all -xptx all "../$f" >../"$f.xlog" 2>&1; ls -la >>../"$f.xlog")
  done
fi
