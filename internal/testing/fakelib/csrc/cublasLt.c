/* A stand-in for libcublasLt.so.13: the handle that package blas makes
   beside cuBLAS's. */
#include <stdint.h>

int cublasLtCreate(uintptr_t *h) { *h = 0x17; return 0; }
int cublasLtDestroy(uintptr_t h) { (void)h; return 0; }
int cublasLtGetProperty(int t, int *v) { *v = t == 0 ? 13 : t == 1 ? 1 : 0; return 0; }
