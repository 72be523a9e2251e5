package blas

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/lib"
)

// Gemm computes C = alpha·op(A)·op(B) + beta·C with column-major
// matrices, as cuBLAS does (cublas<S|D|C|Z>gemm): op(A) is m×k, op(B)
// k×n and C m×n, and column j of a matrix X starts ldx elements after
// column j-1 (ldx is at least its number of rows, and at least 1).
// When tA is NoTrans, A is m×k; otherwise it is stored k×m. The same holds
// for B. Use Buffer.View for matrices that do not start at a buffer's
// start.
//
// The sizes are checked against the Buffers before anything is queued
// (a *lib.ArgError names the argument). The GEMM is queued on h's stream.
//
// cublasSgemm plans inside every call. Where the CPU time of many small
// float32 GEMMs counts, Matmul[float32] with ComputeFloat32 (the same
// arithmetic) keeps cuBLASLt's plan for the shape and costs less per call
// (a 64³ GEMM: 0.96× a C loop of cublasSgemm, against Gemm's 1.08×; see
// docs/benchmarks.md).
func Gemm[T Scalar](h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta T, c *core.Buffer, ldc int) error {
	return gemmIn("Gemm", colMajor, h, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmRowMajor computes C = alpha·op(A)·op(B) + beta·C with row-major
// matrices, the layout of Go's [][]T and of gonum's BLAS, whose argument
// order it follows: op(A) is m×k, op(B) k×n and C m×n, and row i of a
// matrix X starts ldx elements after row i-1 (ldx is at least its number
// of columns, and at least 1). When tA is NoTrans, A is m×k; otherwise
// it is stored k×m. The same holds for B.
//
// A row-major matrix is its transpose in column-major order, so this is
// Cᵀ = op(B)ᵀ·op(A)ᵀ in cuBLAS's column-major terms: the same GEMM with
// A and B swapped, without copying anything.
func GemmRowMajor[T Scalar](h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta T, c *core.Buffer, ldc int) error {
	return gemmIn("GemmRowMajor", rowMajor, h, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmIn checks and queues a GEMM of matrices in layout l.
func gemmIn[T Scalar](fn string, l layout, h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta T, c *core.Buffer, ldc int) error {
	e := elemOf[T]()
	if !gemmFits(l, e.size, h, tA, tB, m, n, k, a, lda, b, ldb, c, ldc) {
		if err := checkGemm(fn, l, e, h, tA, tB, m, n, k, a, lda, 0, b, ldb, 0, c, ldc, 0, 1); err != nil {
			return err
		}
	}
	// h.do's steps, written out: its closure cost a small GEMM's call
	// more than the rest of do (BenchmarkGemmSmall64 in internal/testing/fakelib).
	ops := h.operands(fn)
	defer ops.Release()
	var cl call
	var err error
	for i, buf := range [3]*core.Buffer{a, b, c} {
		if cl.p[i], err = ops.Add(gemmArgs[i], buf, e.size, e.name); err != nil {
			return err
		}
	}
	if cl.ctx, cl.s, err = h.lib().Begin(); err != nil {
		return err
	}
	defer h.st.End()
	cl.lib = h.st.Handle()
	g := gemmOp{tA: tA, tB: tB, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc}
	return gemm(cl, e, alpha, beta, g.at(cl.p, l))
}

var gemmArgs = [3]string{"a", "b", "c"}

// gemmOp is a GEMM, or a strided batch of them, with the addresses of its
// matrices.
type gemmOp struct {
	tA, tB        Transpose
	m, n, k       int
	a, b, c       unsafe.Pointer
	lda, ldb, ldc int
	sa, sb        int64
}

// at returns g with its matrices at p (A, B, C), in cuBLAS's column-major
// terms for matrices in layout l: a row-major matrix is its transpose in
// column-major order, so C = op(A)·op(B) row-major is Cᵀ = op(B)ᵀ·op(A)ᵀ
// column-major, the same GEMM with A and B (their sizes, leading
// dimensions and strides) swapped.
func (g gemmOp) at(p [3]unsafe.Pointer, l layout) gemmOp {
	g.a, g.b, g.c = p[0], p[1], p[2]
	if l == rowMajor {
		g.tA, g.tB, g.m, g.n, g.a, g.b, g.lda, g.ldb, g.sa, g.sb = g.tB, g.tA, g.n, g.m, g.b, g.a, g.ldb, g.lda, g.sb, g.sa
	}
	return g
}

// gemm queues a checked column-major GEMM.
func gemm[T Scalar](c call, e elem, alpha, beta T, g gemmOp) error {
	opA, opB := cublasOp(g.tA, e.complex), cublasOp(g.tB, e.complex)
	M, N, K, lA, lB, lC := int32(g.m), int32(g.n), int32(g.k), int32(g.lda), int32(g.ldb), int32(g.ldc)
	slot := getScalars(alpha, beta)
	defer scalarPool.Put(slot)
	al, be := slot.ptrs()
	switch e.kind {
	case 's':
		return cublasSgemm(c.ctx, c.lib.blas, opA, opB, M, N, K, (*float32)(al), (*float32)(g.a), lA, (*float32)(g.b), lB, (*float32)(be), (*float32)(g.c), lC)
	case 'd':
		return cublasDgemm(c.ctx, c.lib.blas, opA, opB, M, N, K, (*float64)(al), (*float64)(g.a), lA, (*float64)(g.b), lB, (*float64)(be), (*float64)(g.c), lC)
	case 'c':
		return cublasCgemm(c.ctx, c.lib.blas, opA, opB, M, N, K, (*complex64)(al), (*complex64)(g.a), lA, (*complex64)(g.b), lB, (*complex64)(be), (*complex64)(g.c), lC)
	default:
		return cublasZgemm(c.ctx, c.lib.blas, opA, opB, M, N, K, (*complex128)(al), (*complex128)(g.a), lA, (*complex128)(g.b), lB, (*complex128)(be), (*complex128)(g.c), lC)
	}
}

// GemmStridedBatched computes batch GEMMs C_i = alpha·op(A_i)·op(B_i) +
// beta·C_i, i < batch, with column-major matrices as Gemm's: A_i starts
// strideA elements after A_{i-1} in a, and so on
// (cublas<S|D|C|Z>gemmStridedBatched). A stride of 0 uses one A (or B)
// for every GEMM. The matrices C_i must not overlap.
func GemmStridedBatched[T Scalar](h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, strideA int64, b *core.Buffer, ldb int, strideB int64, beta T, c *core.Buffer, ldc int, strideC int64, batch int) error {
	const fn = "GemmStridedBatched"
	return gemmStrided(fn, colMajor, h, tA, tB, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batch)
}

// GemmStridedBatchedRowMajor is GemmStridedBatched with row-major
// matrices, as GemmRowMajor's.
func GemmStridedBatchedRowMajor[T Scalar](h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, strideA int64, b *core.Buffer, ldb int, strideB int64, beta T, c *core.Buffer, ldc int, strideC int64, batch int) error {
	const fn = "GemmStridedBatchedRowMajor"
	return gemmStrided(fn, rowMajor, h, tA, tB, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, batch)
}

func gemmStrided[T Scalar](fn string, l layout, h *Handle, tA, tB Transpose, m, n, k int, alpha T, a *core.Buffer, lda int, sa int64, b *core.Buffer, ldb int, sb int64, beta T, c *core.Buffer, ldc int, sc int64, batch int) error {
	e := elemOf[T]()
	for _, s := range [...]struct {
		name string
		v    int64
	}{{"strideA", sa}, {"strideB", sb}, {"strideC", sc}} {
		if err := checkStride(fn, s.name, s.v); err != nil {
			return err
		}
	}
	if err := checkBatch(fn, "batch", batch); err != nil {
		return err
	}
	if err := checkGemm(fn, l, e, h, tA, tB, m, n, k, a, lda, sa, b, ldb, sb, c, ldc, sc, batch); err != nil {
		return err
	}
	if batch == 0 {
		return nil
	}
	return h.do(fn, e, "abc", [3]*core.Buffer{a, b, c}, func(cl call) error {
		g := gemmOp{tA: tA, tB: tB, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc, sa: sa, sb: sb}.at(cl.p, l)
		opA, opB := cublasOp(g.tA, e.complex), cublasOp(g.tB, e.complex)
		M, N, K, lA, lB, lC, B := int32(g.m), int32(g.n), int32(k), int32(g.lda), int32(g.ldb), int32(ldc), int32(batch)
		slot := getScalars(alpha, beta)
		defer scalarPool.Put(slot)
		al, be := slot.ptrs()
		switch e.kind {
		case 's':
			return cublasSgemmStridedBatched(cl.ctx, cl.lib.blas, opA, opB, M, N, K, (*float32)(al), (*float32)(g.a), lA, g.sa, (*float32)(g.b), lB, g.sb, (*float32)(be), (*float32)(g.c), lC, sc, B)
		case 'd':
			return cublasDgemmStridedBatched(cl.ctx, cl.lib.blas, opA, opB, M, N, K, (*float64)(al), (*float64)(g.a), lA, g.sa, (*float64)(g.b), lB, g.sb, (*float64)(be), (*float64)(g.c), lC, sc, B)
		case 'c':
			return cublasCgemmStridedBatched(cl.ctx, cl.lib.blas, opA, opB, M, N, K, (*complex64)(al), (*complex64)(g.a), lA, g.sa, (*complex64)(g.b), lB, g.sb, (*complex64)(be), (*complex64)(g.c), lC, sc, B)
		default:
			return cublasZgemmStridedBatched(cl.ctx, cl.lib.blas, opA, opB, M, N, K, (*complex128)(al), (*complex128)(g.a), lA, g.sa, (*complex128)(g.b), lB, g.sb, (*complex128)(be), (*complex128)(g.c), lC, sc, B)
		}
	})
}

// GemmBatched computes len(c) GEMMs C_i = alpha·op(A_i)·op(B_i) +
// beta·C_i with column-major matrices as Gemm's, each in its own Buffer
// (cublas<S|D|C|Z>gemmBatched); a, b and c have one Buffer per GEMM, and
// no Buffer of c may appear twice. The arrays of device addresses that
// cuBLAS reads are copied to the device on h's stream, in memory freed
// after the GEMMs; the copy is from Go memory, so a GemmBatched cannot be
// captured into a graph (GemmStridedBatched can).
func GemmBatched[T Scalar](h *Handle, tA, tB Transpose, m, n, k int, alpha T, a []*core.Buffer, lda int, b []*core.Buffer, ldb int, beta T, c []*core.Buffer, ldc int) error {
	return gemmBatched("GemmBatched", colMajor, h, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmBatchedRowMajor is GemmBatched with row-major matrices, as
// GemmRowMajor's.
func GemmBatchedRowMajor[T Scalar](h *Handle, tA, tB Transpose, m, n, k int, alpha T, a []*core.Buffer, lda int, b []*core.Buffer, ldb int, beta T, c []*core.Buffer, ldc int) error {
	return gemmBatched("GemmBatchedRowMajor", rowMajor, h, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func gemmBatched[T Scalar](fn string, l layout, h *Handle, tA, tB Transpose, m, n, k int, alpha T, a []*core.Buffer, lda int, b []*core.Buffer, ldb int, beta T, c []*core.Buffer, ldc int) error {
	e := elemOf[T]()
	if err := checkGemmDims(fn, h, tA, tB, m, n, k); err != nil {
		return err
	}
	batch := len(c)
	if len(a) != batch {
		return argErr(fn, "a", "a has %d Buffers, c %d: one of each per GEMM", len(a), batch)
	}
	if len(b) != batch {
		return argErr(fn, "b", "b has %d Buffers, c %d: one of each per GEMM", len(b), batch)
	}
	if err := checkBatch(fn, "len(c)", batch); err != nil {
		return err
	}
	ma, mb, mc := gemmMats(tA, tB, m, n, k, nil, lda, nil, ldb, nil, ldc)
	for i := range batch {
		for _, x := range [...]struct {
			m   *mat
			buf *core.Buffer
		}{{&ma, a[i]}, {&mb, b[i]}, {&mc, c[i]}} {
			x.m.buf = x.buf
			if err := checkMat(fn, l, x.m, e, 1); err != nil {
				var ae *lib.ArgError
				if errors.As(err, &ae) && ae.Arg == x.m.arg {
					// Name the Buffer: "a[3]".
					ae.Arg = fmt.Sprintf("%s[%d]", x.m.arg, i)
					ae.Msg = ae.Arg + ae.Msg[len(x.m.arg):]
				}
				return err
			}
		}
	}
	if batch == 0 {
		return nil
	}
	ops := h.operands(fn)
	defer ops.Release()
	// The device arrays: the addresses of A_i, then of B_i, then of C_i.
	addrs := make([]uint64, 3*batch)
	for j, bufs := range [...][]*core.Buffer{a, b, c} {
		arg := [...]string{"a", "b", "c"}[j]
		for i, buf := range bufs {
			p, err := ops.AddAt(arg, i, buf, e.size, e.name)
			if err != nil {
				return err
			}
			addrs[j*batch+i] = uint64(libhandle.Addr(p))
		}
	}
	// The span of one C: ldc·(columns−1) + rows elements, columns and
	// rows as the layout stores them.
	rows, cols := m, n
	if l == rowMajor {
		rows, cols = n, m
	}
	var span uint64 // 0 for an empty C: nothing to race on
	if rows > 0 && cols > 0 {
		span = (uint64(cols-1)*uint64(ldc) + uint64(rows)) * uint64(e.size)
	}
	if i, j, ok := overlapping(addrs[2*batch:], span); ok {
		return argErr(fn, "c", "c[%d] and c[%d] overlap (each spans %d bytes): their results would race", i, j, span)
	}
	if l == rowMajor {
		// Swap A and B: their address arrays and their shapes.
		tA, tB, m, n, lda, ldb = tB, tA, n, m, ldb, lda
		for i := range batch {
			addrs[i], addrs[batch+i] = addrs[batch+i], addrs[i]
		}
	}
	ctx, _, err := h.lib().Begin()
	if err != nil {
		return err
	}
	defer h.st.End()
	arr, err := h.dev.Allocate(len(addrs)*8, h.st.Stream())
	if err != nil {
		return err
	}
	defer arr.Close() // on the handle's stream: after the GEMMs
	if err := core.CopyToDeviceAsync(h.st.Stream(), arr, addrs); err != nil {
		return err
	}
	pArr, err := arr.Acquire()
	if err != nil {
		return err
	}
	defer arr.Release()
	pa, pb, pc := pArr, pArr+driver.Deviceptr(8*batch), pArr+driver.Deviceptr(16*batch)
	opA, opB := cublasOp(tA, e.complex), cublasOp(tB, e.complex)
	M, N, K, lA, lB, lC, B := int32(m), int32(n), int32(k), int32(lda), int32(ldb), int32(ldc), int32(batch)
	slot := getScalars(alpha, beta)
	defer scalarPool.Put(slot)
	al, be := slot.ptrs()
	switch e.kind {
	case 's':
		return cublasSgemmBatched(ctx, h.st.Handle().blas, opA, opB, M, N, K, (*float32)(al), libhandle.PtrTo[*float32](pa), lA, libhandle.PtrTo[*float32](pb), lB, (*float32)(be), libhandle.PtrTo[*float32](pc), lC, B)
	case 'd':
		return cublasDgemmBatched(ctx, h.st.Handle().blas, opA, opB, M, N, K, (*float64)(al), libhandle.PtrTo[*float64](pa), lA, libhandle.PtrTo[*float64](pb), lB, (*float64)(be), libhandle.PtrTo[*float64](pc), lC, B)
	case 'c':
		return cublasCgemmBatched(ctx, h.st.Handle().blas, opA, opB, M, N, K, (*complex64)(al), libhandle.PtrTo[*complex64](pa), lA, libhandle.PtrTo[*complex64](pb), lB, (*complex64)(be), libhandle.PtrTo[*complex64](pc), lC, B)
	default:
		return cublasZgemmBatched(ctx, h.st.Handle().blas, opA, opB, M, N, K, (*complex128)(al), libhandle.PtrTo[*complex128](pa), lA, libhandle.PtrTo[*complex128](pb), lB, (*complex128)(be), libhandle.PtrTo[*complex128](pc), lC, B)
	}
}

// overlapping returns the indexes of two regions of span bytes, starting
// at addrs, that share a byte. Regions that interleave without sharing an
// element (C matrices packed between each other's columns) count as
// overlapping too: the check is by extent.
func overlapping(addrs []uint64, span uint64) (i, j int, ok bool) {
	idx := make([]int, len(addrs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int {
		if addrs[x] != addrs[y] {
			if addrs[x] < addrs[y] {
				return -1
			}
			return 1
		}
		return x - y
	})
	for n := 1; n < len(idx); n++ {
		if addrs[idx[n]]-addrs[idx[n-1]] < span {
			return idx[n-1], idx[n], true
		}
	}
	return 0, 0, false
}
