package blas

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cudago/cudago/bindings/cublas"
	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/bindings/driver"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
)

// Matmul computes C = epilogue(alpha·op(A)·op(B) + beta·C) through
// cuBLASLt (cublasLtMatmul), for Half, BFloat16 and float32 column-major
// matrices as Gemm's, with the arithmetic the caller chooses (see
// ComputeType). alpha and beta are float32 (rounded to Half for
// ComputeFloat16). k must be positive. opts (nil for none) adds an
// epilogue (bias, ReLU, GELU and their backward passes: see Epilogue) and
// a strided batch; see MatmulOptions.
//
// The first Matmul of a shape (types, compute type, transposes, sizes,
// leading dimensions, batch, epilogue, and the alignment of every
// address) creates cuBLASLt's descriptors, asks its heuristic for its best
// candidates that fit the handle's workspace and, unless
// Options.MatmulTuning says otherwise, times them on the handle's stream
// and keeps the fastest (see Tuning). The Handle keeps that plan for the
// next Matmul of the shape.
func Matmul[T MatmulScalar](h *Handle, compute ComputeType, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int, opts *MatmulOptions) error {
	e := elemOf[T]()
	return matmul(&mmCall{fn: "Matmul", l: colMajor, h: h, ct: compute, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, ea: e, eb: e, ec: e, opts: opts})
}

// MatmulRowMajor is Matmul with row-major matrices, as GemmRowMajor's
// (the same column-major Matmul with A and B swapped, no copies). A bias
// then has one element per column of C (see Epilogue).
func MatmulRowMajor[T MatmulScalar](h *Handle, compute ComputeType, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int, opts *MatmulOptions) error {
	e := elemOf[T]()
	return matmul(&mmCall{fn: "MatmulRowMajor", l: rowMajor, h: h, ct: compute, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, ea: e, eb: e, ec: e, opts: opts})
}

// MatmulFP8 is Matmul with FP8 inputs (E4M3 or E5M2, at most one of A and
// B E5M2) on GPUs of compute capability 8.9 (Ada) and newer, summing in
// float32: C = ScaleD·(alpha·ScaleA·ScaleB·op(A)·op(B) + beta·C), with the
// per-tensor scales of opts (see MatmulOptions), stored as TC: Half,
// BFloat16, float32, or FP8 (E5M2 only when A or B is E5M2).
//
// cuBLASLt's FP8 kernels take one layout, checked here: k contiguous in
// both A and B ("TN": tA = Trans and tB = NoTrans column-major; tA =
// NoTrans and tB = Trans for MatmulFP8RowMajor, B stored n×k as a linear
// layer's weight is), k a multiple of 16, and every leading dimension and
// address a multiple of 16 bytes. An FP8 C is written, not read: beta
// must be 0 (cuBLASLt takes the C it adds in as BFloat16, never in an FP8
// type, so no C is passed). A bias is BFloat16 (Half when TC is Half);
// the epilogues are EpilogueBias, EpilogueReLU, EpilogueGELU and their
// Bias forms.
func MatmulFP8[TA, TB FP8, TC FP8Result](h *Handle, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int, opts *MatmulOptions) error {
	return matmul(&mmCall{fn: "MatmulFP8", l: colMajor, h: h, ct: ComputeFloat32, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, ea: elemOf[TA](), eb: elemOf[TB](), ec: fp8ResultElem[TC](), fp8: true, opts: opts})
}

// MatmulFP8RowMajor is MatmulFP8 with row-major matrices: C = A·Bᵀ with A
// m×k and B n×k, both row-major (tA = NoTrans, tB = Trans).
func MatmulFP8RowMajor[TA, TB FP8, TC FP8Result](h *Handle, tA, tB Transpose, m, n, k int, alpha float32, a *core.Buffer, lda int, b *core.Buffer, ldb int, beta float32, c *core.Buffer, ldc int, opts *MatmulOptions) error {
	return matmul(&mmCall{fn: "MatmulFP8RowMajor", l: rowMajor, h: h, ct: ComputeFloat32, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, ea: elemOf[TA](), eb: elemOf[TB](), ec: fp8ResultElem[TC](), fp8: true, opts: opts})
}

func fp8ResultElem[T FP8Result]() elem {
	var z T
	switch any(z).(type) {
	case Half:
		return halfElem
	case BFloat16:
		return bfloat16Elem
	case float32:
		return elemOf[float32]()
	case E4M3:
		return elemOf[E4M3]()
	}
	return elemOf[E5M2]()
}

// mmCall is one Matmul as the caller gave it: ea, eb and ec are the
// element types of A, B and C.
type mmCall struct {
	fn            string
	l             layout
	h             *Handle
	ct            ComputeType
	tA, tB        Transpose
	m, n, k       int
	alpha, beta   float32
	a, b, c       *core.Buffer
	lda, ldb, ldc int
	ea, eb, ec    elem
	fp8           bool
	opts          *MatmulOptions
}

// The pointer attributes of a Matmul's descriptor, as bits of
// planKey.ptrs.
const (
	ptrBias = 1 << iota
	ptrAux
	ptrScaleA
	ptrScaleB
	ptrScaleD
	ptrAmaxD
)

// ltPtrs are the device addresses a descriptor carries, in cuBLASLt's
// (column-major) terms.
type ltPtrs struct {
	bias, aux, scaleA, scaleB, scaleD, amaxD unsafe.Pointer
}

// biasElem is the element type of mc's bias: C's, or for FP8 Matmuls
// BFloat16 (Half with a Half C), as cuBLASLt's FP8 kernels take it.
func (mc *mmCall) biasElem() elem {
	if mc.fp8 && mc.ec.kind != 'h' {
		return bfloat16Elem
	}
	return mc.ec
}

// check checks the call; it returns the batch count and the epilogue's
// shape.
func (mc *mmCall) check(o *MatmulOptions) (batch int, sh epilogueShape, err error) {
	fn := mc.fn
	if err := checkGemmDims(fn, mc.h, mc.tA, mc.tB, mc.m, mc.n, mc.k); err != nil {
		return 0, sh, err
	}
	batch = o.Batch
	if err := checkBatch(fn, "opts.Batch", batch); err != nil {
		return 0, sh, err
	}
	batch = max(batch, 1)
	for _, s := range [...]struct {
		name string
		v    int64
	}{{"opts.StrideA", o.StrideA}, {"opts.StrideB", o.StrideB}, {"opts.StrideC", o.StrideC}} {
		if err := checkStride(fn, s.name, s.v); err != nil {
			return 0, sh, err
		}
	}
	ma, mb, mcm := gemmMats(mc.tA, mc.tB, mc.m, mc.n, mc.k, mc.a, mc.lda, mc.b, mc.ldb, mc.c, mc.ldc)
	ma.stride, mb.stride, mcm.stride = o.StrideA, o.StrideB, o.StrideC
	ma.strideArg, mb.strideArg, mcm.strideArg = "opts.StrideA", "opts.StrideB", "opts.StrideC"
	if err := checkMat(fn, mc.l, &ma, mc.ea, batch); err != nil {
		return 0, sh, err
	}
	if err := checkMat(fn, mc.l, &mb, mc.eb, batch); err != nil {
		return 0, sh, err
	}
	if err := checkMat(fn, mc.l, &mcm, mc.ec, batch); err != nil {
		return 0, sh, err
	}
	if inner, outer := mcm.lines(mc.l); batchOverlaps(inner, outer, int64(mc.ldc), o.StrideC, int64(batch)) {
		return 0, sh, argErr(fn, "opts.StrideC", "opts.StrideC = %d makes the %d matrices C (%d×%d, %v, ldc %d) overlap: their results would race", o.StrideC, batch, mc.m, mc.n, mc.l, mc.ldc)
	}
	if mc.fp8 {
		if err := mc.checkFP8(o); err != nil {
			return 0, sh, err
		}
	} else {
		if err := checkMatmul(fn, mc.ec, mc.ct, mc.k); err != nil {
			return 0, sh, err
		}
		for _, s := range [...]struct {
			name string
			b    *core.Buffer
		}{{"opts.ScaleA", o.ScaleA}, {"opts.ScaleB", o.ScaleB}, {"opts.ScaleD", o.ScaleD}, {"opts.AmaxD", o.AmaxD}} {
			if s.b != nil {
				return 0, sh, argErr(fn, s.name, "%s is set: scales are for MatmulFP8", s.name)
			}
		}
		if o.FastAccum {
			return 0, sh, argErr(fn, "opts.FastAccum", "opts.FastAccum is set: it is for MatmulFP8")
		}
	}
	sh, err = checkEpilogue(fn, mc.l, o, mc.m, mc.n, batch, mc.ec, mc.biasElem())
	return batch, sh, err
}

// checkFP8 checks what cuBLASLt's FP8 kernels need.
func (mc *mmCall) checkFP8(o *MatmulOptions) error {
	fn := mc.fn
	if mc.ea.kind == '5' && mc.eb.kind == '5' {
		return argErr(fn, "b", "A and B are both E5M2: cuBLASLt's FP8 kernels take E4M3·E4M3, E4M3·E5M2 or E5M2·E4M3")
	}
	if mc.ec.kind == '5' && mc.ea.kind == '4' && mc.eb.kind == '4' {
		return argErr(fn, "c", "an E5M2 C needs A or B E5M2: cuBLASLt's E4M3·E4M3 kernels write E4M3, Half, BFloat16 or float32")
	}
	wantA, wantB := Trans, NoTrans // k contiguous in both, column-major
	if mc.l == rowMajor {
		wantA, wantB = NoTrans, Trans
	}
	if mc.tA == ConjTrans {
		mc.tA = Trans // real
	}
	if mc.tB == ConjTrans {
		mc.tB = Trans
	}
	if mc.tA != wantA || mc.tB != wantB {
		return argErr(fn, "tA", "tA = %v, tB = %v: FP8 needs k contiguous in both A and B, tA = %v and tB = %v %v (cuBLASLt's \"TN\", the only layout of its FP8 kernels on Ada and Hopper)", mc.tA, mc.tB, wantA, wantB, mc.l)
	}
	if mc.k%16 != 0 {
		return argErr(fn, "k", "k = %d is not a multiple of 16, as cuBLASLt's FP8 kernels need", mc.k)
	}
	for _, ld := range [...]struct {
		name string
		v    int
		e    elem
	}{{"lda", mc.lda, mc.ea}, {"ldb", mc.ldb, mc.eb}, {"ldc", mc.ldc, mc.ec}} {
		if ld.v*ld.e.size%16 != 0 {
			return argErr(fn, ld.name, "%s = %d (%d-byte %s elements) is not a multiple of 16 bytes, as cuBLASLt's FP8 kernels need", ld.name, ld.v, ld.e.size, ld.e.name)
		}
	}
	for _, s := range [...]struct {
		name string
		v    int64
		e    elem
	}{{"opts.StrideA", o.StrideA, mc.ea}, {"opts.StrideB", o.StrideB, mc.eb}, {"opts.StrideC", o.StrideC, mc.ec}} {
		if o.Batch > 1 && s.v*int64(s.e.size)%16 != 0 {
			return argErr(fn, s.name, "%s = %d is not a multiple of 16 bytes: every matrix of an FP8 batch must be 16-byte aligned", s.name, s.v)
		}
	}
	if mc.ec.fp8() {
		if mc.beta != 0 {
			return argErr(fn, "beta", "beta = %v with an FP8 C: beta must be 0 (cuBLASLt adds in a C only as BFloat16, never in C's FP8 type)", mc.beta)
		}
	} else {
		for _, s := range [...]struct {
			name string
			b    *core.Buffer
		}{{"opts.ScaleD", o.ScaleD}, {"opts.AmaxD", o.AmaxD}} {
			if s.b != nil {
				return argErr(fn, s.name, "%s is set, but C is %s: it is for an FP8 C", s.name, mc.ec.name)
			}
		}
	}
	for _, s := range [...]struct {
		name string
		b    *core.Buffer
	}{{"opts.ScaleA", o.ScaleA}, {"opts.ScaleB", o.ScaleB}, {"opts.ScaleD", o.ScaleD}, {"opts.AmaxD", o.AmaxD}} {
		if s.b != nil && s.b.Size() < 4 {
			return argErr(fn, s.name, "%s holds %d bytes: it is one float32 (4 bytes)", s.name, s.b.Size())
		}
	}
	switch o.Epilogue {
	case EpilogueNone, EpilogueBias, EpilogueReLU, EpilogueReLUBias, EpilogueGELU, EpilogueGELUBias:
	default:
		return argErr(fn, "opts.Epilogue", "opts.Epilogue = %v: FP8 Matmuls take EpilogueBias, EpilogueReLU, EpilogueGELU and their Bias forms", o.Epilogue)
	}
	if mc.h.state != nil && mc.h.dev != nil {
		if major, minor := mc.h.dev.ComputeCapability(); major*10+minor < 89 {
			return argErr(fn, "h", "%v has compute capability %d.%d: FP8 Matmuls need 8.9 (Ada) or newer", mc.h.dev, major, minor)
		}
	}
	return nil
}

// fits is check's answer for a Matmul without options or FP8 types, the
// small-matrix case where each call's CPU cost counts: true exactly when
// check returns nil (TestMatmulFits), without building the descriptions
// that check's errors are made from. A call it refuses goes through check,
// which names what is wrong.
func (mc *mmCall) fits() bool {
	if mc.opts != nil || mc.fp8 || mc.k == 0 || !gemmFits(mc.l, mc.ec.size, mc.h, mc.tA, mc.tB, mc.m, mc.n, mc.k, mc.a, mc.lda, mc.b, mc.ldb, mc.c, mc.ldc) {
		return false
	}
	switch mc.ct {
	case ComputeFloat32:
		return true
	case ComputeFloat16:
		return mc.ec.kind == 'h'
	case ComputeTF32:
		return mc.ec.kind == 's'
	}
	return false
}

func matmul(mc *mmCall) error {
	var o MatmulOptions
	if mc.opts != nil {
		o = *mc.opts
	}
	batch, sh, err := 1, epilogueShape{}, error(nil)
	if !mc.fits() {
		if batch, sh, err = mc.check(&o); err != nil {
			return err
		}
	}
	if mc.m == 0 || mc.n == 0 {
		return nil
	}
	h, fn := mc.h, mc.fn
	ops := h.operands(fn)
	defer ops.Release()
	var p [3]unsafe.Pointer
	for i, x := range [...]struct {
		arg string
		b   *core.Buffer
		e   elem
	}{{"a", mc.a, mc.ea}, {"b", mc.b, mc.eb}, {"c", mc.c, mc.ec}} {
		if p[i], err = ops.Add(x.arg, x.b, x.e.size, x.e.name); err != nil {
			return err
		}
		if mc.fp8 && libhandle.Addr(p[i])%16 != 0 {
			return argErr(fn, x.arg, "%s's address %#x is not 16-byte aligned, as cuBLASLt's FP8 kernels need", x.arg, uint64(libhandle.Addr(p[i])))
		}
	}
	var ptrs ltPtrs
	var which uint8
	if o.Bias != nil {
		eb := mc.biasElem()
		if ptrs.bias, err = ops.Add("opts.Bias", o.Bias, eb.size, eb.name); err != nil {
			return err
		}
		which |= ptrBias
	}
	if o.Aux != nil {
		al, name := mc.ec.size, mc.ec.name
		if epilogues[o.Epilogue].aux.align() == 128 {
			al, name = 1, "bit-mask"
		}
		if ptrs.aux, err = ops.Add("opts.Aux", o.Aux, al, name); err != nil {
			return err
		}
		which |= ptrAux
	}
	scaleA, scaleB := o.ScaleA, o.ScaleB
	argA, argB := "opts.ScaleA", "opts.ScaleB"
	if mc.l == rowMajor { // cuBLASLt's A is the caller's B
		scaleA, scaleB, argA, argB = scaleB, scaleA, argB, argA
	}
	var sp [4]unsafe.Pointer // A, B and D's scales, D's amax
	for i, s := range [...]struct {
		arg string
		b   *core.Buffer
	}{{argA, scaleA}, {argB, scaleB}, {"opts.ScaleD", o.ScaleD}, {"opts.AmaxD", o.AmaxD}} {
		if s.b == nil {
			continue
		}
		if sp[i], err = ops.Add(s.arg, s.b, 4, "float32"); err != nil {
			return err
		}
		which |= ptrScaleA << i
	}
	ptrs.scaleA, ptrs.scaleB, ptrs.scaleD, ptrs.amaxD = sp[0], sp[1], sp[2], sp[3]
	ctx, s, err := h.lib().Begin()
	if err != nil {
		return err
	}
	defer h.st.End()
	g := gemmOp{tA: mc.tA, tB: mc.tB, m: mc.m, n: mc.n, k: mc.k, lda: mc.lda, ldb: mc.ldb, ldc: mc.ldc, sa: o.StrideA, sb: o.StrideB}.at(p, mc.l)
	ta, tb := mc.ea, mc.eb
	if mc.l == rowMajor {
		ta, tb = tb, ta
	}
	key := planKey{
		aType: ta.dt, bType: tb.dt, cType: mc.ec.dt, dType: mc.ec.dt, compute: mc.ct,
		opA: cublasOp(g.tA, false), opB: cublasOp(g.tB, false),
		m: int32(g.m), n: int32(g.n), k: int32(mc.k), lda: int32(g.lda), ldb: int32(g.ldb), ldc: int32(mc.ldc),
		alignA: alignment(libhandle.Addr(g.a)), alignB: alignment(libhandle.Addr(g.b)), alignC: alignment(libhandle.Addr(g.c)),
		batch: int32(batch), ptrs: which, fastAccum: o.FastAccum, anyReduction: !restrictReduction,
	}
	if mc.ec.fp8() {
		key.cType = cublas.R16bf // C is read as BFloat16 (not at all: beta is 0)
	}
	if batch > 1 {
		key.strideA, key.strideB, key.strideC = g.sa, g.sb, o.StrideC
	}
	if o.Epilogue != EpilogueNone {
		key.epilogue = o.Epilogue.ltEpilogue(mc.l)
		key.ldAux = int64(sh.ldAux)
		if batch > 1 {
			key.strideBias, key.strideAux = o.StrideBias, o.StrideAux
		}
		if o.Bias != nil {
			key.alignBias = alignment(libhandle.Addr(ptrs.bias))
			if mc.fp8 {
				key.biasType = mc.biasElem().dt
			}
		}
		if o.Aux != nil {
			key.alignAux = alignment(libhandle.Addr(ptrs.aux))
		}
	}
	var slot *scalars
	if mc.ct == ComputeFloat16 {
		slot = getScalars(HalfFromFloat32(mc.alpha), HalfFromFloat32(mc.beta))
	} else {
		slot = getScalars(mc.alpha, mc.beta)
	}
	defer scalarPool.Put(slot)
	al, be := slot.ptrs()
	lt := h.st.Handle().lt
	pl := h.cachedPlan(key)
	if pl == nil {
		run := &tuneRun{ctx: ctx, s: s, lt: lt, alpha: al, a: g.a, b: g.b, c: g.c, ptrs: ptrs, ws: h.ws, wsLen: h.wsLen}
		if mc.beta != 0 {
			// Timing candidates must not read C after a first one wrote
			// it: they write a scratch C of the same span instead (beta 0).
			run.scratch = cSpan(mc.ldc, mc.m, mc.n, mc.l, batch, o.StrideC) * int64(mc.ec.size)
		}
		if pl, err = h.plan(key, run); err != nil {
			return fmt.Errorf("blas: %s: %w", fn, err)
		}
	}
	// D = C: in place, with C's layout (D's own for an FP8 C).
	err = pl.launch(ctx, lt, &pl.algo, al, be, g.a, g.b, g.c, g.c, &ptrs, h.ws, h.wsLen, s)
	runtime.KeepAlive(pl) // its descriptors, until cuBLASLt is done with them
	return err
}

// cSpan is how many elements C's batch spans.
func cSpan(ld, m, n int, l layout, batch int, stride int64) int64 {
	inner, outer := int64(m), int64(n)
	if l == rowMajor {
		inner, outer = outer, inner
	}
	return (outer-1)*int64(ld) + inner + int64(batch-1)*stride
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

// planKey is what a plan depends on, in cuBLASLt's column-major terms.
type planKey struct {
	aType, bType, cType, dType cublas.DataType
	compute                    ComputeType
	opA, opB                   cublas.Operation
	m, n, k, lda, ldb, ldc     int32
	alignA, alignB, alignC     uint32
	batch                      int32
	strideA, strideB, strideC  int64
	epilogue                   cublaslt.Epilogue // 0: none
	biasType                   cublas.DataType   // FP8 only; otherwise D's
	alignBias, alignAux        uint32
	ldAux                      int64
	strideBias, strideAux      int64
	ptrs                       uint8 // the pointer attributes set (ptrBias, ...)
	fastAccum                  bool
	anyReduction               bool // restrictReduction was off
}

// plan is the cuBLASLt descriptors of one shape and the algorithm chosen
// for it. A plan dropped from the cache is destroyed when it is collected
// (a Matmul may still be using it); Close destroys the cached ones.
type plan struct {
	descs
	key  planKey
	algo cublaslt.MatmulAlgo
	// mu is held from setting the descriptor's pointer attributes (bias,
	// aux, scales) to the cublasLtMatmul that reads them, for plans with
	// any (ptrs != 0): concurrent Matmuls share the descriptor.
	mu      sync.Mutex
	ptrs    uint8
	attr    [6]uint64 // the pointer attributes' values, as they cross to C
	cleanup runtime.Cleanup
}

type descs struct {
	desc       cublaslt.MatmulDesc
	a, b, c, d cublaslt.MatrixLayout // d: 0 where D's layout is C's
}

// destroy destroys the descriptors; they are host memory, so no context
// is needed (0).
func (d descs) destroy() error {
	var errs []error
	for _, l := range [...]cublaslt.MatrixLayout{d.a, d.b, d.c, d.d} {
		if l != 0 {
			errs = append(errs, cublasLtMatrixLayoutDestroy(0, l))
		}
	}
	if d.desc != 0 {
		errs = append(errs, cublasLtMatmulDescDestroy(0, d.desc))
	}
	return errors.Join(errs...)
}

// launch queues the Matmul with algo: C read at c, D written at d.
func (p *plan) launch(ctx driver.Context, lt cublaslt.Handle, algo *cublaslt.MatmulAlgo, alpha, beta, a, b, c, d unsafe.Pointer, ptrs *ltPtrs, ws unsafe.Pointer, wsLen uint64, s driver.Stream) error {
	if p.ptrs != 0 {
		p.mu.Lock()
		defer p.mu.Unlock()
		if err := p.setPtrs(ptrs); err != nil {
			return err
		}
	}
	dl := p.c
	if p.d != 0 {
		// An FP8 D: cuBLASLt wants C's layout in BFloat16 and refuses
		// (INVALID_VALUE) a C at D's address with a layout other than D's.
		// beta is 0 for an FP8 D (checkFP8), so C is not read: no C at all,
		// as PyTorch's _scaled_mm passes.
		dl, c = p.d, nil
	}
	return cublasLtMatmul(ctx, lt, p.desc, alpha, a, p.a, b, p.b, beta, c, p.c, d, dl, algo, ws, wsLen, s)
}

// setPtrs sets the pointer attributes of p's descriptor that p.ptrs
// names (ptrBias, ...), from p.attr: the values cross to C from the plan's
// own memory, so that setting them allocates nothing. The caller holds
// p.mu, or p is not shared yet.
func (p *plan) setPtrs(ptrs *ltPtrs) error {
	for i, a := range [...]struct {
		attr cublaslt.MatmulDescAttributes
		p    unsafe.Pointer
	}{{cublaslt.MatmulDescBiasPointer, ptrs.bias}, {cublaslt.MatmulDescEpilogueAuxPointer, ptrs.aux},
		{cublaslt.MatmulDescAScalePointer, ptrs.scaleA}, {cublaslt.MatmulDescBScalePointer, ptrs.scaleB},
		{cublaslt.MatmulDescDScalePointer, ptrs.scaleD}, {cublaslt.MatmulDescAmaxDPointer, ptrs.amaxD}} {
		if p.ptrs&(1<<i) == 0 {
			continue
		}
		p.attr[i] = uint64(libhandle.Addr(a.p))
		if err := cublasLtMatmulDescSetAttribute(0, p.desc, a.attr, unsafe.Pointer(&p.attr[i]), 8); err != nil {
			return err
		}
	}
	return nil
}

// maxPlans bounds the cache: a program that multiplies ever new shapes
// keeps the latest ones.
const maxPlans = 1024

type planCache struct {
	mu    sync.Mutex
	plans map[planKey]*plan
	// last is the plan cachedPlan found last. One dropped from plans
	// stays valid while last holds it: its cleanup runs once collected.
	last atomic.Pointer[plan]
}

// clear destroys the cached plans (Close: no Matmul is in flight).
func (c *planCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.last.Swap(nil); p != nil && c.plans[p.key] != p {
		p.cleanup.Stop() // dropped from plans, not yet collected
		p.destroy()
	}
	for _, p := range c.plans {
		p.cleanup.Stop()
		p.destroy()
	}
	c.plans = nil
}

// cachedPlan returns the plan of key, or nil. The plan used last is
// compared first: a program that repeats one shape skips the map's hash of
// the key and the lock.
func (h *Handle) cachedPlan(key planKey) *plan {
	c := &h.plans
	if p := c.last.Load(); p != nil && p.key == key {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.plans[key]
	if p != nil {
		c.last.Store(p)
	}
	return p
}

// plan makes the plan of key (cachedPlan had none) and caches it; run is
// the Matmul in progress, which tuning times.
func (h *Handle) plan(key planKey, run *tuneRun) (*plan, error) {
	c := &h.plans
	p, keep, err := h.newPlan(key, run)
	if err != nil || !keep {
		return p, err
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
	c.last.Store(p)
	return p, nil
}

// newPlan creates key's descriptors, asks the heuristic for its
// candidates and chooses one (tune.go); keep is false for a plan that
// must not be cached (not tuned while the stream captured a graph).
func (h *Handle) newPlan(key planKey, run *tuneRun) (p *plan, keep bool, err error) {
	p = &plan{key: key, ptrs: key.ptrs}
	cands, err := h.makePlan(run.ctx, key, p, &run.ptrs)
	if err == nil {
		run.p = p
		keep, err = h.choose(key, p, cands, run)
	}
	if err != nil {
		return nil, false, errors.Join(err, p.destroy())
	}
	p.cleanup = runtime.AddCleanup(p, func(d descs) { d.destroy() }, p.descs)
	return p, keep, nil
}

// setAttr sets one attribute of a descriptor to v.
func setAttr[A ~uint32, V any](set func(ctx driver.Context, d uintptr, attr A, buf unsafe.Pointer, n uint64) error, d uintptr, attr A, v V) error {
	return set(0, d, attr, unsafe.Pointer(&v), uint64(unsafe.Sizeof(v)))
}

func setDesc(ctx driver.Context, d uintptr, attr cublaslt.MatmulDescAttributes, buf unsafe.Pointer, n uint64) error {
	return cublasLtMatmulDescSetAttribute(ctx, cublaslt.MatmulDesc(d), attr, buf, n)
}

func setLayout(ctx driver.Context, d uintptr, attr cublaslt.MatrixLayoutAttribute, buf unsafe.Pointer, n uint64) error {
	return cublasLtMatrixLayoutSetAttribute(ctx, cublaslt.MatrixLayout(d), attr, buf, n)
}

func setPref(ctx driver.Context, d uintptr, attr cublaslt.MatmulPreferenceAttributes, buf unsafe.Pointer, n uint64) error {
	return cublasLtMatmulPreferenceSetAttribute(ctx, cublaslt.MatmulPreference(d), attr, buf, n)
}

// makePlan fills p's descriptors (with the pointer attributes of the
// first Matmul, whose alignment the heuristic reads) and returns the
// heuristic's candidates, best first, at most h's candidate count; on
// failure, p holds what it made. Descriptors are host memory: their calls
// take no context (0); the heuristic reads the device's properties, in
// ctx.
func (h *Handle) makePlan(ctx driver.Context, key planKey, p *plan, ptrs *ltPtrs) ([]cublaslt.MatmulAlgo, error) {
	compute, scale := cublas.Compute32F, cublas.R32F
	switch key.compute {
	case ComputeFloat16:
		compute, scale = cublas.Compute16F, cublas.R16F
	case ComputeTF32:
		compute = cublas.Compute32FFastTf32
	}
	if err := cublasLtMatmulDescCreate(0, &p.desc, compute, scale); err != nil {
		return nil, err
	}
	d := uintptr(p.desc)
	attrs := []func() error{
		func() error { return setAttr(setDesc, d, cublaslt.MatmulDescTransa, int32(key.opA)) },
		func() error { return setAttr(setDesc, d, cublaslt.MatmulDescTransb, int32(key.opB)) },
	}
	if key.epilogue != 0 {
		attrs = append(attrs, func() error { return setAttr(setDesc, d, cublaslt.MatmulDescEpilogue, uint32(key.epilogue)) })
		if key.biasType != 0 { // FP8's BFloat16 or Half (never R32F, which is 0)
			attrs = append(attrs, func() error { return setAttr(setDesc, d, cublaslt.MatmulDescBiasDataType, int32(key.biasType)) })
		}
		if key.ptrs&ptrAux != 0 {
			attrs = append(attrs, func() error { return setAttr(setDesc, d, cublaslt.MatmulDescEpilogueAuxLd, key.ldAux) })
		}
		if key.batch > 1 {
			if key.ptrs&ptrAux != 0 {
				attrs = append(attrs, func() error { return setAttr(setDesc, d, cublaslt.MatmulDescEpilogueAuxBatchStride, key.strideAux) })
			}
			if key.ptrs&ptrBias != 0 {
				attrs = append(attrs, func() error { return setAttr(setDesc, d, cublaslt.MatmulDescBiasBatchStride, key.strideBias) })
			}
		}
	}
	if key.fastAccum {
		attrs = append(attrs, func() error { return setAttr(setDesc, d, cublaslt.MatmulDescFastAccum, int8(1)) })
	}
	for _, f := range attrs {
		if err := f(); err != nil {
			return nil, err
		}
	}
	if err := p.setPtrs(ptrs); err != nil {
		return nil, err
	}
	ar, ac := key.m, key.k // A as stored
	if key.opA != cublas.OpN {
		ar, ac = ac, ar
	}
	br, bc := key.k, key.n
	if key.opB != cublas.OpN {
		br, bc = bc, br
	}
	layouts := []struct {
		d          *cublaslt.MatrixLayout
		dt         cublas.DataType
		rows, cols int32
		ld         int32
		stride     int64
	}{{&p.a, key.aType, ar, ac, key.lda, key.strideA}, {&p.b, key.bType, br, bc, key.ldb, key.strideB}, {&p.c, key.cType, key.m, key.n, key.ldc, key.strideC}}
	if key.dType != key.cType {
		layouts = append(layouts, struct {
			d          *cublaslt.MatrixLayout
			dt         cublas.DataType
			rows, cols int32
			ld         int32
			stride     int64
		}{&p.d, key.dType, key.m, key.n, key.ldc, key.strideC})
	}
	for _, l := range layouts {
		if err := cublasLtMatrixLayoutCreate(0, l.d, l.dt, uint64(l.rows), uint64(l.cols), int64(l.ld)); err != nil {
			return nil, err
		}
		if key.batch > 1 {
			ld := uintptr(*l.d)
			if err := setAttr(setLayout, ld, cublaslt.MatrixLayoutBatchCount, key.batch); err != nil {
				return nil, err
			}
			if err := setAttr(setLayout, ld, cublaslt.MatrixLayoutStridedBatchOffset, l.stride); err != nil {
				return nil, err
			}
		}
	}
	var pref cublaslt.MatmulPreference
	if err := cublasLtMatmulPreferenceCreate(0, &pref); err != nil {
		return nil, err
	}
	defer cublasLtMatmulPreferenceDestroy(0, pref)
	pr := uintptr(pref)
	if err := setAttr(setPref, pr, cublaslt.MatmulPrefMaxWorkspaceBytes, h.wsLen); err != nil {
		return nil, err
	}
	for _, a := range [...]struct {
		attr cublaslt.MatmulPreferenceAttributes
		v    uint32
	}{{cublaslt.MatmulPrefMinAlignmentABytes, key.alignA}, {cublaslt.MatmulPrefMinAlignmentBBytes, key.alignB},
		{cublaslt.MatmulPrefMinAlignmentCBytes, key.alignC}, {cublaslt.MatmulPrefMinAlignmentDBytes, key.alignC}} {
		if err := setAttr(setPref, pr, a.attr, a.v); err != nil {
			return nil, err
		}
	}
	fp8 := key.aType == cublas.R8FE4M3 || key.aType == cublas.R8FE5M2
	if key.compute == ComputeFloat32 && key.dType != cublas.R32F && !key.anyReduction && !fp8 {
		// Split-K partial sums in float32 only: the in-place and
		// output-type reductions would add them in D's narrow type. (FP8
		// Matmuls are left to cuBLASLt, as PyTorch's _scaled_mm leaves
		// them: their tensor cores' own sums are narrower still.)
		if err := setAttr(setPref, pr, cublaslt.MatmulPrefReductionSchemeMask, uint32(cublaslt.ReductionSchemeComputeType)); err != nil {
			return nil, err
		}
	}
	res := make([]cublaslt.MatmulHeuristicResult, h.candidates())
	n, err := cublasLtMatmulAlgoGetHeuristic(ctx, h.st.Handle().lt, p.desc, p.a, p.b, p.c, p.dLayout(), pref, int32(len(res)), &res[0])
	if err != nil && !errors.Is(err, cublas.StatusNotSupported) {
		return nil, err
	}
	var cands []cublaslt.MatmulAlgo
	for _, r := range res[:max(n, 0)] {
		if r.State == cublas.StatusSuccess && r.WorkspaceSize <= h.wsLen {
			cands = append(cands, r.Algo)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("cuBLASLt has no algorithm for %v: %w", key, &cublaslt.Error{Lib: "cublasLt", Func: "cublasLtMatmulAlgoGetHeuristic", Code: cublas.StatusNotSupported})
	}
	return cands, nil
}

// dLayout is D's layout: its own, or C's.
func (d *descs) dLayout() cublaslt.MatrixLayout {
	if d.d != 0 {
		return d.d
	}
	return d.c
}

// String describes the key in errors and in the tuning cache: every field,
// named, with cuBLAS's names for its types.
func (k planKey) String() string {
	s := fmt.Sprintf("%v·%v→%v/%v %v op %v,%v m %d n %d k %d ld %d,%d,%d align %d,%d,%d",
		k.aType, k.bType, k.cType, k.dType, k.compute, k.opA, k.opB, k.m, k.n, k.k, k.lda, k.ldb, k.ldc, k.alignA, k.alignB, k.alignC)
	if k.batch > 1 {
		s += fmt.Sprintf(" batch %d strides %d,%d,%d", k.batch, k.strideA, k.strideB, k.strideC)
	}
	if k.epilogue != 0 {
		s += fmt.Sprintf(" %v bias %v align %d stride %d aux ld %d align %d stride %d", k.epilogue, k.biasType, k.alignBias, k.strideBias, k.ldAux, k.alignAux, k.strideAux)
	}
	if k.ptrs != 0 {
		s += fmt.Sprintf(" ptrs %#x", k.ptrs)
	}
	if k.fastAccum {
		s += " fast-accum"
	}
	if k.anyReduction {
		s += " any-reduction"
	}
	return s
}

// restrictReduction keeps split-K partial sums of 16-bit Matmuls with
// float32 compute in float32 (see makePlan); a benchmark turns it off to
// measure what it costs.
var restrictReduction = true
