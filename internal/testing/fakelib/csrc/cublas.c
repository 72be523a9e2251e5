/* A stand-in for libcublas.so.13: what package blas calls to make and
   configure its handle, and cublasSgemm_v2, which counts its calls and
   keeps the arguments of the last one (cudago_fake_last). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FAKE_HANDLE 0xb1a5

static long long calls;
static long long last[14];

int cublasCreate_v2(uintptr_t *h) { *h = FAKE_HANDLE; return 0; }
int cublasDestroy_v2(uintptr_t h) { (void)h; return 0; }
int cublasSetStream_v2(uintptr_t h, uintptr_t s) { (void)h; (void)s; return 0; }
int cublasSetWorkspace_v2(uintptr_t h, void *p, size_t n) { (void)h; (void)p; (void)n; return 0; }
int cublasSetPointerMode_v2(uintptr_t h, int m) { (void)h; (void)m; return 0; }
int cublasSetMathMode(uintptr_t h, int m) { (void)h; (void)m; return 0; }
int cublasGetProperty(int t, int *v) { *v = t == 0 ? 13 : t == 1 ? 1 : 0; return 0; }
const char *cublasGetStatusName(int s) { (void)s; return "CUBLAS_STATUS_FAKE"; }
const char *cublasGetStatusString(int s) { (void)s; return "status of the fake cuBLAS"; }

static long long bits(float f) { unsigned u; memcpy(&u, &f, 4); return u; }

int cublasSgemm_v2(uintptr_t h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
		const float *b, int ldb, const float *beta, float *c, int ldc) {
	long long v[14] = {(long long)h, ta, tb, m, n, k, bits(*alpha), (long long)(uintptr_t)a, lda,
		(long long)(uintptr_t)b, ldb, bits(*beta), (long long)(uintptr_t)c, ldc};
	memcpy(last, v, sizeof last);
	calls++;
	return 0;
}

long long cudago_fake_calls(void) { return calls; }
int cudago_fake_last(long long *out, int n) {
	int m = n < 14 ? n : 14;
	memcpy(out, last, m * sizeof *out);
	return 14;
}
