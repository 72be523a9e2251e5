#!/bin/bash
# Edge-case samples: naming, flag bits, arch suffixes. Usage: gen-edge.sh OUTDIR
set -u
out=${1:?outdir}
mkdir -p "$out" && cd "$out" || exit 1
log() { echo "+ $*" >>cmds.log; "$@" >>cmds.log 2>&1; echo "rc=$?" >>cmds.log; }
cat >x.cu <<'CU'
__global__ void k(float *a, float b) { a[threadIdx.x] *= b; }
CU
last=${LAST:-90}
nvcc -cubin -arch=sm_$last x.cu -o x.cubin
nvcc -ptx -arch=sm_$last x.cu -o x.ptx
E="--image3=kind=elf,sm=$last,file=x.cubin"
P="--image3=kind=ptx,sm=$last,file=x.ptx"
log fatbinary --create=f32.fatbin -32 $E $P
log fatbinary --create=fg.fatbin -64 -g $E $P
log fatbinary --create=flink.fatbin -64 --link $E $P
log fatbinary --create=fc.fatbin -64 -c $E $P
log fatbinary --create=fcmd.fatbin -64 --cmdline=-O1 $E $P
log fatbinary --create=fident1.fatbin -64 --ident=/some/dir/name.with.dots.cu $E $P
log fatbinary --create=fident2.fatbin -64 --ident=noext $E $P
log fatbinary --create=fident3.fatbin -64 --ident=dir/ $E $P
log fatbinary --create=fdup.fatbin -64 $E $E $P $P
log fatbinary --create=fdupid.fatbin -64 --ident=dup.cu $E $E $P $P
log fatbinary --create=fnocomp.fatbin -64 --compress=false $E $P
log fatbinary --create=fhost.fatbin -64 -host=windows $E $P
log nvcc -fatbin -gencode arch=compute_90a,code=[sm_90a,compute_90a] x.cu -o a90a.fatbin
log nvcc -fatbin -gencode arch=compute_100a,code=[sm_100a,compute_100a] -gencode arch=compute_100f,code=[sm_100f,compute_100f] -gencode arch=compute_103,code=sm_103 x.cu -o a100.fatbin
cp fnocomp.fatbin a.b.c; cp fnocomp.fatbin noext; mkdir -p d.x; cp fnocomp.fatbin d.x/y; cp fnocomp.fatbin .hidden
cat fnocomp.fatbin fident2.fatbin > cat.fatbin
cat fident2.fatbin fnocomp.fatbin fnocomp.fatbin > cat2.fatbin
for f in *.fatbin a.b.c noext d.x/y .hidden; do
  [ -f "$f" ] || continue
  b=$(echo "$f" | tr / _)
  cuobjdump -lelf -lptx "$f" >"$b.list" 2>&1; echo "rc=$?" >>"$b.list"
  cuobjdump "$f" 2>&1 | grep -v '^\s*/\*' >"$b.dump"
  mkdir -p "x_$b" && (cd "x_$b" && cuobjdump -xelf all -xptx all "$OLDPWD/$f" >../"$b.xlog" 2>&1; ls -la >>../"$b.xlog")
done
