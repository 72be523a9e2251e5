/* Probes the entry kinds nvFatbin writes for index, reloc and tile IR images (sample generation only). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int (*create_t)(void **, const char **, size_t);
typedef int (*addidx_t)(void *, const void *, size_t, const char *);
typedef int (*addreloc_t)(void *, const void *, size_t);
typedef int (*addtile_t)(void *, const void *, size_t, const char *, const char *);
typedef int (*addcubin_t)(void *, const void *, size_t, const char *, const char *);
typedef int (*size_t_t)(void *, size_t *);
typedef int (*get_t)(void *, void *);
typedef const char *(*errstr_t)(int);
static char *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb"); if (!f) return NULL;
  fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET);
  char *b = malloc(*n + 1); fread(b, 1, *n, f); b[*n] = 0; fclose(f); return b;
}
int main(int argc, char **argv) {
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { printf("dlopen: %s\n", dlerror()); return 1; }
  create_t create = (create_t)dlsym(lib, "nvFatbinCreate");
  size_t_t sz = (size_t_t)dlsym(lib, "nvFatbinSize");
  get_t get = (get_t)dlsym(lib, "nvFatbinGet");
  errstr_t es = (errstr_t)dlsym(lib, "nvFatbinGetErrorString");
  addcubin_t addcubin = (addcubin_t)dlsym(lib, "nvFatbinAddCubin");
  addidx_t addidx = (addidx_t)dlsym(lib, "nvFatbinAddIndex");
  addreloc_t addreloc = (addreloc_t)dlsym(lib, "nvFatbinAddReloc");
  addtile_t addtile = (addtile_t)dlsym(lib, "nvFatbinAddTileIR");
  printf("index=%p reloc=%p tile=%p\n", (void *)addidx, (void *)addreloc, (void *)addtile);
  size_t nc, nr;
  char *cubin = slurp(argv[3], &nc), *reloc = slurp(argv[4], &nr);
  const char *opts[] = {"-64"};
  void *h; int r = create(&h, opts, 1); printf("create %d\n", r);
  r = addcubin(h, cubin, nc, argv[5], "c"); printf("cubin %d %s\n", r, es(r));
  if (addidx) { const char idx[] = "index-data\n"; r = addidx(h, idx, sizeof idx, "idx"); printf("index %d %s\n", r, es(r)); }
  if (addreloc) { r = addreloc(h, reloc, nr); printf("reloc %d %s\n", r, es(r)); }
  if (addtile) { const char t[] = "tile-ir-bytes"; r = addtile(h, t, sizeof t, "tile", ""); printf("tile %d %s\n", r, es(r)); }
  size_t n; r = sz(h, &n); printf("size %d %zu\n", r, n);
  void *buf = malloc(n); r = get(h, buf); printf("get %d\n", r);
  FILE *f = fopen(argv[2], "wb"); fwrite(buf, 1, n, f); fclose(f);
  return 0;
}
