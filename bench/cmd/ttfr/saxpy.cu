__device__ float compute(float a, float x, float y) {
	return a * x + y;
}

extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
	size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	if (tid < n) {
		out[tid] = compute(a, x[tid], y[tid]);
	}
}
