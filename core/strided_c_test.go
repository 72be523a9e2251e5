package core

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cg_memcpy3d (fastpath.c) without a GPU: a C program links it with a
// driver table whose cuMemcpy3DAsync copies host memory as the driver
// would, runs copy plans from planCopy, and prints the memory; the test
// compares it with element copies. This checks the descriptor the C code
// builds (memory types, pitches, heights, the boxes' steps, reserved
// fields), that it waits whenever host memory is involved, and that a
// failing box after others waits before returning.

const memcpy3dHarness = `
#include "fastpath.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cudagoHostCallback(uintptr_t handle, int status) { (void)handle; (void)status; }

static uintptr_t cur;
static int syncs, boxes, fail_at, bad;
static cgx_result get_cur(uintptr_t *c) { *c = cur; return 0; }
static cgx_result set_cur(uintptr_t c) { cur = c; return 0; }
static cgx_result stream_sync(uintptr_t s) { (void)s; syncs++; return 0; }
static cgx_result memcpy3d(void *pc, uintptr_t s) {
	cgx_CUDA_MEMCPY3D *p = pc;
	(void)s;
	if (boxes == fail_at) return 700; // CUDA_ERROR_ILLEGAL_ADDRESS
	boxes++;
	if (p->srcXInBytes || p->srcY || p->srcZ || p->srcLOD || p->dstXInBytes || p->dstY || p->dstZ || p->dstLOD ||
		p->srcArray || p->dstArray || p->reserved0 || p->reserved1) bad |= 1;
	if (p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes) bad |= 2;
	if (p->Depth > 1 && (p->srcHeight < p->Height || p->dstHeight < p->Height)) bad |= 4;
	const char *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)p->srcHost :
		p->srcMemoryType == CU_MEMORYTYPE_UNIFIED ? (const char *)(uintptr_t)p->srcDevice : NULL;
	char *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)p->dstHost :
		p->dstMemoryType == CU_MEMORYTYPE_UNIFIED ? (char *)(uintptr_t)p->dstDevice : NULL;
	if (!src || !dst) { bad |= 8; return 1; }
	for (size_t z = 0; z < p->Depth; z++)
		for (size_t y = 0; y < p->Height; y++)
			memcpy(dst + (z * p->dstHeight + y) * p->dstPitch, src + (z * p->srcHeight + y) * p->srcPitch, p->WidthInBytes);
	return 0;
}

int main(void) {
	cgx_fn[CGX_cuCtxGetCurrent] = (void *)get_cur;
	cgx_fn[CGX_cuCtxSetCurrent] = (void *)set_cur;
	cgx_fn[CGX_cuStreamSynchronize] = (void *)stream_sync;
	cgx_fn[CGX_cuMemcpy3DAsync] = (void *)memcpy3d;
	long long v[18];
	while (1) {
		for (int i = 0; i < 18; i++) if (scanf("%lld", &v[i]) != 1) return 0;
		cg_copy3d c = {0};
		c.width = v[0]; c.height = v[1]; c.depth = v[2]; c.count = v[3];
		c.src_pitch = v[4]; c.src_height = v[5]; c.dst_pitch = v[6]; c.dst_height = v[7];
		c.src_step = v[8]; c.dst_step = v[9];
		long long so = v[10], dof = v[11], sn = v[12], dn = v[13];
		int src_host = v[14], dst_host = v[15], wait = v[16];
		fail_at = v[17];
		char *sm = malloc(sn), *dm = malloc(dn);
		for (long long i = 0; i < sn; i++) sm[i] = (char)(i * 7 + 1);
		for (long long i = 0; i < dn; i++) dm[i] = (char)(i * 5 + 3);
		c.src = src_host ? 0 : (cg_devptr)(uintptr_t)(sm + so);
		c.dst = dst_host ? 0 : (cg_devptr)(uintptr_t)(dm + dof);
		syncs = boxes = bad = 0;
		cg_ret r = cg_memcpy3d(42, &c, src_host ? sm + so : NULL, dst_host ? dm + dof : NULL, 7, wait);
		printf("%llx %d %d %d %d ", r, syncs, boxes, bad, (int)cur);
		for (long long i = 0; i < dn; i++) printf("%02x", (unsigned char)dm[i]);
		printf("\n");
		free(sm);
		free(dm);
	}
}
`

func TestMemcpy3DHarness(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	main := filepath.Join(dir, "main.c")
	if err := os.WriteFile(main, []byte(memcpy3dHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	exe := filepath.Join(dir, "harness")
	args := []string{"-std=c11", "-Wall", "-Werror", "-I", wd, "-o", exe, main, filepath.Join(wd, "fastpath.c"), filepath.Join(wd, "drivercalls_gen.c")}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}

	type run struct {
		name           string
		shape, strides []int // the view, in elements of 4 bytes
		toDevice, wait bool
		between        []int // device-to-device: the destination's strides (toDevice ignored)
		failAt         int   // the box that fails, or -1
	}
	runs := []run{
		{"sub-matrix read", []int{5, 7}, []int{13, 1}, false, false, nil, -1},
		{"sub-matrix write", []int{5, 7}, []int{13, 1}, true, false, nil, -1},
		{"3-D box write", []int{3, 4, 5}, []int{63, 9, 1}, true, false, nil, -1},
		{"boxes with a negative step, read", []int{3, 4, 5}, []int{-300, 70, 2}, false, false, nil, -1},
		{"boxes with a negative step, write", []int{3, 4, 5}, []int{-300, 70, 2}, true, false, nil, -1},
		{"transposed sub-matrix write", []int{6, 4}, []int{1, 16}, true, false, nil, -1},
		{"a failing third box waits", []int{3, 4, 5}, []int{300, 70, 2}, true, false, nil, 2},
		{"a failing second box waits", []int{3, 4, 5}, []int{300, 70, 2}, false, false, nil, 1},
		{"a failing first box", []int{3, 4, 5}, []int{300, 70, 2}, false, false, nil, 0},
		{"between views, no wait", []int{4, 5, 6}, []int{100, 10, 1}, false, false, []int{48, 8, 1}, -1},
		{"between views, wait", []int{4, 5, 6}, []int{30, 6, 1}, false, true, []int{-40, 6, 1}, -1},
		{"between views, failing", []int{4, 5, 6}, []int{-30, 6, 1}, false, false, []int{30, 6, 1}, 1},
	}
	var in strings.Builder
	type expect struct {
		out            []byte
		boxes, syncs   int
		fails, waitsOK bool
	}
	var want []expect
	for _, r := range runs {
		const elem = 4
		shape := make([]int64, len(r.shape))
		for i, n := range r.shape {
			shape[i] = int64(n)
		}
		place := func(strides []int) (bs []int64, off, size int64) {
			for i, s := range strides {
				bs = append(bs, int64(s)*elem)
				span := int64(s) * elem * (shape[i] - 1)
				if s < 0 {
					off -= span
					size -= span
				} else {
					size += span
				}
			}
			return bs, off, size + elem + 5 // some bytes past the end: untouched
		}
		vs, voff, vsize := place(r.strides)
		var hs []int64
		var hoff, hsize int64
		srcHost, dstHost := 0, 0
		if r.between != nil {
			hs, hoff, hsize = place(r.between)
		} else {
			hs, hsize = cStrides(shape, elem), elem
			for _, n := range shape {
				hsize *= n
			}
		}
		src, dst := vs, hs
		so, do, sn, dn := voff, hoff, vsize, hsize
		if r.between == nil {
			dstHost = 1
			if r.toDevice {
				src, dst, so, do, sn, dn = hs, vs, hoff, voff, hsize, vsize
				srcHost, dstHost = 1, 0
			}
		}
		pl, ok := planCopy(shape, src, dst, elem)
		if !ok || pl.count < 1 {
			t.Fatalf("%s: does not plan", r.name)
		}
		fmt.Fprintf(&in, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n",
			pl.width, pl.height, pl.depth, pl.count, pl.srcPitch, pl.srcHeight, pl.dstPitch, pl.dstHeight,
			pl.srcStep, pl.dstStep, so, do, sn, dn, srcHost, dstHost, btoi(r.wait), r.failAt)
		sm, dm := make([]byte, sn), make([]byte, dn)
		for i := range sm {
			sm[i] = byte(i*7 + 1)
		}
		for i := range dm {
			dm[i] = byte(i*5 + 3)
		}
		e := expect{boxes: int(pl.count), fails: r.failAt >= 0}
		if r.failAt < 0 {
			refCopy(shape, src, dst, elem, sm, so, dm, do)
		} else {
			e.boxes = r.failAt
			dm = nil // partly copied: not compared
		}
		host := srcHost+dstHost > 0
		switch {
		case r.failAt < 0 && (host || r.wait):
			e.syncs = 1
		case r.failAt > 0 && host:
			e.syncs = 1 // waits for the boxes queued before
		}
		e.out = dm
		want = append(want, e)
	}
	cmd := exec.Command(exe)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(runs) {
		t.Fatalf("harness printed %d lines for %d runs:\n%s", len(lines), len(runs), out)
	}
	for i, line := range lines {
		f := strings.Fields(line)
		r, w := runs[i], want[i]
		ret, _ := strconv.ParseUint(f[0], 16, 64)
		syncs, _ := strconv.Atoi(f[1])
		boxes, _ := strconv.Atoi(f[2])
		bad, _ := strconv.Atoi(f[3])
		ctx, _ := strconv.Atoi(f[4])
		if bad != 0 || ctx != 42 || boxes != w.boxes || syncs != w.syncs || (ret != 0) != w.fails {
			t.Errorf("%s: ret %#x syncs %d boxes %d bad %d ctx %d, want syncs %d boxes %d failing %v", r.name, ret, syncs, boxes, bad, ctx, w.syncs, w.boxes, w.fails)
		}
		if w.fails && uint32(ret) != 700 {
			t.Errorf("%s: returned %#x, want the failing box's 700", r.name, ret)
		}
		if w.out != nil {
			var got []byte
			if len(f) > 5 {
				got, _ = hex.DecodeString(f[5])
			}
			if !bytes.Equal(got, w.out) {
				t.Errorf("%s: the copy differs from an element copy:\n got %x\nwant %x", r.name, got, w.out)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
