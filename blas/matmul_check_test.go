package blas

import (
	"strings"
	"testing"
)

// TestMatmulOptionChecks: batches, epilogues, biases and Aux matrices
// are checked before anything is queued.
func TestMatmulOptionChecks(t *testing.T) {
	const m, n, k = 4, 6, 5
	a, b, c := fake(2*m*k), fake(2*k*n), fake(2*m*n)
	fn := "Matmul"
	mm := func(o *MatmulOptions) error {
		return Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, o)
	}
	mmRow := func(o *MatmulOptions) error {
		return MatmulRowMajor[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, k, b, n, 0, c, n, o)
	}
	wantClosed(t, "no options", mm(&MatmulOptions{}))

	// Batches.
	wantArgErr(t, "negative batch", mm(&MatmulOptions{Batch: -1}), fn, "opts.Batch", "opts.Batch = -1 is negative")
	wantArgErr(t, "negative stride", mm(&MatmulOptions{Batch: 2, StrideA: -1}), fn, "opts.StrideA", "opts.StrideA = -1 is negative")
	wantArgErr(t, "batch of 3 in one C", mm(&MatmulOptions{Batch: 3, StrideC: m * n}), fn, "c", "3 matrices C (4×6 Half, column-major, ldc 4, opts.StrideC 24) need 144 bytes")
	wantArgErr(t, "overlapping Cs", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, fake(2*m*n*3), m, &MatmulOptions{Batch: 3, StrideC: m}), fn, "opts.StrideC", "overlap")
	wantClosed(t, "batch of 3, A and B broadcast", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, fake(2*m*n*3), m, &MatmulOptions{Batch: 3, StrideC: m * n}))

	// What only FP8 takes.
	wantArgErr(t, "a scale", mm(&MatmulOptions{ScaleA: fake(4)}), fn, "opts.ScaleA", "scales are for MatmulFP8")
	wantArgErr(t, "amax", mm(&MatmulOptions{AmaxD: fake(4)}), fn, "opts.AmaxD", "scales are for MatmulFP8")
	wantArgErr(t, "fast accumulation", mm(&MatmulOptions{FastAccum: true}), fn, "opts.FastAccum", "it is for MatmulFP8")

	// Epilogues and their bias.
	wantArgErr(t, "no such epilogue", mm(&MatmulOptions{Epilogue: 99}), fn, "opts.Epilogue", "Epilogue(99) is not an Epilogue constant")
	wantArgErr(t, "bias without a bias epilogue", mm(&MatmulOptions{Epilogue: EpilogueReLU, Bias: fake(2 * m)}), fn, "opts.Bias", "opts.Bias is set, but EpilogueReLU uses no bias")
	wantArgErr(t, "no bias", mm(&MatmulOptions{Epilogue: EpilogueGELUBias}), fn, "opts.Bias", "EpilogueGELUBias needs opts.Bias: 4 Half elements, one element per row of C (m)")
	wantClosed(t, "bias of m", mm(&MatmulOptions{Epilogue: EpilogueBias, Bias: fake(2 * m)}))
	wantArgErr(t, "short bias", mm(&MatmulOptions{Epilogue: EpilogueBias, Bias: fake(2*m - 1)}), fn, "opts.Bias", "opts.Bias holds 7 bytes, but EpilogueBias needs 4 Half elements")
	fnRow := "MatmulRowMajor"
	wantClosed(t, "row-major bias of n", mmRow(&MatmulOptions{Epilogue: EpilogueReLUBias, Bias: fake(2 * n)}))
	wantArgErr(t, "row-major bias of m", mmRow(&MatmulOptions{Epilogue: EpilogueReLUBias, Bias: fake(2 * m)}), fnRow, "opts.Bias", "needs 6 Half elements (one element per column of C (n)")
	for _, l := range []struct {
		name string
		f    func(*MatmulOptions) error
		fn   string
	}{{"column-major", mm, fn}, {"row-major", mmRow, fnRow}} {
		wantClosed(t, l.name+" BGradA of m", l.f(&MatmulOptions{Epilogue: EpilogueBGradA, Bias: fake(2 * m)}))
		wantArgErr(t, l.name+" BGradA short", l.f(&MatmulOptions{Epilogue: EpilogueBGradA, Bias: fake(2*m - 2)}), l.fn, "opts.Bias", "needs 4 Half elements (the m sums of op(A)'s rows")
		wantClosed(t, l.name+" BGradB of n", l.f(&MatmulOptions{Epilogue: EpilogueBGradB, Bias: fake(2 * n)}))
		wantArgErr(t, l.name+" BGradB short", l.f(&MatmulOptions{Epilogue: EpilogueBGradB, Bias: fake(2 * m)}), l.fn, "opts.Bias", "needs 6 Half elements (the n sums of op(B)'s columns")
	}
	cs := fake(2 * m * n * 2)
	wantArgErr(t, "bias gradients overlapping", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueBGradB, Bias: fake(4 * n), StrideBias: n - 1}), fn, "opts.StrideBias", "the 2 gradients EpilogueBGradB writes would overlap")
	wantClosed(t, "bias gradients apart", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueBGradB, Bias: fake(4 * n), StrideBias: n}))
	wantClosed(t, "one bias for a batch", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueBias, Bias: fake(2 * m)}))
	wantArgErr(t, "biases of a batch", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueBias, Bias: fake(2 * m), StrideBias: m}), fn, "opts.Bias", "needs 8 Half elements")

	// Aux.
	wantArgErr(t, "aux without an aux epilogue", mm(&MatmulOptions{Epilogue: EpilogueGELU, Aux: fake(1 << 10)}), fn, "opts.Aux", "opts.Aux is set, but EpilogueGELU uses none")
	wantArgErr(t, "LdAux without aux", mm(&MatmulOptions{LdAux: 8}), fn, "opts.LdAux", "EpilogueNone uses no Aux")
	wantArgErr(t, "no aux", mm(&MatmulOptions{Epilogue: EpilogueGELUAux}), fn, "opts.Aux", "EpilogueGELUAux needs opts.Aux: a 4×6 matrix of Half, column-major, as C")
	// GELU's input: LdAux 0 is 8 (m rounded up), 6 columns: 5·8+4 elements.
	wantClosed(t, "GELU aux, default ld", mm(&MatmulOptions{Epilogue: EpilogueGELUAux, Aux: fake(2 * (5*8 + 4))}))
	wantArgErr(t, "GELU aux short", mm(&MatmulOptions{Epilogue: EpilogueGELUAux, Aux: fake(2*(5*8+4) - 1)}), fn, "opts.Aux", "EpilogueGELUAux's 4×6 Aux (column-major, LdAux 8 elements, batch 1, stride 0) needs 88 bytes")
	wantArgErr(t, "GELU aux ld 12", mm(&MatmulOptions{Epilogue: EpilogueGELUAuxBias, Bias: fake(2 * m), Aux: fake(1 << 10), LdAux: 12}), fn, "opts.LdAux", "opts.LdAux = 12 must be a multiple of 8: cuBLASLt's EpilogueGELUAuxBias needs it (counted in elements)")
	wantClosed(t, "row-major DGELU, default ld", mmRow(&MatmulOptions{Epilogue: EpilogueDGELU, Aux: fake(1 << 10)}))
	wantArgErr(t, "aux ld less than m", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, 20, n, k, 1, fake(2*20*k), 20, b, k, 0, fake(2*20*n), 20, &MatmulOptions{Epilogue: EpilogueDGELUBGrad, Bias: fake(40), Aux: fake(1 << 10), LdAux: 16}), fn, "opts.LdAux", "opts.LdAux = 16 must be at least 20: Aux is 20×6, column-major, as C")
	// ReLU's mask: LdAux in bits, a multiple of 128; 6 whole columns of 128 bits.
	wantClosed(t, "ReLU mask, default ld", mm(&MatmulOptions{Epilogue: EpilogueReLUAux, Aux: fake(6 * 16)}))
	wantArgErr(t, "ReLU mask short", mm(&MatmulOptions{Epilogue: EpilogueReLUAux, Aux: fake(6*16 - 1)}), fn, "opts.Aux", "opts.Aux holds 95 bytes, but EpilogueReLUAux's 4×6 Aux (column-major, LdAux 128 bits, batch 1, stride 0) needs 96 bytes")
	wantArgErr(t, "ReLU mask ld 64", mm(&MatmulOptions{Epilogue: EpilogueDReLU, Aux: fake(1 << 10), LdAux: 64}), fn, "opts.LdAux", "opts.LdAux = 64 must be a multiple of 128: cuBLASLt's EpilogueDReLU needs it (counted in bits)")
	wantArgErr(t, "ReLU masks' stride", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueReLUAux, Aux: fake(1 << 10), StrideAux: 100}), fn, "opts.StrideAux", "opts.StrideAux = 100 must be a multiple of 128")
	wantArgErr(t, "ReLU masks overlapping", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueReLUAux, Aux: fake(1 << 10), StrideAux: 128}), fn, "opts.StrideAux", "the 2 Aux matrices (LdAux 128) overlap")
	wantClosed(t, "ReLU masks apart", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueReLUAux, Aux: fake(12 * 16), StrideAux: 6 * 128}))
	wantClosed(t, "one mask read by a batch", Matmul[Half](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, cs, m, &MatmulOptions{Batch: 2, StrideC: m * n, Epilogue: EpilogueDReLU, Aux: fake(6 * 16)}))
	// Row-major: Aux is n wide (LdAux at least n, 8 by default for n 6), m lines.
	wantClosed(t, "row-major GELU aux", mmRow(&MatmulOptions{Epilogue: EpilogueGELUAux, Aux: fake(2 * (3*8 + 6))}))
	wantArgErr(t, "row-major GELU aux short", mmRow(&MatmulOptions{Epilogue: EpilogueGELUAux, Aux: fake(2 * (3*8 + 5))}), fnRow, "opts.Aux", "row-major, LdAux 8 elements")
}

// TestMatmulFP8Checks: the layout cuBLASLt's FP8 kernels need is checked
// in Go.
func TestMatmulFP8Checks(t *testing.T) {
	const m, n, k = 32, 48, 64
	a, b := fake(k*m), fake(k*n)
	c16, c8 := fake(2*m*n), fake(m*n)
	fn := "MatmulFP8"
	wantClosed(t, "TN, BFloat16 C", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0.5, c16, m, nil))
	wantClosed(t, "ConjTrans as Trans", MatmulFP8[E4M3, E5M2, Half](zero, ConjTrans, NoTrans, m, n, k, 1, a, k, b, k, 0, c16, m, nil))
	wantClosed(t, "E5M2 C, scales", MatmulFP8[E5M2, E4M3, E5M2](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, c8, m, &MatmulOptions{ScaleA: fake(4), ScaleB: fake(4), ScaleD: fake(4), AmaxD: fake(4)}))
	wantClosed(t, "float32 C with a bias", MatmulFP8[E4M3, E4M3, float32](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, fake(4*m*n), m, &MatmulOptions{Epilogue: EpilogueGELUBias, Bias: fake(2 * m)}))
	wantClosed(t, "row-major", MatmulFP8RowMajor[E4M3, E4M3, BFloat16](zero, NoTrans, Trans, m, n, k, 1, a, k, b, k, 0, c16, n, nil))
	wantArgErr(t, "NN", MatmulFP8[E4M3, E4M3, BFloat16](zero, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c16, m, nil), fn, "tA", "FP8 needs k contiguous in both A and B, tA = Trans and tB = NoTrans column-major")
	wantArgErr(t, "row-major TN", MatmulFP8RowMajor[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, m, b, n, 0, c16, n, nil), "MatmulFP8RowMajor", "tA", "tA = NoTrans and tB = Trans row-major")
	wantArgErr(t, "k 40", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, 40, 1, a, 48, b, 48, 0, c16, m, nil), fn, "k", "k = 40 is not a multiple of 16")
	wantArgErr(t, "lda 72", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, fake(72*m), 72, b, k, 0, c16, m, nil), fn, "lda", "lda = 72 (1-byte E4M3 elements) is not a multiple of 16 bytes")
	wantArgErr(t, "ldc 36", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, fake(2*36*n), 36, nil), fn, "ldc", "ldc = 36 (2-byte BFloat16 elements) is not a multiple of 16 bytes")
	wantArgErr(t, "E5M2·E5M2", MatmulFP8[E5M2, E5M2, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, c16, m, nil), fn, "b", "A and B are both E5M2")
	wantArgErr(t, "E4M3·E4M3 to E5M2", MatmulFP8[E4M3, E4M3, E5M2](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, c8, m, nil), fn, "c", "an E5M2 C needs A or B E5M2")
	wantArgErr(t, "beta with an FP8 C", MatmulFP8[E4M3, E4M3, E4M3](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 1, c8, m, nil), fn, "beta", "beta must be 0")
	wantArgErr(t, "ScaleD of a BFloat16 C", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, c16, m, &MatmulOptions{ScaleD: fake(4)}), fn, "opts.ScaleD", "opts.ScaleD is set, but C is BFloat16: it is for an FP8 C")
	wantArgErr(t, "short scale", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, c16, m, &MatmulOptions{ScaleB: fake(2)}), fn, "opts.ScaleB", "opts.ScaleB holds 2 bytes: it is one float32")
	wantArgErr(t, "GELU aux", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, a, k, b, k, 0, c16, m, &MatmulOptions{Epilogue: EpilogueGELUAux, Aux: fake(1 << 16)}), fn, "opts.Epilogue", "FP8 Matmuls take EpilogueBias, EpilogueReLU, EpilogueGELU and their Bias forms")
	wantArgErr(t, "a short", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, fake(k*m-1), k, b, k, 0, c16, m, nil), fn, "a", "A (64×32 E4M3, column-major, lda 64) needs 2048 bytes")
	wantArgErr(t, "batch strides", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, fake(3*k*m), k, b, k, 0, fake(3*2*m*n), m, &MatmulOptions{Batch: 2, StrideA: k*m + 8, StrideC: m * n}), fn, "opts.StrideA", "opts.StrideA = 2056 is not a multiple of 16 bytes")
	v, err := fake(k*m+64).View(8, k*m)
	if err != nil {
		t.Fatal(err)
	}
	wantArgErr(t, "A 8 bytes in", MatmulFP8[E4M3, E4M3, BFloat16](zero, Trans, NoTrans, m, n, k, 1, v, k, b, k, 0, c16, m, nil), fn, "a", "is not 16-byte aligned, as cuBLASLt's FP8 kernels need")
}

func TestNewOptionChecks(t *testing.T) {
	for _, c := range []struct {
		o        Options
		arg, msg string
	}{
		{Options{MatmulTuning: 7}, "opts.MatmulTuning", "Tuning(7) is not TuneTimed, TuneOff or TuneDisk"},
		{Options{MatmulCandidates: -1}, "opts.MatmulCandidates", "-1 is not between 0 (the default, 8) and 64"},
		{Options{MatmulCandidates: 65}, "opts.MatmulCandidates", "65 is not between"},
	} {
		_, err := New(nil, &c.o) // the options are checked first
		wantArgErr(t, c.arg, err, "New", c.arg, c.msg)
	}
}

func TestEpilogueString(t *testing.T) {
	for e := range numEpilogues {
		if s := e.String(); !strings.HasPrefix(s, "Epilogue") || strings.Contains(s, "(") {
			t.Errorf("%d: %q", e, s)
		}
	}
	if s := Epilogue(200).String(); s != "Epilogue(200)" {
		t.Errorf("Epilogue(200): %q", s)
	}
	// Row-major swaps the bias gradients of A and B, and nothing else.
	for e := range numEpilogues {
		col, row := e.ltEpilogue(colMajor), e.ltEpilogue(rowMajor)
		swapped := e == EpilogueBGradA || e == EpilogueBGradB
		if (col != row) != swapped {
			t.Errorf("%v: column-major %v, row-major %v", e, col, row)
		}
	}
}

// TestMatmulCheckAllocs: Matmul's checks and operand bookkeeping allocate
// nothing (the GPU test checks the whole call of a known shape).
func TestMatmulCheckAllocs(t *testing.T) {
	const m, n, k = 64, 48, 32
	a, b, c, bias := fake(2*m*k), fake(2*k*n), fake(2*m*n), fake(2*n)
	opts := &MatmulOptions{Epilogue: EpilogueGELUBias, Bias: bias}
	allocs := testing.AllocsPerRun(100, func() {
		Matmul[BFloat16](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, m, b, k, 0, c, m, nil)
		MatmulRowMajor[BFloat16](zero, ComputeFloat32, NoTrans, NoTrans, m, n, k, 1, a, k, b, n, 0, c, n, opts)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Matmul check", allocs)
	}
}
