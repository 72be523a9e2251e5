package blas

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// GroupScalar is an element type of GemmGrouped.
type GroupScalar interface {
	float32 | float64 | Half | BFloat16
}

// GemmGroup is one group of a GemmGrouped: len(C) GEMMs of one shape,
// C_i = Alpha·op(A_i)·op(B_i) + Beta·C_i, each matrix in its own Buffer,
// stored as Gemm's (column-major) or GemmRowMajor's are. A, B and C have
// one Buffer per GEMM.
type GemmGroup struct {
	TransA, TransB Transpose
	M, N, K        int
	// Alpha and Beta are rounded to float32 for float32, Half and
	// BFloat16 matrices (whose GEMMs compute in float32).
	Alpha, Beta float64
	A           []*core.Buffer
	LdA         int
	B           []*core.Buffer
	LdB         int
	C           []*core.Buffer
	LdC         int
}

// GemmGrouped computes every GEMM of every group in one library call,
// groups of different shapes together (cuBLAS's grouped batched GEMM):
// cublasSgemmGroupedBatched and cublasDgemmGroupedBatched for float32
// and float64 (cuBLAS 12.4 and newer; float32 follows Options.TF32), and
// cublasGemmGroupedBatchedEx for Half and BFloat16, with float32
// compute (cuBLAS 12.5 and newer). On an older library it returns the
// bindings' *dl.MissingFunctionError, before anything is queued. No
// Buffer of any group's C may overlap another.
//
// As GemmBatched, the arrays of device addresses cuBLAS reads are copied
// to the device on h's stream from Go memory, so a GemmGrouped cannot be
// captured into a graph.
func GemmGrouped[T GroupScalar](h *Handle, groups []GemmGroup) error {
	return gemmGrouped[T]("GemmGrouped", colMajor, h, groups)
}

// GemmGroupedRowMajor is GemmGrouped with row-major matrices, as
// GemmRowMajor's.
func GemmGroupedRowMajor[T GroupScalar](h *Handle, groups []GemmGroup) error {
	return gemmGrouped[T]("GemmGroupedRowMajor", rowMajor, h, groups)
}

// groupedCall is the library function of a GemmGrouped of elements e.
func groupedCall(e elem) string {
	switch e.kind {
	case 's':
		return "cublasSgemmGroupedBatched"
	case 'd':
		return "cublasDgemmGroupedBatched"
	}
	return "cublasGemmGroupedBatchedEx"
}

// missingCall is why the library function name cannot be called (the
// library lacks it, or did not load), or nil.
func missingCall(name string) error {
	cgxCalls.Load()
	return cgxCalls.LoadErr(cgxCalls.Index(name))
}

func checkGroups(fn string, l layout, e elem, groups []GemmGroup) (total int, err error) {
	if len(groups) > maxDim {
		return 0, argErr(fn, "groups", "%d groups: more than cuBLAS's 32-bit limit", len(groups))
	}
	for g := range groups {
		gr := &groups[g]
		name := func(f string) string { return fmt.Sprintf("groups[%d].%s", g, f) }
		for _, t := range [...]struct {
			f string
			v Transpose
		}{{"TransA", gr.TransA}, {"TransB", gr.TransB}} {
			if err := checkTrans(fn, name(t.f), t.v); err != nil {
				return 0, err
			}
		}
		for _, d := range [...]struct {
			f string
			v int
		}{{"M", gr.M}, {"N", gr.N}, {"K", gr.K}} {
			if err := checkDim(fn, name(d.f), d.v); err != nil {
				return 0, err
			}
		}
		if len(gr.A) != len(gr.C) || len(gr.B) != len(gr.C) {
			return 0, argErr(fn, name("C"), "%s has %d Buffers, A %d and B %d: one of each per GEMM", name("C"), len(gr.C), len(gr.A), len(gr.B))
		}
		if len(gr.C) > maxDim-total {
			return 0, argErr(fn, name("C"), "more than cuBLAS's 32-bit limit of GEMMs in all")
		}
		total += len(gr.C)
		ma, mb, mc := gemmMats(gr.TransA, gr.TransB, gr.M, gr.N, gr.K, nil, gr.LdA, nil, gr.LdB, nil, gr.LdC)
		ma.ldArg, mb.ldArg, mc.ldArg = name("LdA"), name("LdB"), name("LdC")
		for i := range gr.C {
			for _, x := range [...]struct {
				m   *mat
				f   string
				buf *core.Buffer
			}{{&ma, "A", gr.A[i]}, {&mb, "B", gr.B[i]}, {&mc, "C", gr.C[i]}} {
				x.m.buf, x.m.arg = x.buf, fmt.Sprintf("%s[%d]", name(x.f), i)
				if err := checkMat(fn, l, x.m, e, 1); err != nil {
					return 0, err
				}
			}
		}
	}
	return total, nil
}

func gemmGrouped[T GroupScalar](fn string, l layout, h *Handle, groups []GemmGroup) error {
	e := elemOf[T]()
	if h == nil {
		return argErr(fn, "h", "nil *Handle")
	}
	total, err := checkGroups(fn, l, e, groups)
	if err != nil {
		return err
	}
	// The groups that compute something; cuBLAS takes no empty group.
	var run []int
	for g := range groups {
		if len(groups[g].C) > 0 && groups[g].M > 0 && groups[g].N > 0 {
			run = append(run, g)
		}
	}
	if len(run) == 0 {
		return nil
	}
	if err := missingCall(groupedCall(e)); err != nil {
		return fmt.Errorf("blas: %s: %w", fn, err)
	}
	ops := h.operands(fn)
	defer ops.Release()
	// The device arrays: the addresses of every A, then of every B, then
	// of every C, group after group.
	addrs := make([]uint64, 3*total)
	spans := make([]uint64, total)
	var at int
	for _, g := range run {
		gr := &groups[g]
		rows, cols := gr.M, gr.N
		if l == rowMajor {
			rows, cols = cols, rows
		}
		span := (uint64(cols-1)*uint64(gr.LdC) + uint64(rows)) * uint64(e.size)
		for i := range gr.C {
			for j, x := range [...]struct {
				f   string
				buf *core.Buffer
			}{{"A", gr.A[i]}, {"B", gr.B[i]}, {"C", gr.C[i]}} {
				p, err := ops.AddAt(fmt.Sprintf("groups[%d].%s", g, x.f), i, x.buf, e.size, e.name)
				if err != nil {
					return err
				}
				addrs[j*total+at] = uint64(libhandle.Addr(p))
			}
			spans[at] = span
			at++
		}
	}
	n := at // GEMMs that run
	if i, j, ok := overlappingSpans(addrs[2*total:2*total+n], spans[:n]); ok {
		return argErr(fn, "groups", "the C Buffers of GEMMs %d and %d (counted over the groups that run) overlap: their results would race", i, j)
	}
	// The host arrays, one element per group, in cuBLAS's column-major
	// terms: a row-major group is the same GEMM with A and B swapped.
	ng := len(run)
	opA, opB := make([]cublas.Operation, ng), make([]cublas.Operation, ng)
	dims := make([]int32, 7*ng) // m, n, k, lda, ldb, ldc, group size
	m, nn, k, lda, ldb, ldc, size := dims[:ng], dims[ng:2*ng], dims[2*ng:3*ng], dims[3*ng:4*ng], dims[4*ng:5*ng], dims[5*ng:6*ng], dims[6*ng:]
	alpha64, beta64 := make([]float64, ng), make([]float64, ng)
	alpha32, beta32 := make([]float32, ng), make([]float32, ng)
	for x, g := range run {
		gr := &groups[g]
		opA[x], opB[x] = cublasOp(gr.TransA, false), cublasOp(gr.TransB, false)
		m[x], nn[x], k[x], lda[x], ldb[x], ldc[x], size[x] = int32(gr.M), int32(gr.N), int32(gr.K), int32(gr.LdA), int32(gr.LdB), int32(gr.LdC), int32(len(gr.C))
		if l == rowMajor {
			opA[x], opB[x], m[x], nn[x], lda[x], ldb[x] = opB[x], opA[x], nn[x], m[x], ldb[x], lda[x]
		}
		alpha64[x], beta64[x] = gr.Alpha, gr.Beta
		alpha32[x], beta32[x] = float32(gr.Alpha), float32(gr.Beta)
	}
	pa, pb := addrs[:n], addrs[total:total+n]
	if l == rowMajor {
		pa, pb = pb, pa
	}
	arr := make([]uint64, 0, 3*n)
	arr = append(append(append(arr, pa...), pb...), addrs[2*total:2*total+n]...)
	ctx, _, err := h.lib().Begin()
	if err != nil {
		return err
	}
	defer h.st.End()
	dev, err := h.dev.Allocate(len(arr)*8, h.st.Stream())
	if err != nil {
		return err
	}
	defer dev.Close() // on the handle's stream: after the GEMMs
	if err := core.CopyToDeviceAsync(h.st.Stream(), dev, arr); err != nil {
		return err
	}
	p, err := dev.Acquire()
	if err != nil {
		return err
	}
	defer dev.Release()
	da, db, dc := p, p+driver.Deviceptr(8*n), p+driver.Deviceptr(16*n)
	hb, G := h.st.Handle().blas, int32(ng)
	switch e.kind {
	case 's':
		err = cublasSgemmGroupedBatched(ctx, hb, &opA[0], &opB[0], &m[0], &nn[0], &k[0], &alpha32[0], libhandle.PtrTo[*float32](da), &lda[0], libhandle.PtrTo[*float32](db), &ldb[0], &beta32[0], libhandle.PtrTo[*float32](dc), &ldc[0], G, &size[0])
	case 'd':
		err = cublasDgemmGroupedBatched(ctx, hb, &opA[0], &opB[0], &m[0], &nn[0], &k[0], &alpha64[0], libhandle.PtrTo[*float64](da), &lda[0], libhandle.PtrTo[*float64](db), &ldb[0], &beta64[0], libhandle.PtrTo[*float64](dc), &ldc[0], G, &size[0])
	default:
		err = cublasGemmGroupedBatchedEx(ctx, hb, &opA[0], &opB[0], &m[0], &nn[0], &k[0], unsafe.Pointer(&alpha32[0]), libhandle.PtrTo[unsafe.Pointer](da), e.dt, &lda[0], libhandle.PtrTo[unsafe.Pointer](db), e.dt, &ldb[0], unsafe.Pointer(&beta32[0]), libhandle.PtrTo[unsafe.Pointer](dc), e.dt, &ldc[0], G, &size[0], cublas.Compute32F)
	}
	if err != nil {
		return fmt.Errorf("blas: %s: %w", fn, err)
	}
	return nil
}

// overlappingSpans returns the indexes of two regions, region i spans[i]
// bytes from addrs[i], that share a byte (by extent, as overlapping).
func overlappingSpans(addrs, spans []uint64) (i, j int, ok bool) {
	idx := make([]int, len(addrs))
	for x := range idx {
		idx[x] = x
	}
	slices.SortFunc(idx, func(x, y int) int {
		if c := cmp.Compare(addrs[x], addrs[y]); c != 0 {
			return c
		}
		return x - y
	})
	end, owner := uint64(0), -1 // the furthest end so far, and whose
	for _, x := range idx {
		if owner >= 0 && addrs[x] < end {
			return owner, x, true
		}
		if e := addrs[x] + spans[x]; owner < 0 || e > end {
			end, owner = e, x
		}
	}
	return 0, 0, false
}
