package rng

import (
	"math"
	"math/bits"
)

// Pure-Go references for the sequences whose layout is exact: they check
// cuRAND's host generator on the CPU (host_test.go) and the device
// generator on the GPU (gpu_test.go), without trusting either.

// philox4x32_10 is one Philox-4x32-10 block (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC11; the constants of
// curand_philox4x32_x.h).
func philox4x32_10(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for range 10 {
		hi0, lo0 := bits.Mul32(0xD2511F53, ctr[0])
		hi1, lo1 := bits.Mul32(0xCD9E8D57, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
		key[0] += 0x9E3779B9
		key[1] += 0xBB67AE85
	}
	return ctr
}

// philoxSubsequences is how many Philox subsequences cuRAND's host API
// interleaves, 4 values at a time: value p of the sequence is element p%4
// of block counter p/4/65536 of subsequence p/4%65536 (found on the host
// generator, and checked against it in TestHostPhiloxReference).
const philoxSubsequences = 65536

// philoxRef is what cuRAND's Philox4_32_10 generator gives for n raw
// values from offset off with seed.
func philoxRef(seed, off uint64, n int) []uint32 {
	key := [2]uint32{uint32(seed), uint32(seed >> 32)}
	out := make([]uint32, n)
	var cached uint64 = math.MaxUint64
	var block [4]uint32
	for i := range out {
		p := off + uint64(i)
		if j := p / 4; j != cached {
			sub, c := j%philoxSubsequences, j/philoxSubsequences
			block = philox4x32_10([4]uint32{uint32(c), uint32(c >> 32), uint32(sub), uint32(sub >> 32)}, key)
			cached = j
		}
		out[i] = block[p%4]
	}
	return out
}

// uniformOf is cuRAND's float32 of a raw value, x·2⁻³² + 2⁻³³ in (0, 1]
// (curand_uniform.h). Both steps are exact or once-rounded in float32, so
// an FMA on the GPU gives the same bits.
func uniformOf(x uint32) float32 {
	return float32(x)*(1.0/4294967296.0) + 1.0/8589934592.0
}

// joeKuo holds Joe and Kuo's direction numbers (new-joe-kuo-6.21201) for
// dimensions 2 to 7: degree s, coefficients a, initial m. Dimension 1 is
// the van der Corput sequence.
var joeKuo = []struct {
	s, a uint32
	m    []uint32
}{
	{1, 0, []uint32{1}},
	{2, 1, []uint32{1, 3}},
	{3, 1, []uint32{1, 3, 1}},
	{3, 2, []uint32{1, 1, 1}},
	{4, 1, []uint32{1, 1, 3, 3}},
	{4, 4, []uint32{1, 3, 5, 13}},
}

// sobolDirections32 returns the 32 direction vectors of dimension d
// (0-based, d <= len(joeKuo)).
func sobolDirections32(d int) [32]uint32 {
	var v [32]uint32
	if d == 0 {
		for k := range v {
			v[k] = 1 << (31 - k)
		}
		return v
	}
	jk := joeKuo[d-1]
	s := int(jk.s)
	m := make([]uint32, 32)
	copy(m, jk.m)
	for k := s; k < 32; k++ {
		// m_k = 2a₁m_{k-1} ⊕ 4a₂m_{k-2} ⊕ … ⊕ 2^{s-1}a_{s-1}m_{k-s+1} ⊕ 2^s m_{k-s} ⊕ m_{k-s}
		x := m[k-s] ^ m[k-s]<<s
		for i := 1; i < s; i++ {
			if jk.a>>(s-1-i)&1 == 1 {
				x ^= m[k-i] << i
			}
		}
		m[k] = x
	}
	for k := range v {
		v[k] = m[k] << (31 - k)
	}
	return v
}

// sobol32Ref is what cuRAND's Sobol32 generator gives for n raw values in
// dims dimensions from offset off: n/dims points of dimension 1, then of
// dimension 2, …; point k is the XOR of the direction vectors of the set
// bits of k's Gray code (point 0 is 0).
func sobol32Ref(dims int, off uint64, n int) []uint32 {
	out := make([]uint32, 0, n)
	per := n / dims
	for d := range dims {
		v := sobolDirections32(d)
		for i := range per {
			k := off + uint64(i)
			g := k ^ k>>1
			var x uint32
			for b := 0; g != 0; b, g = b+1, g>>1 {
				if g&1 == 1 {
					x ^= v[b]
				}
			}
			out = append(out, x)
		}
	}
	return out
}

// sobol64Dim1Ref is Sobol64's first dimension, the 64-bit van der Corput
// sequence in Gray-code order.
func sobol64Dim1Ref(off uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		k := off + uint64(i)
		out[i] = bits.Reverse64(k ^ k>>1)
	}
	return out
}
