/* Builds fat binaries with the nvFatbin library (used only to make samples). */
#include <nvFatbin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb"); if (!f) return NULL;
  fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET);
  char *b = malloc(*n + 1); fread(b, 1, *n, f); b[*n] = 0; fclose(f); return b;
}
#define CK(x) do { nvFatbinResult r = (x); if (r) { fprintf(stderr, "%s: %s\n", #x, nvFatbinGetErrorString(r)); return 1; } } while (0)
/* usage: out arch cubin ptx ltoir|- opt... */
int main(int argc, char **argv) {
  size_t nc, np, nl = 0;
  char *cubin = slurp(argv[3], &nc), *ptx = slurp(argv[4], &np), *lto = NULL;
  if (strcmp(argv[5], "-")) lto = slurp(argv[5], &nl);
  nvFatbinHandle h;
  CK(nvFatbinCreate(&h, (const char **)argv + 6, argc - 6));
  CK(nvFatbinAddCubin(h, cubin, nc, argv[2], "cubin_ident"));
  CK(nvFatbinAddPTX(h, ptx, np, argv[2], "ptx_ident", "-O3 -lineinfo"));
  if (lto) CK(nvFatbinAddLTOIR(h, lto, nl, argv[2], "lto_ident", "-O2"));
  size_t sz; CK(nvFatbinSize(h, &sz));
  void *buf = malloc(sz); CK(nvFatbinGet(h, buf));
  FILE *f = fopen(argv[1], "wb"); fwrite(buf, 1, sz, f); fclose(f);
  CK(nvFatbinDestroy(&h));
  return 0;
}
