// The C side of package nvtx (nvtx.c): thin wrappers of NVTX 3's inline
// API that take Go strings as pointer and length, and the addresses of
// NVTX's dispatch slots, which Go reads to skip the cgo call when no tool
// is attached.
#ifndef CUDAGO_NVTX_C_H
#define CUDAGO_NVTX_C_H

#include <stddef.h>
#include <stdint.h>

// Indexes into cg_nvtx_slots: one per NVTX function this package calls.
enum {
	CG_SLOT_MARK_A,
	CG_SLOT_MARK_EX,
	CG_SLOT_PUSH_A,
	CG_SLOT_PUSH_EX,
	CG_SLOT_POP,
	CG_SLOT_START_A,
	CG_SLOT_START_EX,
	CG_SLOT_END,
	CG_SLOT_NAME_CATEGORY_A,
	CG_SLOT_NAME_OS_THREAD_A,
	CG_SLOT_DOMAIN_MARK_EX,
	CG_SLOT_DOMAIN_PUSH_EX,
	CG_SLOT_DOMAIN_POP,
	CG_SLOT_DOMAIN_START_EX,
	CG_SLOT_DOMAIN_END,
	CG_SLOT_DOMAIN_NAME_CATEGORY_A,
	CG_SLOT_DOMAIN_CREATE_A,
	CG_SLOT_DOMAIN_DESTROY,
	CG_NSLOTS
};

// cg_nvtx_slots[i] is the address of the function pointer through which
// NVTX dispatches call i: an initialization stub until NVTX has looked for
// a tool, then the tool's function, or NULL when there is none.
extern void *const cg_nvtx_slots[CG_NSLOTS];

// cg_nvtx_initialize runs NVTX's one-time initialization (nvtxInitialize).
void cg_nvtx_initialize(void);

// Strings are Go strings (p, n): copied and NUL-terminated before NVTX
// sees them. The attribute arguments (category, color, payload type and
// bits) fill an nvtxEventAttributes_t: color 0 is no color, payload type
// 0 no payload.
void cg_nvtx_mark(const char *p, size_t n);
int cg_nvtx_push(const char *p, size_t n);
int cg_nvtx_pop(void);
uint64_t cg_nvtx_start(const char *p, size_t n);
void cg_nvtx_end(uint64_t id);
void cg_nvtx_name_category(uint32_t category, const char *p, size_t n);
void cg_nvtx_name_os_thread(uint32_t tid, const char *p, size_t n);

void cg_nvtx_mark_ex(const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
int cg_nvtx_push_ex(const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
uint64_t cg_nvtx_start_ex(const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);

// Domain handles are passed as integers; 0 is NVTX's default domain.
uintptr_t cg_nvtx_domain_create(const char *p, size_t n);
void cg_nvtx_domain_destroy(uintptr_t d);
void cg_nvtx_domain_mark(uintptr_t d, const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
int cg_nvtx_domain_push(uintptr_t d, const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
int cg_nvtx_domain_pop(uintptr_t d);
uint64_t cg_nvtx_domain_start(uintptr_t d, const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
void cg_nvtx_domain_end(uintptr_t d, uint64_t id);
void cg_nvtx_domain_name_category(uintptr_t d, uint32_t category, const char *p, size_t n);

#endif
