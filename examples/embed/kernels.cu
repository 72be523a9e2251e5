// SAXPY, compiled by 'go generate' (see gen.go) into kernels.fatbin, which
// main.go embeds.
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		out[i] = a * x[i] + y[i];
	}
}
