package solver

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The CPU references of the GPU tests, in float64; solver_cpu_test.go
// tests them.

// jacobiEigen returns the eigenvalues, ascending, of the symmetric n×n
// matrix a (row-major; only read) by the cyclic Jacobi method: rotations
// that zero one off-diagonal element at a time, in sweeps over all of
// them, until the off-diagonal part is negligible. Slow (n³ per sweep)
// but simple and accurate to a few ulps of the matrix's norm.
func jacobiEigen(a []float64, n int) []float64 {
	m := slices.Clone(a)
	frob := 0.0
	for _, v := range m {
		frob += v * v
	}
	for sweep := 0; sweep < 100; sweep++ {
		off := 0.0
		for p := range n {
			for q := range n {
				if p != q {
					off += m[p*n+q] * m[p*n+q]
				}
			}
		}
		if off <= 1e-32*frob {
			break
		}
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				apq := m[p*n+q]
				if apq == 0 {
					continue
				}
				// t = tan φ of the rotation that zeroes a[p][q], the
				// smaller root of t² + 2θt - 1 = 0.
				theta := (m[q*n+q] - m[p*n+p]) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Hypot(theta, 1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Hypot(t, 1)
				s := t * c
				for k := range n { // columns p and q: A·J
					akp, akq := m[k*n+p], m[k*n+q]
					m[k*n+p], m[k*n+q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := range n { // rows p and q: Jᵀ·(A·J)
					apk, aqk := m[p*n+k], m[q*n+k]
					m[p*n+k], m[q*n+k] = c*apk-s*aqk, s*apk+c*aqk
				}
			}
		}
	}
	w := make([]float64, n)
	for i := range n {
		w[i] = m[i*n+i]
	}
	slices.Sort(w)
	return w
}

// randMatrix is an n×n row-major matrix of T uniform in [-1, 1).
func randMatrix[T Float](r *rand.Rand, n int) []T {
	a := make([]T, n*n)
	for i := range a {
		a[i] = T(2*r.Float64() - 1)
	}
	return a
}

// randSymmetric is a random symmetric n×n matrix, uniform in [-1, 1).
func randSymmetric[T Float](r *rand.Rand, n int) []T {
	a := make([]T, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			v := T(2*r.Float64() - 1)
			a[i*n+j], a[j*n+i] = v, v
		}
	}
	return a
}

// randSPD is M·Mᵀ/n + I for a random M: symmetric, with eigenvalues in
// [1, about 5], so well conditioned.
func randSPD[T Float](r *rand.Rand, n int) []T {
	m := randMatrix[float64](r, n)
	a := make([]T, n*n)
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += m[i*n+k] * m[j*n+k]
			}
			s /= float64(n)
			if i == j {
				s++
			}
			a[i*n+j] = T(s)
		}
	}
	// Symmetric to the bit: both triangles from one computation.
	for i := range n {
		for j := 0; j < i; j++ {
			a[j*n+i] = a[i*n+j]
		}
	}
	return a
}

// transpose returns the n×n matrix a (row-major) transposed, which is also
// a's column-major form.
func transpose[T Float](a []T, n int) []T {
	t := make([]T, n*n)
	for i := range n {
		for j := range n {
			t[j*n+i] = a[i*n+j]
		}
	}
	return t
}

// residualRatio is LAPACK's test ratio for a solve of A·x = b:
// ‖b - A·x‖∞ / (n·‖A‖∞·‖x‖∞·eps), in float64, for a row-major. A
// backward-stable solve keeps it of order 1; LAPACK's tests pass below
// 30.
func residualRatio[T Float](a []T, n int, x, b []T, eps float64) float64 {
	normA := 0.0
	for i := range n {
		s := 0.0
		for j := range n {
			s += math.Abs(float64(a[i*n+j]))
		}
		normA = max(normA, s)
	}
	normX, normR := 0.0, 0.0
	for i := range n {
		normX = max(normX, math.Abs(float64(x[i])))
		r := float64(b[i])
		for j := range n {
			r -= float64(a[i*n+j]) * float64(x[j])
		}
		normR = max(normR, math.Abs(r))
	}
	return normR / (float64(n) * normA * normX * eps)
}

// epsOf is T's machine epsilon.
func epsOf[T Float]() float64 {
	if isFloat32[T]() {
		return 0x1p-23
	}
	return 0x1p-52
}

// frobenius is ‖a‖_F.
func frobenius[T Float](a []T) float64 {
	s := 0.0
	for _, v := range a {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}
