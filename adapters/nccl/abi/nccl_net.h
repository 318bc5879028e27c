/* NCCL net plugin interface, versions 11 and 12, vendored as ABI facts from NVIDIA/nccl
 * src/include/plugin/net/net_v11.h (v2.28.9-1) and net_v12.h (v2.30.7-1), transcribed in
 * docs/design.md §6.10.
 *
 * NCCL looks the tables up as ncclNetPlugin_v11 / ncclNetPlugin_v12 (not ncclNet_vN, whatever
 * NCCL's README says, §6.14) and trusts the name to imply the layout, so every size and offset
 * below is pinned by a static assert. The function tables of v11 and v12 are identical except
 * for the property and virtual-device structs they take. */
#ifndef NCCLBPF_NCCL_NET_H
#define NCCLBPF_NCCL_NET_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_common.h"

#define NCCL_NET_HANDLE_MAXSIZE		    128
#define NCCL_PTR_HOST			    0x1
#define NCCL_PTR_CUDA			    0x2
#define NCCL_PTR_DMABUF			    0x4
#define NCCL_NET_MAX_REQUESTS		    32
#define NCCL_NET_MAX_DEVS_PER_NIC_V11	    4
#define NCCL_NET_MAX_DEVS_PER_NIC_V12	    8
#define NCCL_NET_TRAFFIC_CLASS_UNDEF	    -1
#define NCCL_NET_ATTR_UNDEF		    -1
#define NCCL_NET_ID_UNDEF		    -1
#define NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET 0x1 /* v12 */

typedef enum {
	NCCL_NET_DEVICE_HOST = 0,
	NCCL_NET_DEVICE_UNPACK = 1,
	NCCL_NET_DEVICE_GIN_PROXY = 2,
	NCCL_NET_DEVICE_GIN_GDAKI = 3,
} ncclNetDeviceType;

/* Profiler callback handed to init (v10+): type 0 start, 1 stop, 2 update, 3 update+stop. */
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *pHandle,
					       int64_t pluginId, void *extData);

/* --- v11 (2.28.3+, native in 2.28/2.29) ---------------------------------------------------- */
typedef struct {
	int ndevs;
	int devs[NCCL_NET_MAX_DEVS_PER_NIC_V11];
} ncclNetVDeviceProps_v11_t;

typedef struct {
	int trafficClass;
} ncclNetCommConfig_v11_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;
	int speed; /* Mbps */
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v11_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;
} ncclNetProperties_v11_t;

typedef struct {
	int32_t maxConcurrentPeers;
	int32_t minConcurrentPeers;
	int32_t maxFlowsPerPeer;
	int32_t minFlowsPerPeer;
} ncclNetCommAttr_v11_t;

typedef struct {
	ncclNetCommAttr_v11_t sendCommAttr;
	ncclNetCommAttr_v11_t recvCommAttr;
	uint32_t op;
	uint32_t algo;
	uint32_t proto;
} ncclNetAttr_v11_t;

typedef struct {
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	void *handle;
	size_t size;
	int needsProxyProgress;
} ncclNetDeviceHandle_v11_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
			     ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v11_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v11_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v11_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v11_t *props);
	ncclResult_t (*finalize)(void *ctx);
	ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v11_t *netAttr);
} ncclNet_v11_t;

/* --- v12 (2.30.3+, native in 2.30): vProps has 8 devices, railId/planeId added -------------- */
typedef struct {
	int ndevs;
	int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12];
} ncclNetVDeviceProps_v12_t;

typedef ncclNetCommConfig_v11_t ncclNetCommConfig_v12_t;
typedef ncclNetAttr_v11_t ncclNetAttr_v12_t;
typedef ncclNetDeviceHandle_v11_t ncclNetDeviceHandle_v12_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v12_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;
	int16_t railId;
	int16_t planeId;
} ncclNetProperties_v12_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v12_t *config,
			     ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v12_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v12_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v12_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v12_t *props);
	ncclResult_t (*finalize)(void *ctx);
	ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v12_t *netAttr);
} ncclNet_v12_t;

/* Layouts (x86-64 / aarch64 LP64), §6.10, §6.14. */
_Static_assert(sizeof(ncclNetDeviceType) == 4, "enum passed as int");
_Static_assert(sizeof(ncclNetVDeviceProps_v11_t) == 20, "vProps v11");
_Static_assert(offsetof(ncclNetProperties_v11_t, vProps) == 64, "props v11 vProps");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxP2pBytes) == 88, "props v11 maxP2pBytes");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxCollBytes) == 96, "props v11 maxCollBytes");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) == 104, "props v11");
_Static_assert(sizeof(ncclNetProperties_v11_t) == 112, "props v11 size");
_Static_assert(sizeof(ncclNetAttr_v11_t) == 44, "netAttr v11");
_Static_assert(sizeof(ncclNetDeviceHandle_v11_t) == 32, "device handle v11");
_Static_assert(sizeof(ncclNet_v11_t) == 176, "net v11 table: 22 pointers");
_Static_assert(offsetof(ncclNet_v11_t, setNetAttr) == 168, "net v11 table order");
_Static_assert(sizeof(ncclNetVDeviceProps_v12_t) == 36, "vProps v12");
_Static_assert(offsetof(ncclNetProperties_v12_t, vProps) == 64, "props v12 vProps");
_Static_assert(offsetof(ncclNetProperties_v12_t, maxP2pBytes) == 104, "props v12 maxP2pBytes");
_Static_assert(offsetof(ncclNetProperties_v12_t, maxMultiRequestSize) == 120, "props v12");
_Static_assert(offsetof(ncclNetProperties_v12_t, railId) == 124, "props v12 railId");
_Static_assert(offsetof(ncclNetProperties_v12_t, planeId) == 126, "props v12 planeId");
_Static_assert(sizeof(ncclNetProperties_v12_t) == 128, "props v12 size");
_Static_assert(sizeof(ncclNet_v12_t) == 176, "net v12 table: 22 pointers");

#endif
