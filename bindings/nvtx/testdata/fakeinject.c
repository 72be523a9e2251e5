// A fake NVTX injection library for the tests: what Nsight Systems does on
// NVTX_INJECTION64_PATH, reduced to a recorder. InitializeInjectionNvtx2
// asks NVTX for its function tables and fills the slots of the calls
// package nvtx makes; each call appends one line to the file that
// FAKE_NVTX_LOG names.
//
// Built by the tests: gcc -shared -fPIC -I.. (the package directory, for nvtx3/).
#define NVTX_NO_IMPL
#include "nvtx3/nvToolsExt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int inits;

static void logline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logline(const char *fmt, ...) {
	va_list ap;
	pthread_mutex_lock(&mu);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
	pthread_mutex_unlock(&mu);
}

// Pushed ranges are per thread in NVTX: so is the fake's depth, and a pop
// on a thread with nothing pushed is recorded as such.
static __thread int depth;
static __thread int ddepth[8];

static uint64_t nextID = 100;

struct dom {
	int id;
};
static int ndomains;

static int did(nvtxDomainHandle_t d) { return d ? ((struct dom *)d)->id : 0; }

// attrs formats an event's attributes; a bad version or size shows.
static const char *attrs(const nvtxEventAttributes_t *a, char *buf, size_t n) {
	char color[32], payload[64];
	if (a->version != NVTX_VERSION || a->size != NVTX_EVENT_ATTRIB_STRUCT_SIZE) {
		snprintf(buf, n, "BAD version=%u size=%u", a->version, a->size);
		return buf;
	}
	if (a->colorType == NVTX_COLOR_ARGB) {
		snprintf(color, sizeof color, "0x%08x", a->color);
	} else {
		snprintf(color, sizeof color, "none(%d,0x%x)", a->colorType, a->color);
	}
	switch (a->payloadType) {
	case NVTX_PAYLOAD_UNKNOWN:
		snprintf(payload, sizeof payload, "none");
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
		snprintf(payload, sizeof payload, "uint64:%llu", (unsigned long long)a->payload.ullValue);
		break;
	case NVTX_PAYLOAD_TYPE_INT64:
		snprintf(payload, sizeof payload, "int64:%lld", (long long)a->payload.llValue);
		break;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		snprintf(payload, sizeof payload, "double:%g", a->payload.dValue);
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		snprintf(payload, sizeof payload, "uint32:%u", a->payload.uiValue);
		break;
	case NVTX_PAYLOAD_TYPE_INT32:
		snprintf(payload, sizeof payload, "int32:%d", a->payload.iValue);
		break;
	case NVTX_PAYLOAD_TYPE_FLOAT:
		snprintf(payload, sizeof payload, "float:%g", (double)a->payload.fValue);
		break;
	default:
		snprintf(payload, sizeof payload, "type%d", a->payloadType);
	}
	if (a->messageType != NVTX_MESSAGE_TYPE_ASCII) {
		snprintf(buf, n, "BAD messageType=%d", a->messageType);
		return buf;
	}
	snprintf(buf, n, "\"%s\" cat=%u color=%s payload=%s", a->message.ascii, a->category, color, payload);
	return buf;
}

#define ATTRS(a) char abuf[1024]; attrs(a, abuf, sizeof abuf)

static void markA(const char *m) { logline("MarkA \"%s\"", m); }
static void markEx(const nvtxEventAttributes_t *a) {
	ATTRS(a);
	logline("MarkEx %s", abuf);
}
static int pushA(const char *m) {
	logline("RangePushA \"%s\" level=%d", m, depth);
	return depth++;
}
static int pushEx(const nvtxEventAttributes_t *a) {
	ATTRS(a);
	logline("RangePushEx %s level=%d", abuf, depth);
	return depth++;
}
static int pop(void) {
	if (depth == 0) {
		logline("RangePop nothing pushed on this thread");
		return -1;
	}
	--depth;
	logline("RangePop level=%d", depth);
	return depth;
}
static nvtxRangeId_t startA(const char *m) {
	pthread_mutex_lock(&mu);
	nvtxRangeId_t id = nextID++;
	pthread_mutex_unlock(&mu);
	logline("RangeStartA \"%s\" -> %llu", m, (unsigned long long)id);
	return id;
}
static nvtxRangeId_t startEx(const nvtxEventAttributes_t *a) {
	ATTRS(a);
	pthread_mutex_lock(&mu);
	nvtxRangeId_t id = nextID++;
	pthread_mutex_unlock(&mu);
	logline("RangeStartEx %s -> %llu", abuf, (unsigned long long)id);
	return id;
}
static void end(nvtxRangeId_t id) { logline("RangeEnd %llu", (unsigned long long)id); }
static void nameCategoryA(uint32_t c, const char *name) { logline("NameCategoryA %u \"%s\"", c, name); }
static void nameOsThreadA(uint32_t tid, const char *name) { logline("NameOsThreadA %u \"%s\"", tid, name); }

static nvtxDomainHandle_t domainCreateA(const char *name) {
	struct dom *d = calloc(1, sizeof *d);
	pthread_mutex_lock(&mu);
	d->id = ++ndomains;
	pthread_mutex_unlock(&mu);
	logline("DomainCreateA \"%s\" -> d%d", name, d->id);
	return (nvtxDomainHandle_t)d;
}
static void domainDestroy(nvtxDomainHandle_t d) { logline("DomainDestroy d%d", did(d)); }
static void domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
	ATTRS(a);
	logline("DomainMarkEx d%d %s", did(d), abuf);
}
static int domainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
	ATTRS(a);
	int i = did(d) & 7;
	logline("DomainRangePushEx d%d %s level=%d", did(d), abuf, ddepth[i]);
	return ddepth[i]++;
}
static int domainPop(nvtxDomainHandle_t d) {
	int i = did(d) & 7;
	if (ddepth[i] == 0) {
		logline("DomainRangePop d%d nothing pushed on this thread", did(d));
		return -1;
	}
	--ddepth[i];
	logline("DomainRangePop d%d level=%d", did(d), ddepth[i]);
	return ddepth[i];
}
static nvtxRangeId_t domainStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
	ATTRS(a);
	pthread_mutex_lock(&mu);
	nvtxRangeId_t id = nextID++;
	pthread_mutex_unlock(&mu);
	logline("DomainRangeStartEx d%d %s -> %llu", did(d), abuf, (unsigned long long)id);
	return id;
}
static void domainEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
	logline("DomainRangeEnd d%d %llu", did(d), (unsigned long long)id);
}
static void domainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *name) {
	logline("DomainNameCategoryA d%d %u \"%s\"", did(d), c, name);
}

// set fills slot id of a module's table, if NVTX's table has it.
static int set(NvtxFunctionTable table, unsigned int size, unsigned int id, NvtxFunctionPointer fn) {
	if (id >= size || table[id] == NULL) {
		return 0;
	}
	*table[id] = fn;
	return 1;
}

#define FN(f) ((NvtxFunctionPointer)(f))

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
	const char *path = getenv("FAKE_NVTX_LOG");
	if (path == NULL || (out = fopen(path, "a")) == NULL) {
		return 0;
	}
	const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
	const NvtxExportTableVersionInfo *vi = getExportTable(NVTX_ETID_VERSIONINFO);
	if (cb == NULL || cb->struct_size < sizeof *cb || vi == NULL) {
		logline("init: no export table");
		return 0;
	}
	NvtxFunctionTable core, core2;
	unsigned int ncore, ncore2;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &ncore) ||
	    !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &ncore2)) {
		logline("init: no function table");
		return 0;
	}
	int ok = set(core, ncore, NVTX_CBID_CORE_MarkA, FN(markA)) && set(core, ncore, NVTX_CBID_CORE_MarkEx, FN(markEx)) &&
		 set(core, ncore, NVTX_CBID_CORE_RangePushA, FN(pushA)) &&
		 set(core, ncore, NVTX_CBID_CORE_RangePushEx, FN(pushEx)) &&
		 set(core, ncore, NVTX_CBID_CORE_RangePop, FN(pop)) &&
		 set(core, ncore, NVTX_CBID_CORE_RangeStartA, FN(startA)) &&
		 set(core, ncore, NVTX_CBID_CORE_RangeStartEx, FN(startEx)) &&
		 set(core, ncore, NVTX_CBID_CORE_RangeEnd, FN(end)) &&
		 set(core, ncore, NVTX_CBID_CORE_NameCategoryA, FN(nameCategoryA)) &&
		 set(core, ncore, NVTX_CBID_CORE_NameOsThreadA, FN(nameOsThreadA)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainCreateA, FN(domainCreateA)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainDestroy, FN(domainDestroy)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainMarkEx, FN(domainMarkEx)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainRangePushEx, FN(domainPushEx)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainRangePop, FN(domainPop)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainRangeStartEx, FN(domainStartEx)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainRangeEnd, FN(domainEnd)) &&
		 set(core2, ncore2, NVTX_CBID_CORE2_DomainNameCategoryA, FN(domainNameCategoryA));
	if (!ok) {
		logline("init: a slot is missing");
		return 0;
	}
	// Left unset on purpose: the W (wide string) functions, which package
	// nvtx never calls.
	inits++;
	logline("init #%d version=%u", inits, vi->version);
	return 1;
}
