// The C twin of bench/cmd/ttfr: only what the driver must do to run saxpy
// from a fatbin file: cuInit, the primary context, module load, launch,
// sync (plus the copies to check the result). Prints one JSON line like
// ttfr. Build on the GPU machine:
//   gcc -O2 -o ttfr_c bench/ttfr/ttfr.c -I/usr/local/cuda/include -lcuda
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "ttfr_c: %s failed: %d\n", #x, (int)r_); return 1; } } while (0)

static double last;
static int nph;
static char ph[16][96];

static void mark(const char *name) {
	double t = now_ms();
	snprintf(ph[nph++], sizeof ph[0], "{\"name\":\"%s\",\"ms\":%.3f}", name, t - last);
	last = t;
}

int main(int argc, char **argv) {
	double start = now_ms();
	last = start;
	if (argc != 2) {
		fprintf(stderr, "usage: ttfr_c saxpy.fatbin\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) { perror(argv[1]); return 1; }
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *image = malloc(size);
	if (fread(image, 1, size, f) != (size_t)size) { perror("read"); return 1; }
	fclose(f);
	CK(cuInit(0));
	CUdevice dev;
	CUcontext ctx;
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	mark("device");
	CUmodule mod;
	CUfunction fn;
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&fn, mod, "saxpy"));
	mark("load");
	enum { N = 128 * 32 };
	static float x[N], y[N], out[N];
	float a = 5.1f;
	for (int i = 0; i < N; i++) { x[i] = i; y[i] = 2 * i; }
	CUdeviceptr dx, dy, dout;
	CK(cuMemAlloc(&dx, sizeof x));
	CK(cuMemAlloc(&dy, sizeof y));
	CK(cuMemAlloc(&dout, sizeof out));
	CK(cuMemcpyHtoD(dx, x, sizeof x));
	CK(cuMemcpyHtoD(dy, y, sizeof y));
	mark("alloc+copy in");
	size_t n = N;
	void *args[] = {&a, &dx, &dy, &dout, &n};
	CK(cuLaunchKernel(fn, 32, 1, 1, 128, 1, 1, 0, 0, args, NULL));
	CK(cuCtxSynchronize());
	mark("launch+sync");
	CK(cuMemcpyDtoH(out, dout, sizeof out));
	for (int i = 0; i < N; i++) {
		float want = a * x[i] + y[i], d = out[i] - want;
		if (d > 1e-3f * want || d < -1e-3f * want) {
			fprintf(stderr, "ttfr_c: out[%d] = %g, want %g\n", i, out[i], want);
			return 1;
		}
	}
	mark("copy out+check");
	printf("{\"stack\":\"C\",\"total_ms\":%.3f,\"phases\":[", now_ms() - start);
	for (int i = 0; i < nph; i++) printf("%s%s", i ? "," : "", ph[i]);
	printf("]}\n");
	return 0;
}
