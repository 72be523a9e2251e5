extern "C" __global__ void noargs() {}

extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = a * x[i] + y[i];
}

extern "C" __global__ void mixed(float *out, int a, float b, double c, long long d,
		unsigned char e, short f, float *g) {
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		out[0] = (float)a + b + (float)c + (float)d + (float)e + (float)f + g[0];
	}
}
