__device__ int counter;
__managed__ float managed_v[16];
__constant__ float table[64] = {1, 2, 3, 4};
__device__ __noinline__ float helper(float x, int n) { float s = 0; for (int i = 0; i < n; i++) s += sinf(x * i) * table[i % 64]; return s; }
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
template <typename T, int B>
__global__ void reduce(const T *in, T *out, int n) {
  __shared__ T sm[B];
  T v = 0;
  for (int i = blockIdx.x * B + threadIdx.x; i < n; i += gridDim.x * B) v += in[i];
  sm[threadIdx.x] = v; __syncthreads();
  for (int s = B / 2; s > 0; s >>= 1) { if (threadIdx.x < s) sm[threadIdx.x] += sm[threadIdx.x + s]; __syncthreads(); }
  if (threadIdx.x == 0) atomicAdd(out, sm[0]);
}
template __global__ void reduce<float, 256>(const float *, float *, int);
template __global__ void reduce<double, 128>(const double *, double *, int);
template __global__ void reduce<int, 512>(const int *, int *, int);
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void withprintf(int *p) { printf("hello %d %f\n", p[threadIdx.x], helper(1.0f, p[0])); }
extern "C" __global__ void local(int *p, int n) { int arr[64]; for (int i = 0; i < 64; i++) arr[i] = p[i] * n; p[threadIdx.x] = arr[(threadIdx.x * n) % 64] + fib(n); }
extern "C" __global__ void dyn(float *p) { extern __shared__ float d[]; d[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x] + managed_v[threadIdx.x % 16]; }
extern "C" __global__ void clk(long long *p) { p[threadIdx.x] = clock64() + counter; }
extern "C" __global__ void shfl(float *p) { float v = p[threadIdx.x]; for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o); if (threadIdx.x % 32 == 0) p[threadIdx.x] = v; }
extern "C" __global__ void tex(cudaTextureObject_t t, float *p) { p[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
extern "C" __global__ void heap(int n) { int *q = (int *)malloc(n * 4); q[0] = n; free(q); }
extern "C" __global__ void __launch_bounds__(128, 4) bounded(float *p) { p[threadIdx.x] *= 2; }
template <int N> __global__ void unrolled(float *p, const float *q) {
  float acc = 0;
#pragma unroll
  for (int i = 0; i < N; i++) acc += sinf(q[threadIdx.x + i]) * p[i];
  p[threadIdx.x] = acc;
}
template __global__ void unrolled<2>(float *, const float *);
template __global__ void unrolled<4>(float *, const float *);
template __global__ void unrolled<6>(float *, const float *);
template __global__ void unrolled<8>(float *, const float *);
template __global__ void unrolled<10>(float *, const float *);
