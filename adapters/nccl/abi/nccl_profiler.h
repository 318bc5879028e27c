/* NCCL profiler plugin interface, versions 4 to 6, vendored as ABI facts from NVIDIA/nccl
 * src/include/plugin/profiler/profiler_v{4,5,6}.h and src/include/plugin/nccl_profiler.h
 * (v4: v2.27.3-1, v5: v2.28.9-1, v6: v2.29.7-1/v2.30.7-1), transcribed in
 * docs/design.md §6.14.
 *
 * NCCL finds the table by symbol name only (ncclProfiler_vN, no "Plugin") and trusts that the
 * name implies the layout, so every size and offset the adapter reads is pinned below. */
#ifndef NCCLBPF_NCCL_PROFILER_H
#define NCCLBPF_NCCL_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_common.h"

typedef pid_t ncclPid_t;

/* Event type bits (activation mask bits and the descriptors' type field). */
enum {
	ncclProfileGroup = (1 << 0),
	ncclProfileColl = (1 << 1),
	ncclProfileP2p = (1 << 2),
	ncclProfileProxyOp = (1 << 3),
	ncclProfileProxyStep = (1 << 4),
	ncclProfileProxyCtrl = (1 << 5),
	ncclProfileKernelCh = (1 << 6),	     /* v3+ (timestamps v4+) */
	ncclProfileNetPlugin = (1 << 7),     /* v3+ */
	ncclProfileGroupApi = (1 << 8),	     /* v5+ */
	ncclProfileCollApi = (1 << 9),	     /* v5+ */
	ncclProfileP2pApi = (1 << 10),	     /* v5+ */
	ncclProfileKernelLaunch = (1 << 11), /* v5+ */
	ncclProfileCeColl = (1 << 12),	     /* v6 */
	ncclProfileCeSync = (1 << 13),	     /* v6 */
	ncclProfileCeBatch = (1 << 14),	     /* v6 */
};

/* One state enum shared by every version. */
typedef enum {
	ncclProfilerProxyOpSendPosted = 0, /* deprecated since v4 */
	ncclProfilerProxyOpSendRemFifoWait = 1,
	ncclProfilerProxyOpSendTransmitted = 2,
	ncclProfilerProxyOpSendDone = 3,
	ncclProfilerProxyOpRecvPosted = 4,
	ncclProfilerProxyOpRecvReceived = 5,
	ncclProfilerProxyOpRecvTransmitted = 6,
	ncclProfilerProxyOpRecvDone = 7,
	ncclProfilerProxyStepSendGPUWait = 8,
	ncclProfilerProxyStepSendWait = 9,
	ncclProfilerProxyStepRecvWait = 10,
	ncclProfilerProxyStepRecvFlushWait = 11,
	ncclProfilerProxyStepRecvGPUWait = 12,
	ncclProfilerProxyCtrlIdle = 13,
	ncclProfilerProxyCtrlActive = 14,
	ncclProfilerProxyCtrlSleep = 15,
	ncclProfilerProxyCtrlWakeup = 16,
	ncclProfilerProxyCtrlAppend = 17,
	ncclProfilerProxyCtrlAppendEnd = 18,
	ncclProfilerProxyOpInProgress_v4 = 19,
	ncclProfilerProxyStepSendPeerWait_v4 = 20,
	ncclProfilerNetPluginUpdate = 21,
	ncclProfilerKernelChStop = 22,
	ncclProfilerGroupStartApiStop = 23, /* v5+ */
	ncclProfilerGroupEndApiStart = 24,  /* v5+ */
	ncclProfilerCeCollStart = 25,	    /* v6: 25..30 defined, not emitted by 2.30.7 */
	ncclProfilerCeBatchComplete = 30,
} ncclProfilerEventState_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v4_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v5_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v6_t;

/* Members common to v4, v5 and v6 (same offsets in all three). */
#define NCCL_PROF_COLL_COMMON                                                                      \
	uint64_t seqNumber;                                                                        \
	const char *func;                                                                          \
	void const *sendBuff;                                                                      \
	void *recvBuff;                                                                            \
	size_t count;                                                                              \
	int root;                                                                                  \
	const char *datatype;                                                                      \
	uint8_t nChannels;                                                                         \
	uint8_t nWarps;                                                                            \
	const char *algo;                                                                          \
	const char *proto;
#define NCCL_PROF_P2P_COMMON                                                                       \
	const char *func;                                                                          \
	void *buff;                                                                                \
	const char *datatype;                                                                      \
	size_t count;                                                                              \
	int peer;                                                                                  \
	uint8_t nChannels;
#define NCCL_PROF_PROXYOP                                                                          \
	struct {                                                                                   \
		ncclPid_t pid;                                                                     \
		uint8_t channelId;                                                                 \
		int peer;                                                                          \
		int nSteps;                                                                        \
		int chunkSize;                                                                     \
		int isSend;                                                                        \
	} proxyOp;                                                                                 \
	struct {                                                                                   \
		int step;                                                                          \
	} proxyStep;                                                                               \
	struct {                                                                                   \
		uint8_t channelId;                                                                 \
		uint64_t pTimer;                                                                   \
	} kernelCh;                                                                                \
	struct {                                                                                   \
		int64_t id;                                                                        \
		void *data;                                                                        \
	} netPlugin;

/* --- v4 (2.27.3) --------------------------------------------------------------------------- */
typedef struct {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			NCCL_PROF_COLL_COMMON
		} coll;
		struct {
			NCCL_PROF_P2P_COMMON
		} p2p;
		NCCL_PROF_PROXYOP
	};
} ncclProfilerEventDescr_v4_t;

typedef union {
	struct {
		size_t transSize;
	} proxyStep;
	struct {
		int appendedProxyOps;
	} proxyCtrl;
	struct {
		void *data;
	} netPlugin;
	struct {
		uint64_t pTimer;
	} kernelCh;
} ncclProfilerEventStateArgs_v4_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v6_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, int *eActivationMask, const char *commName,
			     uint64_t commHash, int nNodes, int nranks, int rank,
			     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle,
				   ncclProfilerEventDescr_v4_t *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_v4_t eState,
					 ncclProfilerEventStateArgs_v4_t *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} ncclProfiler_v4_t;

/* --- v5 (2.28.3) --------------------------------------------------------------------------- */
#define NCCL_PROF_API_MEMBERS                                                                      \
	struct {                                                                                   \
		bool graphCaptured;                                                                \
		int groupDepth;                                                                    \
	} groupApi;                                                                                \
	struct {                                                                                   \
		const char *func;                                                                  \
		size_t count;                                                                      \
		const char *datatype;                                                              \
		int root;                                                                          \
		void *stream;                                                                      \
		bool graphCaptured;                                                                \
	} collApi;                                                                                 \
	struct {                                                                                   \
		const char *func;                                                                  \
		size_t count;                                                                      \
		const char *datatype;                                                              \
		void *stream;                                                                      \
		bool graphCaptured;                                                                \
	} p2pApi;                                                                                  \
	struct {                                                                                   \
		void *stream;                                                                      \
	} kernelLaunch;                                                                            \
	struct {                                                                                   \
		NCCL_PROF_COLL_COMMON                                                              \
		void *parentGroup;                                                                 \
	} coll;                                                                                    \
	struct {                                                                                   \
		NCCL_PROF_P2P_COMMON                                                               \
		void *parentGroup;                                                                 \
	} p2p;

typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		NCCL_PROF_API_MEMBERS
		NCCL_PROF_PROXYOP
	};
} ncclProfilerEventDescr_v5_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,
			     const char *commName, int nNodes, int nranks, int rank,
			     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle,
				   ncclProfilerEventDescr_v5_t *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_v5_t eState,
					 ncclProfilerEventStateArgs_v5_t *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} ncclProfiler_v5_t;

/* --- v6 (2.29.2): v5 plus the copy-engine (CE) members; same size -------------------------- */
typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		NCCL_PROF_API_MEMBERS
		NCCL_PROF_PROXYOP
		struct {
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			const char *syncStrategy;
			bool intraBatchSync;
			uint32_t batchSize;
			uint32_t numBatches;
			uint32_t ceSeqNum;
			void *stream;
		} ceColl;
		struct {
			bool isComplete;
			int nRanks;
		} ceCollSync;
		struct {
			int numOps;
			size_t totalBytes;
			bool useIntraSync;
		} ceCollBatch;
	};
} ncclProfilerEventDescr_v6_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,
			     const char *commName, int nNodes, int nranks, int rank,
			     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle,
				   ncclProfilerEventDescr_v6_t *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_v6_t eState,
					 ncclProfilerEventStateArgs_v6_t *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} ncclProfiler_v6_t;

#undef NCCL_PROF_COLL_COMMON
#undef NCCL_PROF_P2P_COMMON
#undef NCCL_PROF_PROXYOP
#undef NCCL_PROF_API_MEMBERS

/* --- Layout pins (§6.14) -------------------------------------------------------------- */
_Static_assert(sizeof(void *) == 8, "the vendored layouts are LP64");
_Static_assert(sizeof(ncclProfilerEventState_t) == 4, "state is a 4-byte enum");
#define PIN(T, m, off) _Static_assert(offsetof(T, m) == (off), #T "." #m " offset")
/* v4 */
_Static_assert(sizeof(ncclProfilerEventDescr_v4_t) == 104, "v4 descriptor is 104 bytes");
PIN(ncclProfilerEventDescr_v4_t, parentObj, 8);
PIN(ncclProfilerEventDescr_v4_t, rank, 16);
PIN(ncclProfilerEventDescr_v4_t, coll.seqNumber, 24);
PIN(ncclProfilerEventDescr_v4_t, coll.func, 32);
PIN(ncclProfilerEventDescr_v4_t, coll.count, 56);
PIN(ncclProfilerEventDescr_v4_t, coll.datatype, 72);
PIN(ncclProfilerEventDescr_v4_t, coll.nChannels, 80);
PIN(ncclProfilerEventDescr_v4_t, coll.algo, 88);
PIN(ncclProfilerEventDescr_v4_t, coll.proto, 96);
PIN(ncclProfilerEventDescr_v4_t, proxyOp.pid, 24);
PIN(ncclProfilerEventDescr_v4_t, proxyOp.channelId, 28);
PIN(ncclProfilerEventDescr_v4_t, proxyOp.peer, 32);
PIN(ncclProfilerEventDescr_v4_t, proxyOp.nSteps, 36);
PIN(ncclProfilerEventDescr_v4_t, proxyOp.chunkSize, 40);
PIN(ncclProfilerEventDescr_v4_t, kernelCh.channelId, 24);
PIN(ncclProfilerEventDescr_v4_t, kernelCh.pTimer, 32);
_Static_assert(sizeof(ncclProfilerEventStateArgs_v4_t) == 8, "state args are 8 bytes");
_Static_assert(sizeof(ncclProfiler_v4_t) == 48, "profiler v4 table is 48 bytes");
/* v5 */
_Static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112, "v5 descriptor is 112 bytes");
PIN(ncclProfilerEventDescr_v5_t, parentObj, 8);
PIN(ncclProfilerEventDescr_v5_t, rank, 16);
PIN(ncclProfilerEventDescr_v5_t, coll.seqNumber, 24);
PIN(ncclProfilerEventDescr_v5_t, coll.func, 32);
PIN(ncclProfilerEventDescr_v5_t, coll.count, 56);
PIN(ncclProfilerEventDescr_v5_t, coll.datatype, 72);
PIN(ncclProfilerEventDescr_v5_t, coll.nChannels, 80);
PIN(ncclProfilerEventDescr_v5_t, coll.algo, 88);
PIN(ncclProfilerEventDescr_v5_t, coll.proto, 96);
PIN(ncclProfilerEventDescr_v5_t, coll.parentGroup, 104);
PIN(ncclProfilerEventDescr_v5_t, collApi.stream, 56);
PIN(ncclProfilerEventDescr_v5_t, proxyOp.pid, 24);
PIN(ncclProfilerEventDescr_v5_t, proxyOp.peer, 32);
PIN(ncclProfilerEventDescr_v5_t, kernelCh.channelId, 24);
PIN(ncclProfilerEventDescr_v5_t, kernelCh.pTimer, 32);
_Static_assert(sizeof(ncclProfiler_v5_t) == 48, "profiler v5 table is 48 bytes");
/* v6 */
_Static_assert(sizeof(ncclProfilerEventDescr_v6_t) == 112, "v6 descriptor is 112 bytes");
PIN(ncclProfilerEventDescr_v6_t, coll.seqNumber, 24);
PIN(ncclProfilerEventDescr_v6_t, coll.nChannels, 80);
PIN(ncclProfilerEventDescr_v6_t, coll.algo, 88);
PIN(ncclProfilerEventDescr_v6_t, coll.parentGroup, 104);
PIN(ncclProfilerEventDescr_v6_t, proxyOp.pid, 24);
PIN(ncclProfilerEventDescr_v6_t, kernelCh.pTimer, 32);
PIN(ncclProfilerEventDescr_v6_t, ceColl.syncStrategy, 80);
PIN(ncclProfilerEventDescr_v6_t, ceColl.stream, 104);
_Static_assert(sizeof(ncclProfiler_v6_t) == 48, "profiler v6 table is 48 bytes");
#undef PIN

#endif
