// NVTX 3's own implementation, compiled into package nvtx: nvToolsExt.h
// defines the API as inline functions that dispatch through a table in
// this object, filled on first use by the injection library that
// NVTX_INJECTION64_PATH names (see the package doc). The headers are the
// unmodified copies in nvtx3/.
#include <stdlib.h>
#include <string.h>

#include "nvtx3/nvToolsExt.h"
#include "nvtx_c.h"

// The Go constants that mirror NVTX's (nvtx.go).
_Static_assert(NVTX_NO_PUSH_POP_TRACKING == -2, "nvtx.NoPushPopTracking");
_Static_assert(NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 == 1 && NVTX_PAYLOAD_TYPE_INT64 == 2 &&
		       NVTX_PAYLOAD_TYPE_DOUBLE == 3 && NVTX_PAYLOAD_TYPE_UNSIGNED_INT32 == 4 &&
		       NVTX_PAYLOAD_TYPE_INT32 == 5 && NVTX_PAYLOAD_TYPE_FLOAT == 6,
	       "nvtx payload kinds");
_Static_assert(sizeof(nvtxRangeId_t) == 8, "nvtx.RangeID is uint64");

#define SLOT(name) ((void *)&NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).name##_impl_fnptr)

void *const cg_nvtx_slots[CG_NSLOTS] = {
	[CG_SLOT_MARK_A] = SLOT(nvtxMarkA),
	[CG_SLOT_MARK_EX] = SLOT(nvtxMarkEx),
	[CG_SLOT_PUSH_A] = SLOT(nvtxRangePushA),
	[CG_SLOT_PUSH_EX] = SLOT(nvtxRangePushEx),
	[CG_SLOT_POP] = SLOT(nvtxRangePop),
	[CG_SLOT_START_A] = SLOT(nvtxRangeStartA),
	[CG_SLOT_START_EX] = SLOT(nvtxRangeStartEx),
	[CG_SLOT_END] = SLOT(nvtxRangeEnd),
	[CG_SLOT_NAME_CATEGORY_A] = SLOT(nvtxNameCategoryA),
	[CG_SLOT_NAME_OS_THREAD_A] = SLOT(nvtxNameOsThreadA),
	[CG_SLOT_DOMAIN_MARK_EX] = SLOT(nvtxDomainMarkEx),
	[CG_SLOT_DOMAIN_PUSH_EX] = SLOT(nvtxDomainRangePushEx),
	[CG_SLOT_DOMAIN_POP] = SLOT(nvtxDomainRangePop),
	[CG_SLOT_DOMAIN_START_EX] = SLOT(nvtxDomainRangeStartEx),
	[CG_SLOT_DOMAIN_END] = SLOT(nvtxDomainRangeEnd),
	[CG_SLOT_DOMAIN_NAME_CATEGORY_A] = SLOT(nvtxDomainNameCategoryA),
	[CG_SLOT_DOMAIN_CREATE_A] = SLOT(nvtxDomainCreateA),
	[CG_SLOT_DOMAIN_DESTROY] = SLOT(nvtxDomainDestroy),
};

void cg_nvtx_initialize(void) { nvtxInitialize(NULL); }

// A name this long or longer is copied to the heap; shorter ones (nearly
// all) to the stack.
enum { CG_BUF = 256 };

// cstr is a NUL-terminated copy of the Go string (p, n): in buf, or in
// *heap (to be freed) when it does not fit. A string that cannot be
// allocated is cut to fit buf rather than dropped.
static const char *cstr(const char *p, size_t n, char *buf, char **heap) {
	char *d = buf;
	*heap = NULL;
	if (n >= CG_BUF) {
		*heap = malloc(n + 1);
		if (*heap != NULL) {
			d = *heap;
		} else {
			n = CG_BUF - 1;
		}
	}
	if (n > 0) {
		memcpy(d, p, n);
	}
	d[n] = 0;
	return d;
}

// WITH_STR declares s, the C copy of (p, n), for the statement that follows.
#define WITH_STR(s) \
	char s##_buf[CG_BUF], *s##_heap; \
	const char *s = cstr(p, n, s##_buf, &s##_heap);
#define FREE_STR(s) free(s##_heap)

static nvtxEventAttributes_t attributes(const char *msg, uint32_t category, uint32_t color, int32_t ptype,
					uint64_t payload) {
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	if (color != 0) {
		a.colorType = NVTX_COLOR_ARGB;
		a.color = color;
	}
	a.payloadType = ptype;
	switch (ptype) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
	case NVTX_PAYLOAD_TYPE_INT32:
	case NVTX_PAYLOAD_TYPE_FLOAT:
		// The 32-bit kinds are the union's 32-bit members: Go passes their bits in the low half.
		a.payload.uiValue = (uint32_t)payload;
		break;
	default:
		a.payload.ullValue = payload;
	}
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

#define ATTRS(s) attributes(s, category, color, ptype, payload)

void cg_nvtx_mark(const char *p, size_t n) {
	WITH_STR(s)
	nvtxMarkA(s);
	FREE_STR(s);
}

int cg_nvtx_push(const char *p, size_t n) {
	WITH_STR(s)
	int r = nvtxRangePushA(s);
	FREE_STR(s);
	return r;
}

int cg_nvtx_pop(void) { return nvtxRangePop(); }

uint64_t cg_nvtx_start(const char *p, size_t n) {
	WITH_STR(s)
	uint64_t id = nvtxRangeStartA(s);
	FREE_STR(s);
	return id;
}

void cg_nvtx_end(uint64_t id) { nvtxRangeEnd(id); }

void cg_nvtx_name_category(uint32_t category, const char *p, size_t n) {
	WITH_STR(s)
	nvtxNameCategoryA(category, s);
	FREE_STR(s);
}

void cg_nvtx_name_os_thread(uint32_t tid, const char *p, size_t n) {
	WITH_STR(s)
	nvtxNameOsThreadA(tid, s);
	FREE_STR(s);
}

void cg_nvtx_mark_ex(const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	WITH_STR(s)
	nvtxEventAttributes_t a = ATTRS(s);
	nvtxMarkEx(&a);
	FREE_STR(s);
}

int cg_nvtx_push_ex(const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	WITH_STR(s)
	nvtxEventAttributes_t a = ATTRS(s);
	int r = nvtxRangePushEx(&a);
	FREE_STR(s);
	return r;
}

uint64_t cg_nvtx_start_ex(const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype,
			  uint64_t payload) {
	WITH_STR(s)
	nvtxEventAttributes_t a = ATTRS(s);
	uint64_t id = nvtxRangeStartEx(&a);
	FREE_STR(s);
	return id;
}

#define DOMAIN(d) ((nvtxDomainHandle_t)(d))

uintptr_t cg_nvtx_domain_create(const char *p, size_t n) {
	WITH_STR(s)
	nvtxDomainHandle_t d = nvtxDomainCreateA(s);
	FREE_STR(s);
	return (uintptr_t)d;
}

void cg_nvtx_domain_destroy(uintptr_t d) { nvtxDomainDestroy(DOMAIN(d)); }

void cg_nvtx_domain_mark(uintptr_t d, const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype,
			 uint64_t payload) {
	WITH_STR(s)
	nvtxEventAttributes_t a = ATTRS(s);
	nvtxDomainMarkEx(DOMAIN(d), &a);
	FREE_STR(s);
}

int cg_nvtx_domain_push(uintptr_t d, const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype,
			uint64_t payload) {
	WITH_STR(s)
	nvtxEventAttributes_t a = ATTRS(s);
	int r = nvtxDomainRangePushEx(DOMAIN(d), &a);
	FREE_STR(s);
	return r;
}

int cg_nvtx_domain_pop(uintptr_t d) { return nvtxDomainRangePop(DOMAIN(d)); }

uint64_t cg_nvtx_domain_start(uintptr_t d, const char *p, size_t n, uint32_t category, uint32_t color, int32_t ptype,
			      uint64_t payload) {
	WITH_STR(s)
	nvtxEventAttributes_t a = ATTRS(s);
	uint64_t id = nvtxDomainRangeStartEx(DOMAIN(d), &a);
	FREE_STR(s);
	return id;
}

void cg_nvtx_domain_end(uintptr_t d, uint64_t id) { nvtxDomainRangeEnd(DOMAIN(d), id); }

void cg_nvtx_domain_name_category(uintptr_t d, uint32_t category, const char *p, size_t n) {
	WITH_STR(s)
	nvtxDomainNameCategoryA(DOMAIN(d), category, s);
	FREE_STR(s);
}
