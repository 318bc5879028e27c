/* NCCL types every plugin interface uses, vendored as ABI facts (values and layouts from
 * NVIDIA/nccl src/include/nccl_common.h and src/include/plugin/ (all headers) of v2.28.9-1 and
 * v2.30.7-1; see docs/design.md §6.13, §6.14). NCCL installs none of these
 * headers, so plugins carry their own copy; the static asserts keep this copy honest. */
#ifndef NCCLBPF_NCCL_COMMON_H
#define NCCLBPF_NCCL_COMMON_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
	/* 2.30 inserts ncclTimeout = 8; we never return it. */
} ncclResult_t;

/* The tuner only ever sees the first five (§6.4). */
typedef enum {
	ncclFuncBroadcast = 0,
	ncclFuncReduce = 1,
	ncclFuncAllGather = 2,
	ncclFuncReduceScatter = 3,
	ncclFuncAllReduce = 4,
	ncclFuncSendRecv = 5,
	ncclFuncSend = 6,
	ncclFuncRecv = 7,
	ncclFuncAlltoAll = 8,
	ncclFuncScatter = 9,
	ncclFuncGather = 10,
} ncclFunc_t;

typedef enum {
	NCCL_LOG_NONE = 0,
	NCCL_LOG_VERSION = 1,
	NCCL_LOG_WARN = 2,
	NCCL_LOG_INFO = 3,
	NCCL_LOG_ABORT = 4,
	NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
	NCCL_INIT = 0x1,
	NCCL_COLL = 0x2,
	NCCL_P2P = 0x4,
	NCCL_SHM = 0x8,
	NCCL_NET = 0x10,
	NCCL_GRAPH = 0x20,
	NCCL_TUNING = 0x40,
	NCCL_ENV = 0x80,
	NCCL_ALLOC = 0x100,
	NCCL_CALL = 0x200,
	NCCL_PROXY = 0x400,
	NCCL_NVLS = 0x800,
	NCCL_BOOTSTRAP = 0x1000,
	NCCL_REG = 0x2000,
	NCCL_PROFILE = 0x4000,
	NCCL_RAS = 0x8000,
	NCCL_ALL = ~0
} ncclDebugLogSubSys;

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
				  int line, const char *fmt, ...);

/* Enums are passed as int in every ABI we implement. */
_Static_assert(sizeof(ncclResult_t) == 4, "ncclResult_t is a 4-byte enum");
_Static_assert(sizeof(ncclFunc_t) == 4, "ncclFunc_t is a 4-byte enum");
_Static_assert(sizeof(ncclDebugLogLevel) == 4, "ncclDebugLogLevel is a 4-byte enum");

#endif
