package blas

import (
	"fmt"
	"math"

	"github.com/cudago/cudago/bindings/cublaslt"
	"github.com/cudago/cudago/core"
)

// Epilogue is what a Matmul does, inside cuBLASLt's kernel, to each
// element x of alpha·op(A)·op(B) + beta·C before it stores it in C, and
// what it reads or writes beside C: a bias vector (MatmulOptions.Bias)
// and an auxiliary matrix (MatmulOptions.Aux). The zero value is
// EpilogueNone.
//
// # Bias
//
// A bias vector has one element per line along C's contiguous dimension:
// for Matmul (column-major) it has m elements and bias[i] is added to row
// i of C; for MatmulRowMajor it has n elements and bias[j] is added to
// column j, the convention of a linear layer y = x·W + b with one bias per
// output feature. (cuBLASLt's bias is per row of its column-major D; a
// row-major C is the transpose.) Its elements are C's type (FP8 Matmuls:
// see MatmulFP8). A bias gradient (the BGrad epilogues) is written in the
// same form, except for EpilogueBGradA and EpilogueBGradB, which name
// their length themselves.
//
// # Aux
//
// The forward epilogues with Aux keep what the backward pass needs, in a
// matrix of C's shape and layout with its own leading dimension LdAux:
//   - EpilogueGELUAux, EpilogueGELUAuxBias: GELU's input (x), of C's
//     element type; LdAux a multiple of 8;
//   - EpilogueReLUAux, EpilogueReLUAuxBias: one bit per element, set where
//     x > 0, LdAux counted in bits and a multiple of 128; Aux holds
//     lines·LdAux bits (whole lines: cuBLASLt writes the mask in 128-bit
//     words).
//
// The backward epilogues read that matrix back (DReLU, DGELU). LdAux 0
// means the smallest valid one: C's line length (m column-major, n
// row-major) rounded up to 8 or 128.
type Epilogue uint8

const (
	// EpilogueNone stores x.
	EpilogueNone Epilogue = iota
	// EpilogueBias stores x + bias.
	EpilogueBias
	// EpilogueReLU stores max(x, 0).
	EpilogueReLU
	// EpilogueReLUBias stores max(x + bias, 0).
	EpilogueReLUBias
	// EpilogueGELU stores GELU(x), in the tanh form cuBLASLt and PyTorch's
	// fused addmm use: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
	EpilogueGELU
	// EpilogueGELUBias stores GELU(x + bias).
	EpilogueGELUBias
	// EpilogueReLUAux stores max(x, 0) and the mask x > 0 in Aux.
	EpilogueReLUAux
	// EpilogueReLUAuxBias stores max(x + bias, 0) and the mask x + bias > 0
	// in Aux.
	EpilogueReLUAuxBias
	// EpilogueGELUAux stores GELU(x) and x in Aux.
	EpilogueGELUAux
	// EpilogueGELUAuxBias stores GELU(x + bias) and x + bias in Aux.
	EpilogueGELUAuxBias
	// EpilogueDReLU is ReLU's backward pass: it stores x where the mask in
	// Aux (from EpilogueReLUAux) is set, 0 elsewhere.
	EpilogueDReLU
	// EpilogueDReLUBGrad is EpilogueDReLU that also writes the bias
	// gradient, the sums of what it stores along C's other dimension, to
	// Bias.
	EpilogueDReLUBGrad
	// EpilogueDGELU is GELU's backward pass: it stores x·GELU'(aux), aux
	// being the GELU input kept in Aux (from EpilogueGELUAux).
	EpilogueDGELU
	// EpilogueDGELUBGrad is EpilogueDGELU that also writes the bias
	// gradient to Bias, as EpilogueDReLUBGrad does.
	EpilogueDGELUBGrad
	// EpilogueBGradA stores x and writes to Bias the m sums of op(A)'s
	// rows (over k): the bias gradient when op(A) is the incoming
	// gradient of a layer whose output C's rows are.
	EpilogueBGradA
	// EpilogueBGradB stores x and writes to Bias the n sums of op(B)'s
	// columns (over k): for the weight gradient dW = Xᵀ·dY of a row-major
	// layer, B is dY and the sums are the bias gradient.
	EpilogueBGradB

	numEpilogues
)

// biasUse is what an epilogue does with Bias.
type biasUse uint8

const (
	noBias    biasUse = iota
	biasIn            // added, along C's contiguous dimension
	biasGrad          // the gradient along C's contiguous dimension, written
	biasGradA         // m sums, written
	biasGradB         // n sums, written
)

// auxUse is what an epilogue does with Aux.
type auxUse uint8

const (
	noAux auxUse = iota
	reluMaskOut
	geluInputOut
	reluMaskIn
	geluInputIn
)

type epilogueInfo struct {
	name string
	lt   cublaslt.Epilogue
	bias biasUse
	aux  auxUse
}

var epilogues = [numEpilogues]epilogueInfo{
	EpilogueNone:        {"EpilogueNone", cublaslt.EpilogueDefault, noBias, noAux},
	EpilogueBias:        {"EpilogueBias", cublaslt.EpilogueBias, biasIn, noAux},
	EpilogueReLU:        {"EpilogueReLU", cublaslt.EpilogueRelu, noBias, noAux},
	EpilogueReLUBias:    {"EpilogueReLUBias", cublaslt.EpilogueReluBias, biasIn, noAux},
	EpilogueGELU:        {"EpilogueGELU", cublaslt.EpilogueGelu, noBias, noAux},
	EpilogueGELUBias:    {"EpilogueGELUBias", cublaslt.EpilogueGeluBias, biasIn, noAux},
	EpilogueReLUAux:     {"EpilogueReLUAux", cublaslt.EpilogueReluAux, noBias, reluMaskOut},
	EpilogueReLUAuxBias: {"EpilogueReLUAuxBias", cublaslt.EpilogueReluAuxBias, biasIn, reluMaskOut},
	EpilogueGELUAux:     {"EpilogueGELUAux", cublaslt.EpilogueGeluAux, noBias, geluInputOut},
	EpilogueGELUAuxBias: {"EpilogueGELUAuxBias", cublaslt.EpilogueGeluAuxBias, biasIn, geluInputOut},
	EpilogueDReLU:       {"EpilogueDReLU", cublaslt.EpilogueDrelu, noBias, reluMaskIn},
	EpilogueDReLUBGrad:  {"EpilogueDReLUBGrad", cublaslt.EpilogueDreluBgrad, biasGrad, reluMaskIn},
	EpilogueDGELU:       {"EpilogueDGELU", cublaslt.EpilogueDgelu, noBias, geluInputIn},
	EpilogueDGELUBGrad:  {"EpilogueDGELUBGrad", cublaslt.EpilogueDgeluBgrad, biasGrad, geluInputIn},
	EpilogueBGradA:      {"EpilogueBGradA", cublaslt.EpilogueBgrada, biasGradA, noAux},
	EpilogueBGradB:      {"EpilogueBGradB", cublaslt.EpilogueBgradb, biasGradB, noAux},
}

// String returns the constant's name.
func (e Epilogue) String() string {
	if e < numEpilogues {
		return epilogues[e].name
	}
	return fmt.Sprintf("Epilogue(%d)", uint8(e))
}

// ltEpilogue is e as cuBLASLt's, for matrices in layout l: a row-major
// Matmul is cuBLASLt's with A and B swapped, so the bias gradients of A
// and B swap too.
func (e Epilogue) ltEpilogue(l layout) cublaslt.Epilogue {
	lt := epilogues[e].lt
	if l == rowMajor {
		switch lt {
		case cublaslt.EpilogueBgrada:
			lt = cublaslt.EpilogueBgradb
		case cublaslt.EpilogueBgradb:
			lt = cublaslt.EpilogueBgrada
		}
	}
	return lt
}

// MatmulOptions add to a Matmul what cuBLASLt can do besides D =
// alpha·op(A)·op(B) + beta·C: an epilogue with its bias and auxiliary
// matrix, a strided batch, and (MatmulFP8 only) FP8's scales. A nil
// *MatmulOptions is the zero value: one plain GEMM.
type MatmulOptions struct {
	// Epilogue, with Bias and Aux where it uses them (see Epilogue). A
	// Buffer it does not use must be nil.
	Epilogue Epilogue
	Bias     *core.Buffer
	Aux      *core.Buffer
	LdAux    int // 0: the smallest valid (see Epilogue)

	// Batch > 1 makes Batch GEMMs of one shape, C_i = alpha·op(A_i)·op(B_i)
	// + beta·C_i with A_i StrideA elements after A_{i-1} (and so on), as
	// GemmStridedBatched does; a stride of 0 uses one matrix (or one bias,
	// one Aux that is read) for every GEMM. The C_i, and the Aux and bias
	// gradients written, must not overlap. 0 means 1.
	Batch                                            int
	StrideA, StrideB, StrideC, StrideBias, StrideAux int64

	// MatmulFP8 only: device float32 scalars (4-byte Buffers), nil for 1.
	// C becomes ScaleD·(alpha·ScaleA·ScaleB·op(A)·op(B) + beta·C), rounded
	// to C's type; AmaxD receives the largest magnitude of that result
	// before ScaleD (and before the rounding), for the next step's scale
	// (delayed scaling). ScaleD and AmaxD need an FP8 C.
	ScaleA, ScaleB, ScaleD, AmaxD *core.Buffer
	// FastAccum lets FP8 Matmuls keep their partial sums in the tensor
	// cores' own accumulator without promoting them to float32 from time
	// to time (CUBLASLT_MATMUL_DESC_FAST_ACCUM): faster, less accurate
	// for large k.
	FastAccum bool
}

// epilogueAlign is the multiple cuBLASLt needs of an Aux's leading
// dimension and batch stride: GELU's input in elements, ReLU's mask in
// bits.
func (u auxUse) align() int {
	if u == reluMaskOut || u == reluMaskIn {
		return 128
	}
	return 8
}

func (u auxUse) out() bool { return u == reluMaskOut || u == geluInputOut }

// epilogueShape is what the checks found: cuBLASLt's aux leading
// dimension and the bias vector's length.
type epilogueShape struct {
	ldAux   int
	biasLen int
}

// checkEpilogue checks o's epilogue, bias and Aux for a Matmul of C m×n
// of elements ec (bias of elements eb) in layout l.
func checkEpilogue(fn string, l layout, o *MatmulOptions, m, n, batch int, ec, eb elem) (epilogueShape, error) {
	var sh epilogueShape
	if o.Epilogue >= numEpilogues {
		return sh, argErr(fn, "opts.Epilogue", "opts.Epilogue = %v is not an Epilogue constant", o.Epilogue)
	}
	info := epilogues[o.Epilogue]
	inner, outer := m, n // C's lines: their length and number
	if l == rowMajor {
		inner, outer = n, m
	}
	// The bias vector.
	switch info.bias {
	case noBias:
		if o.Bias != nil {
			return sh, argErr(fn, "opts.Bias", "opts.Bias is set, but %v uses no bias", o.Epilogue)
		}
	default:
		sh.biasLen = inner
		switch info.bias {
		case biasGradA:
			sh.biasLen = m
		case biasGradB:
			sh.biasLen = n
		}
		// what says what the bias is, for the errors only (it allocates).
		what := func() string {
			switch info.bias {
			case biasGradA:
				return "the m sums of op(A)'s rows"
			case biasGradB:
				return "the n sums of op(B)'s columns"
			case biasIn, biasGrad:
				if l == rowMajor {
					return "one element per column of C (n)"
				}
			}
			return "one element per row of C (m)"
		}
		if o.Bias == nil {
			return sh, argErr(fn, "opts.Bias", "%v needs opts.Bias: %d %s elements, %s", o.Epilogue, sh.biasLen, eb.name, what())
		}
		if err := checkStride(fn, "opts.StrideBias", o.StrideBias); err != nil {
			return sh, err
		}
		if info.bias != biasIn && batch > 1 && o.StrideBias < int64(sh.biasLen) {
			return sh, argErr(fn, "opts.StrideBias", "opts.StrideBias = %d is less than the bias gradient's %d elements: the %d gradients %v writes would overlap", o.StrideBias, sh.biasLen, batch, o.Epilogue)
		}
		need := int64(sh.biasLen)
		if batch > 1 {
			if o.StrideBias > 0 && int64(batch-1) > (math.MaxInt64-need)/o.StrideBias {
				return sh, argErr(fn, "opts.StrideBias", "opts.StrideBias = %d is too large for %d vectors", o.StrideBias, batch)
			}
			need += int64(batch-1) * o.StrideBias
		}
		if need > int64(o.Bias.Size())/int64(eb.size) {
			return sh, argErr(fn, "opts.Bias", "opts.Bias holds %d bytes, but %v needs %d %s elements (%s, batch %d, stride %d): %s", o.Bias.Size(), o.Epilogue, need, eb.name, what(), batch, o.StrideBias, bytesText(need, eb.size))
		}
	}
	// The auxiliary matrix.
	if info.aux == noAux {
		if o.Aux != nil {
			return sh, argErr(fn, "opts.Aux", "opts.Aux is set, but %v uses none", o.Epilogue)
		}
		if o.LdAux != 0 {
			return sh, argErr(fn, "opts.LdAux", "opts.LdAux = %d is set, but %v uses no Aux", o.LdAux, o.Epilogue)
		}
		return sh, nil
	}
	al := info.aux.align()
	unit := "elements"
	if al == 128 {
		unit = "bits"
	}
	if o.Aux == nil {
		return sh, argErr(fn, "opts.Aux", "%v needs opts.Aux: a %d×%d matrix of %s, %v, as C", o.Epilogue, m, n, map[bool]string{true: "bits", false: ec.name}[al == 128], l)
	}
	if err := checkDim(fn, "opts.LdAux", o.LdAux); err != nil {
		return sh, err
	}
	sh.ldAux = o.LdAux
	if sh.ldAux == 0 {
		sh.ldAux = (max(inner, 1) + al - 1) / al * al
	}
	if sh.ldAux < inner {
		return sh, argErr(fn, "opts.LdAux", "opts.LdAux = %d must be at least %d: Aux is %d×%d, %v, as C", sh.ldAux, inner, m, n, l)
	}
	if sh.ldAux%al != 0 {
		return sh, argErr(fn, "opts.LdAux", "opts.LdAux = %d must be a multiple of %d: cuBLASLt's %v needs it (counted in %s)", sh.ldAux, al, o.Epilogue, unit)
	}
	if err := checkStride(fn, "opts.StrideAux", o.StrideAux); err != nil {
		return sh, err
	}
	if batch > 1 && o.StrideAux%int64(al) != 0 {
		return sh, argErr(fn, "opts.StrideAux", "opts.StrideAux = %d must be a multiple of %d: cuBLASLt's %v needs it (counted in %s)", o.StrideAux, al, o.Epilogue, unit)
	}
	if info.aux.out() && batchOverlaps(int64(inner), int64(outer), int64(sh.ldAux), o.StrideAux, int64(batch)) {
		return sh, argErr(fn, "opts.StrideAux", "opts.StrideAux = %d makes the %d Aux matrices (LdAux %d) overlap: %v writes them", o.StrideAux, batch, sh.ldAux, o.Epilogue)
	}
	// What Aux spans, in its units.
	var need int64
	if inner > 0 && outer > 0 {
		last := int64(inner)
		if al == 128 {
			last = int64(sh.ldAux) // whole lines of the mask
		}
		need = int64(outer-1)*int64(sh.ldAux) + last
		if batch > 1 {
			if o.StrideAux > 0 && int64(batch-1) > (math.MaxInt64-need)/o.StrideAux {
				return sh, argErr(fn, "opts.StrideAux", "opts.StrideAux = %d is too large for %d matrices", o.StrideAux, batch)
			}
			need += int64(batch-1) * o.StrideAux
		}
	}
	have := int64(o.Aux.Size()) / int64(ec.size)
	needText := bytesText(need, ec.size)
	if al == 128 {
		have = int64(o.Aux.Size()) * 8
		needText = fmt.Sprintf("%d bytes", (need+7)/8)
	}
	if need > have {
		return sh, argErr(fn, "opts.Aux", "opts.Aux holds %d bytes, but %v's %d×%d Aux (%v, LdAux %d %s, batch %d, stride %d) needs %s", o.Aux.Size(), o.Epilogue, m, n, l, sh.ldAux, unit, batch, o.StrideAux, needText)
	}
	return sh, nil
}
