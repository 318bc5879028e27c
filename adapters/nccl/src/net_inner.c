/* Loading the delegated net plugin and converting between NCCL's v11 and v12 layouts
 * (net_inner.h). */
#include "net_inner.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncclbpf/envvars.h"
#include "ncclbpf/trusted_path.h"

struct net_inner net_inner;

void net_inner_load(void)
{
	const char *path = ncclbpf_env_str("NCCLBPF_NET_INNER");
	if (!path)
		return;
	net_inner.wanted = 1;
	/* Checked before dlopen, which would block in open() on a FIFO (this runs in the
	 * library's constructor, inside NCCL's dlopen of us) and run whatever code it finds: a
	 * path (not a name to search for) to a regular file that only we or root can change. */
	char why[sizeof(net_inner.why) - 32];
	int fd = ncclbpf_path_open_library(path, why, sizeof(why));
	if (fd < 0) {
		snprintf(net_inner.why, sizeof(net_inner.why), "not loaded: %s", why);
		net_inner.failed = 1;
		return;
	}
	close(fd);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(net_inner.why, sizeof(net_inner.why), "cannot load %s: %s", path,
			 e ? e : "?");
		net_inner.failed = 1;
		return;
	}
	const void *t = dlsym(h, "ncclNetPlugin_v12");
	net_inner.ver = 12;
	if (!t) {
		t = dlsym(h, "ncclNetPlugin_v11");
		net_inner.ver = 11;
	}
	if (!t) {
		snprintf(net_inner.why, sizeof(net_inner.why),
			 "%s exports neither ncclNetPlugin_v12 nor ncclNetPlugin_v11", path);
		net_inner.failed = 1;
		dlclose(h);
		return;
	}
	/* Kept open for the life of the process, like this library (-z nodelete). */
	net_inner.t = t;
}

/* The property fields v11 and v12 share, with the same names and types. */
#define NET_PROPS_SHARED(X)                                                                        \
	X(name)                                                                                    \
	X(pciPath)                                                                                 \
	X(guid)                                                                                    \
	X(ptrSupport)                                                                              \
	X(regIsGlobal)                                                                             \
	X(forceFlush)                                                                              \
	X(speed)                                                                                   \
	X(port)                                                                                    \
	X(latency)                                                                                 \
	X(maxComms)                                                                                \
	X(maxRecvs)                                                                                \
	X(netDeviceType)                                                                           \
	X(netDeviceVersion)                                                                        \
	X(maxP2pBytes)                                                                             \
	X(maxCollBytes)                                                                            \
	X(maxMultiRequestSize)
#define COPY_FIELD(f) b->f = a->f;

/* The virtual device's list, either way: as many devices as both layouts hold (v11: 4). */
static void copy_vdevs(int *n_to, int *to, int n_from, const int *from)
{
	*n_to = n_from > NCCL_NET_MAX_DEVS_PER_NIC_V11 ? NCCL_NET_MAX_DEVS_PER_NIC_V11 : n_from;
	for (int i = 0; i < *n_to; i++)
		to[i] = from[i];
}

void net_props_12_to_11(const ncclNetProperties_v12_t *a, ncclNetProperties_v11_t *b)
{
	memset(b, 0, sizeof(*b));
	NET_PROPS_SHARED(COPY_FIELD)
	copy_vdevs(&b->vProps.ndevs, b->vProps.devs, a->vProps.ndevs, a->vProps.devs);
}

void net_props_11_to_12(const ncclNetProperties_v11_t *a, ncclNetProperties_v12_t *b)
{
	memset(b, 0, sizeof(*b));
	NET_PROPS_SHARED(COPY_FIELD)
	copy_vdevs(&b->vProps.ndevs, b->vProps.devs, a->vProps.ndevs, a->vProps.devs);
	b->railId = NCCL_NET_ID_UNDEF;
	b->planeId = NCCL_NET_ID_UNDEF;
}

ncclResult_t net_inner_props_v12(int dev, ncclNetProperties_v12_t *p)
{
	if (net_inner.ver == 12)
		return net_inner.t->getProperties(dev, p);
	const ncclNet_v11_t *t = (const ncclNet_v11_t *)net_inner.t;
	ncclNetProperties_v11_t q;
	ncclResult_t r = t->getProperties(dev, &q);
	if (r == ncclSuccess)
		net_props_11_to_12(&q, p);
	return r;
}

ncclResult_t net_inner_props_v11(int dev, ncclNetProperties_v11_t *p)
{
	if (net_inner.ver == 11)
		return ((const ncclNet_v11_t *)net_inner.t)->getProperties(dev, p);
	ncclNetProperties_v12_t q;
	ncclResult_t r = net_inner.t->getProperties(dev, &q);
	if (r == ncclSuccess)
		net_props_12_to_11(&q, p);
	return r;
}

ncclResult_t net_inner_vdevice_v12(int *d, ncclNetVDeviceProps_v12_t *p)
{
	if (net_inner.ver == 12)
		return net_inner.t->makeVDevice(d, p);
	if (p->ndevs > NCCL_NET_MAX_DEVS_PER_NIC_V11)
		return ncclInvalidUsage;
	ncclNetVDeviceProps_v11_t q = {.ndevs = p->ndevs};
	for (int i = 0; i < p->ndevs; i++)
		q.devs[i] = p->devs[i];
	return ((const ncclNet_v11_t *)net_inner.t)->makeVDevice(d, &q);
}

ncclResult_t net_inner_vdevice_v11(int *d, ncclNetVDeviceProps_v11_t *p)
{
	if (net_inner.ver == 11)
		return ((const ncclNet_v11_t *)net_inner.t)->makeVDevice(d, p);
	ncclNetVDeviceProps_v12_t q = {.ndevs = p->ndevs};
	for (int i = 0; i < p->ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V11; i++)
		q.devs[i] = p->devs[i];
	return net_inner.t->makeVDevice(d, &q);
}
