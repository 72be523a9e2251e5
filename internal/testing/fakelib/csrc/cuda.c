/* A stand-in for libcuda.so.1: the driver entry points that package core
   calls to open device 0, its primary context and a stream, allocate from
   the stream-ordered pool, copy, record and time events and synchronize.
   Every one returns CUDA_SUCCESS at once; there is no device behind them. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int CUresult;

static __thread uintptr_t current;
static unsigned long long next_ptr = 0x7f0000000000ULL;
static uintptr_t next_handle = 0x5000;

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char *b, int n, int d) { (void)d; strncpy(b, "cudago fake GPU", n); return 0; }
CUresult cuDeviceGetUuid(void *u, int d) { (void)d; memset(u, 0x11, 16); return 0; }
CUresult cuDeviceGetUuid_v2(void *u, int d) { return cuDeviceGetUuid(u, d); }
CUresult cuDeviceGetPCIBusId(char *b, int n, int d) { (void)d; strncpy(b, "0000:00:00.0", n); return 0; }
CUresult cuDeviceTotalMem_v2(size_t *m, int d) { (void)d; *m = 80ULL << 30; return 0; }

/* An H100's attributes where core reads them; 1 (supported) elsewhere. */
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
	(void)d;
	switch (a) {
	case 1: case 2: case 3: *v = 1024; break;  /* threads per block, block x, y */
	case 4: *v = 64; break;                    /* block z */
	case 5: *v = 2147483647; break;            /* grid x */
	case 6: case 7: *v = 65535; break;         /* grid y, z */
	case 8: *v = 49152; break;                 /* shared memory per block */
	case 10: *v = 32; break;                   /* warp size */
	case 16: *v = 132; break;                  /* multiprocessors */
	case 75: *v = 9; break;                    /* compute capability */
	case 76: *v = 0; break;
	case 97: *v = 232448; break;               /* shared memory per block, opt-in */
	default: *v = 1;
	}
	return 0;
}

CUresult cuDevicePrimaryCtxRetain(uintptr_t *c, int d) { (void)d; *c = 0xc7c7; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxGetCurrent(uintptr_t *c) { *c = current; return 0; }
CUresult cuCtxSetCurrent(uintptr_t c) { current = c; return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }

CUresult cuStreamCreate(uintptr_t *s, unsigned flags) { (void)flags; *s = __atomic_fetch_add(&next_handle, 1, __ATOMIC_RELAXED); return 0; }
CUresult cuStreamCreateWithPriority(uintptr_t *s, unsigned flags, int p) { (void)p; return cuStreamCreate(s, flags); }
CUresult cuStreamDestroy_v2(uintptr_t s) { (void)s; return 0; }
CUresult cuStreamSynchronize(uintptr_t s) { (void)s; return 0; }
CUresult cuStreamQuery(uintptr_t s) { (void)s; return 0; }
CUresult cuStreamWaitEvent(uintptr_t s, uintptr_t e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
CUresult cuStreamIsCapturing(uintptr_t s, int *st) { (void)s; *st = 0; return 0; }

CUresult cuEventCreate(uintptr_t *e, unsigned flags) { (void)flags; *e = __atomic_fetch_add(&next_handle, 1, __ATOMIC_RELAXED); return 0; }
CUresult cuEventDestroy_v2(uintptr_t e) { (void)e; return 0; }
CUresult cuEventRecord(uintptr_t e, uintptr_t s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(uintptr_t e) { (void)e; return 0; }
CUresult cuEventQuery(uintptr_t e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, uintptr_t a, uintptr_t b) { (void)a; (void)b; *ms = 1; return 0; }
CUresult cuEventElapsedTime_v2(float *ms, uintptr_t a, uintptr_t b) { return cuEventElapsedTime(ms, a, b); }

CUresult cuDeviceGetDefaultMemPool(uintptr_t *p, int d) { (void)d; *p = 0x9000; return 0; }
CUresult cuDeviceGetMemPool(uintptr_t *p, int d) { (void)d; *p = 0x9000; return 0; }
CUresult cuMemPoolSetAttribute(uintptr_t p, int a, void *v) { (void)p; (void)a; (void)v; return 0; }
CUresult cuMemPoolGetAttribute(uintptr_t p, int a, void *v) { (void)p; (void)a; memset(v, 0, 8); return 0; }

/* Distinct, 1 MiB-aligned addresses that no Go pointer can equal. */
CUresult cuMemAllocAsync(unsigned long long *p, size_t n, uintptr_t s) {
	(void)s;
	*p = __atomic_fetch_add(&next_ptr, (n + 0xfffff) & ~0xfffffULL, __ATOMIC_RELAXED);
	return 0;
}
CUresult cuMemAllocFromPoolAsync(unsigned long long *p, size_t n, uintptr_t pool, uintptr_t s) { (void)pool; return cuMemAllocAsync(p, n, s); }
CUresult cuMemFreeAsync(unsigned long long p, uintptr_t s) { (void)p; (void)s; return 0; }
CUresult cuMemsetD32Async(unsigned long long p, unsigned v, size_t n, uintptr_t s) { (void)p; (void)v; (void)n; (void)s; return 0; }

/* Copies copy nothing: there is no memory behind the device addresses. */
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *h, size_t n, uintptr_t s) { (void)d; (void)h; (void)n; (void)s; return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *h, unsigned long long d, size_t n, uintptr_t s) { (void)d; (void)h; (void)n; (void)s; return 0; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) { (void)d; (void)h; (void)n; return 0; }
CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) { (void)d; (void)h; (void)n; return 0; }

CUresult cuGetErrorString(int r, const char **s) { (void)r; *s = "error of the fake driver"; return 0; }
CUresult cuGetErrorName(int r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return 0; }
