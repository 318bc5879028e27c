/* Delegation: NCCLBPF_NET_INNER=/path/libnccl-net-X.so makes our net tables forward every call
 * to that plugin's ncclNetPlugin_v12 (else _v11) table, adding only the hooks. Loaded once, in
 * the library's constructor, so that the optional entries of our exported tables (NULL-checked
 * by NCCL) can mirror the inner plugin's before NCCL looks at them. */
#ifndef NCCLBPF_NET_INNER_H
#define NCCLBPF_NET_INNER_H

#include "nccl_net.h"

struct net_inner {
	int wanted;		/* NCCLBPF_NET_INNER was set */
	int failed;		/* ... but could not be used (reason logged at the first init) */
	int ver;		/* 12 or 11 */
	const ncclNet_v12_t *t; /* the inner table; for ver 11 only the props/vdevice entries
				   differ in type, every other entry has the same signature */
	char why[512];
};
extern struct net_inner net_inner;

/* Properties of dev from the inner plugin, in either of NCCL's layouts. */
ncclResult_t net_inner_props_v12(int dev, ncclNetProperties_v12_t *p);
ncclResult_t net_inner_props_v11(int dev, ncclNetProperties_v11_t *p);
ncclResult_t net_inner_vdevice_v12(int *d, ncclNetVDeviceProps_v12_t *p);
ncclResult_t net_inner_vdevice_v11(int *d, ncclNetVDeviceProps_v11_t *p);

/* v12 -> v11 and back (vProps truncated to 4 devices / railId, planeId undefined). */
void net_props_12_to_11(const ncclNetProperties_v12_t *a, ncclNetProperties_v11_t *b);
void net_props_11_to_12(const ncclNetProperties_v11_t *a, ncclNetProperties_v12_t *b);

void net_inner_load(void);

#endif
