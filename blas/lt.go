package blas

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Matmul computes C = alpha·op(A)·op(B) + beta·C through cuBLASLt
// (cublasLtMatmul), for Half, BFloat16 and float32 column-major matrices
// as Gemm's, with the arithmetic the caller chooses (see ComputeType).
// alpha and beta are float32 (rounded to Half for ComputeFloat16). k must
// be positive.
//
// The first Matmul of a shape (types, compute type, transposes, sizes,
// leading dimensions and the alignment of the three addresses) creates
// cuBLASLt's descriptors and asks its heuristic for the best algorithm
// that fits the handle's workspace; the Handle keeps that plan for the
// next Matmul of the shape.
func Matmul[T MatmulScalar](h *Handle, compute ComputeType, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int) error {
	return matmul[T]("Matmul", colMajor, h, compute, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// MatmulRowMajor is Matmul with row-major matrices, as GemmRowMajor's
// (the same column-major Matmul with A and B swapped, no copies).
func MatmulRowMajor[T MatmulScalar](h *Handle, compute ComputeType, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int) error {
	return matmul[T]("MatmulRowMajor", rowMajor, h, compute, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func matmul[T MatmulScalar](fn string, l layout, h *Handle, ct ComputeType, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int) error {
	e := elemOf[T]()
	if err := checkGemm(fn, l, e, h, tA, tB, m, n, k, a, lda, 0, b, ldb, 0, c, ldc, 0, 1); err != nil {
		return err
	}
	if err := checkMatmul(fn, e, ct, k); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	return h.do(fn, e, "abc", [3]*core.Buffer{a, b, c}, func(cl call) error {
		g := gemmOp{tA: tA, tB: tB, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc}.at(cl.p, l)
		key := planKey{
			dt: e.dt, compute: ct, opA: cublasOp(g.tA, false), opB: cublasOp(g.tB, false),
			m: int32(g.m), n: int32(g.n), k: int32(k), lda: int32(g.lda), ldb: int32(g.ldb), ldc: int32(ldc),
			alignA: alignment(libhandle.Addr(g.a)), alignB: alignment(libhandle.Addr(g.b)), alignC: alignment(libhandle.Addr(g.c)),
		}
		p, err := h.plan(cl.ctx, key)
		if err != nil {
			return fmt.Errorf("blas: %s: %w", fn, err)
		}
		var slot *scalars
		if ct == ComputeFloat16 {
			slot = getScalars(HalfFromFloat32(alpha), HalfFromFloat32(beta))
		} else {
			slot = getScalars(alpha, beta)
		}
		defer scalarPool.Put(slot)
		al, be := slot.ptrs()
		// D = C: in place, with C's layout.
		err = cublasLtMatmul(cl.ctx, cl.lib.lt, p.desc, al, g.a, p.a, g.b, p.b, be, g.c, p.c, g.c, p.c, &p.algo, h.ws, h.wsLen, cl.s)
		runtime.KeepAlive(p) // its descriptors, until cuBLASLt is done with them
		return err
	})
}

// alignment is the largest power of two, up to 256, that divides p:
// cuBLASLt's heuristic assumes 256 unless told, and an algorithm chosen
// for more alignment than a view has may fault.
func alignment(p driver.Deviceptr) uint32 {
	a := uint64(p) & -uint64(p)
	if a == 0 || a > 256 {
		return 256
	}
	return uint32(a)
}

// planKey is what a plan depends on.
type planKey struct {
	dt                     cublas.DataType
	compute                ComputeType
	opA, opB               cublas.Operation
	m, n, k, lda, ldb, ldc int32
	alignA, alignB, alignC uint32
}

// plan is the cuBLASLt descriptors of one shape and the algorithm the
// heuristic chose for it. A plan dropped from the cache is destroyed when
// it is collected (a Matmul may still be using it); Close destroys the
// cached ones.
type plan struct {
	descs
	algo    cublaslt.MatmulAlgo
	cleanup runtime.Cleanup
}

type descs struct {
	desc    cublaslt.MatmulDesc
	a, b, c cublaslt.MatrixLayout
}

// destroy destroys the descriptors; they are host memory, so no context
// is needed (0).
func (d descs) destroy() error {
	var errs []error
	for _, l := range [...]cublaslt.MatrixLayout{d.a, d.b, d.c} {
		if l != 0 {
			errs = append(errs, cublasLtMatrixLayoutDestroy(0, l))
		}
	}
	if d.desc != 0 {
		errs = append(errs, cublasLtMatmulDescDestroy(0, d.desc))
	}
	return errors.Join(errs...)
}

// maxPlans bounds the cache: a program that multiplies ever new shapes
// keeps the latest ones.
const maxPlans = 1024

type planCache struct {
	mu    sync.Mutex
	plans map[planKey]*plan
}

// clear destroys the cached plans (Close: no Matmul is in flight).
func (c *planCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.plans {
		p.cleanup.Stop()
		p.destroy()
	}
	c.plans = nil
}

// plan returns the plan of key, making it on first use.
func (h *Handle) plan(ctx driver.Context, key planKey) (*plan, error) {
	c := &h.plans
	c.mu.Lock()
	p := c.plans[key]
	c.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := h.newPlan(ctx, key)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.plans[key]; q != nil {
		return q, nil // made meanwhile by another goroutine; p goes with its cleanup
	}
	if c.plans == nil {
		c.plans = make(map[planKey]*plan)
	}
	if len(c.plans) >= maxPlans {
		for k := range c.plans { // one, in the map's random order
			delete(c.plans, k)
			break
		}
	}
	c.plans[key] = p
	return p, nil
}

// newPlan creates key's descriptors and asks the heuristic for the best
// algorithm.
func (h *Handle) newPlan(ctx driver.Context, key planKey) (*plan, error) {
	p := &plan{}
	if err := h.makePlan(ctx, key, p); err != nil {
		return nil, errors.Join(err, p.destroy())
	}
	p.cleanup = runtime.AddCleanup(p, func(d descs) { d.destroy() }, p.descs)
	return p, nil
}

// makePlan fills p; on failure, p holds what it made. Descriptors are
// host memory: their calls take no context (0); the heuristic reads the
// device's properties, in ctx.
func (h *Handle) makePlan(ctx driver.Context, key planKey, p *plan) error {
	compute, scale := cublas.Compute32F, cublas.R32F
	switch key.compute {
	case ComputeFloat16:
		compute, scale = cublas.Compute16F, cublas.R16F
	case ComputeTF32:
		compute = cublas.Compute32FFastTf32
	}
	if err := cublasLtMatmulDescCreate(0, &p.desc, compute, scale); err != nil {
		return err
	}
	for _, t := range [...]struct {
		attr cublaslt.MatmulDescAttributes
		op   cublas.Operation
	}{{cublaslt.MatmulDescTransa, key.opA}, {cublaslt.MatmulDescTransb, key.opB}} {
		v := int32(t.op)
		if err := cublasLtMatmulDescSetAttribute(0, p.desc, t.attr, unsafe.Pointer(&v), 4); err != nil {
			return err
		}
	}
	ar, ac := key.m, key.k // A as stored
	if key.opA != cublas.OpN {
		ar, ac = ac, ar
	}
	br, bc := key.k, key.n
	if key.opB != cublas.OpN {
		br, bc = bc, br
	}
	for _, l := range [...]struct {
		d          *cublaslt.MatrixLayout
		rows, cols int32
		ld         int32
	}{{&p.a, ar, ac, key.lda}, {&p.b, br, bc, key.ldb}, {&p.c, key.m, key.n, key.ldc}} {
		if err := cublasLtMatrixLayoutCreate(0, l.d, key.dt, uint64(l.rows), uint64(l.cols), int64(l.ld)); err != nil {
			return err
		}
	}
	var pref cublaslt.MatmulPreference
	if err := cublasLtMatmulPreferenceCreate(0, &pref); err != nil {
		return err
	}
	defer cublasLtMatmulPreferenceDestroy(0, pref)
	ws := h.wsLen
	if err := cublasLtMatmulPreferenceSetAttribute(0, pref, cublaslt.MatmulPrefMaxWorkspaceBytes, unsafe.Pointer(&ws), 8); err != nil {
		return err
	}
	for _, a := range [...]struct {
		attr cublaslt.MatmulPreferenceAttributes
		v    uint32
	}{{cublaslt.MatmulPrefMinAlignmentABytes, key.alignA}, {cublaslt.MatmulPrefMinAlignmentBBytes, key.alignB},
		{cublaslt.MatmulPrefMinAlignmentCBytes, key.alignC}, {cublaslt.MatmulPrefMinAlignmentDBytes, key.alignC}} {
		v := a.v
		if err := cublasLtMatmulPreferenceSetAttribute(0, pref, a.attr, unsafe.Pointer(&v), 4); err != nil {
			return err
		}
	}
	if key.compute == ComputeFloat32 && key.dt != cublas.R32F && restrictReduction {
		// Split-K partial sums in float32 only: the in-place and
		// output-type reductions would add them in Half or BFloat16.
		mask := uint32(cublaslt.ReductionSchemeComputeType)
		if err := cublasLtMatmulPreferenceSetAttribute(0, pref, cublaslt.MatmulPrefReductionSchemeMask, unsafe.Pointer(&mask), 4); err != nil {
			return err
		}
	}
	var res cublaslt.MatmulHeuristicResult
	n, err := cublasLtMatmulAlgoGetHeuristic(ctx, h.st.Handle().lt, p.desc, p.a, p.b, p.c, p.c, pref, 1, &res)
	if err != nil {
		return err
	}
	if n < 1 || res.State != cublas.StatusSuccess {
		return fmt.Errorf("cuBLASLt has no algorithm for %v (%v) %v×%v·%v×%v: %w", key.dt, key.compute, key.m, key.k, key.k, key.n, &cublaslt.Error{Lib: "cublasLt", Func: "cublasLtMatmulAlgoGetHeuristic", Code: cublas.StatusNotSupported})
	}
	p.algo = res.Algo
	return nil
}

// restrictReduction keeps split-K partial sums of 16-bit Matmuls with
// float32 compute in float32 (see makePlan); a benchmark turns it off to
// measure what it costs.
var restrictReduction = true
