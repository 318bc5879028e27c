/* A fake "inner" net plugin for the delegation test: exports only ncclNetPlugin_v11 (so our
 * v12 table also exercises the layout conversion), moves bytes within one process, and counts
 * every call in fake_counts. Only the plugin table is exported (a test plugin must not add
 * symbols that could clash in a process either): the test finds the counters through a pointer
 * stored right after the table, in the same exported object. connect returns "not yet" once
 * before succeeding, as real plugins do. */
#include <stdlib.h>
#include <string.h>

#include "nccl_net.h"

struct fake_counts {
	int init, devices, props, listen, connect, accept, regmr, deregmr, isend, irecv, test,
	    close_send, close_recv, close_listen, finalize, iflush;
	long long bytes;
};
static struct fake_counts fake_counts;

#define NQ 64
struct freq {
	int done, is_send, size;
	void *buf;
	size_t cap;
};
struct fconn {
	int connected, tries;
	struct freq *sq[NQ], *rq[NQ];
	int sh, st, rh, rt;
};
static struct fconn conns[16];
static int nconns;

static ncclResult_t f_init(void **ctx, uint64_t id, ncclNetCommConfig_v11_t *cfg,
			   ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
	fake_counts.init++;
	*ctx = &fake_counts;
	return ncclSuccess;
}
static ncclResult_t f_devices(int *n)
{
	fake_counts.devices++;
	*n = 2;
	return ncclSuccess;
}
static ncclResult_t f_props(int dev, ncclNetProperties_v11_t *p)
{
	static char *names[2] = {"fake0", "fake1"};
	fake_counts.props++;
	memset(p, 0, sizeof(*p));
	p->name = names[dev & 1];
	p->ptrSupport = NCCL_PTR_HOST;
	p->speed = 1000;
	p->maxRecvs = 3;
	p->maxComms = 8;
	p->vProps.ndevs = 1;
	p->vProps.devs[0] = dev;
	p->maxP2pBytes = 1 << 30;
	return ncclSuccess;
}
static ncclResult_t f_listen(void *ctx, int dev, void *handle, void **lc)
{
	fake_counts.listen++;
	if (nconns == 16)
		return ncclInternalError;
	int id = nconns++;
	memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
	memcpy(handle, &id, sizeof(id));
	*lc = &conns[id];
	return ncclSuccess;
}
struct fcomm {
	struct fconn *c;
	int is_send;
};
static ncclResult_t f_connect(void *ctx, int dev, void *handle, void **sc,
			      ncclNetDeviceHandle_v11_t **dh)
{
	fake_counts.connect++;
	int id;
	memcpy(&id, handle, sizeof(id));
	struct fconn *c = &conns[id];
	*sc = NULL;
	if (c->tries++ == 0)
		return ncclSuccess; /* not yet */
	c->connected = 1;
	struct fcomm *m = calloc(1, sizeof(*m));
	m->c = c;
	m->is_send = 1;
	*sc = m;
	return ncclSuccess;
}
static ncclResult_t f_accept(void *lc, void **rc, ncclNetDeviceHandle_v11_t **dh)
{
	fake_counts.accept++;
	struct fconn *c = lc;
	*rc = NULL;
	if (!c->connected)
		return ncclSuccess;
	struct fcomm *m = calloc(1, sizeof(*m));
	m->c = c;
	*rc = m;
	return ncclSuccess;
}
static ncclResult_t f_regmr(void *comm, void *data, size_t size, int type, void **mh)
{
	fake_counts.regmr++;
	*mh = malloc(16);
	return ncclSuccess;
}
static ncclResult_t f_deregmr(void *comm, void *mh)
{
	fake_counts.deregmr++;
	free(mh);
	return ncclSuccess;
}
static ncclResult_t f_isend(void *sc, void *data, size_t size, int tag, void *mh, void *ph,
			    void **req)
{
	fake_counts.isend++;
	struct fconn *c = ((struct fcomm *)sc)->c;
	struct freq *r = calloc(1, sizeof(*r));
	r->is_send = 1;
	r->buf = data;
	r->cap = size;
	c->sq[c->st++ % NQ] = r;
	*req = r;
	return ncclSuccess;
}
static ncclResult_t f_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mh,
			    void **ph, void **req)
{
	fake_counts.irecv++;
	struct fconn *c = ((struct fcomm *)rc)->c;
	struct freq *r = calloc(1, sizeof(*r));
	r->buf = data[0];
	r->cap = sizes[0];
	c->rq[c->rt++ % NQ] = r;
	*req = r;
	return ncclSuccess;
}
static ncclResult_t f_iflush(void *rc, int n, void **data, int *sizes, void **mh, void **req)
{
	fake_counts.iflush++;
	struct freq *r = calloc(1, sizeof(*r));
	r->done = 1;
	*req = r;
	return ncclSuccess;
}
static ncclResult_t f_test(void *req, int *done, int *sizes)
{
	fake_counts.test++;
	for (int i = 0; i < 16; i++) {
		struct fconn *c = &conns[i];
		while (c->sh != c->st && c->rh != c->rt) {
			struct freq *s = c->sq[c->sh++ % NQ], *r = c->rq[c->rh++ % NQ];
			size_t n = s->cap < r->cap ? s->cap : r->cap;
			memcpy(r->buf, s->buf, n);
			fake_counts.bytes += (long long)n;
			s->done = r->done = 1;
			s->size = r->size = (int)n;
		}
	}
	struct freq *r = req;
	*done = r->done;
	if (r->done) {
		if (sizes)
			sizes[0] = r->size;
		free(r);
	}
	return ncclSuccess;
}
static ncclResult_t f_close_send(void *sc)
{
	fake_counts.close_send++;
	free(sc);
	return ncclSuccess;
}
static ncclResult_t f_close_recv(void *rc)
{
	fake_counts.close_recv++;
	free(rc);
	return ncclSuccess;
}
static ncclResult_t f_close_listen(void *lc)
{
	fake_counts.close_listen++;
	return ncclSuccess;
}
static ncclResult_t f_device_mr(void *comm, void *mh, void **dptr)
{
	*dptr = mh;
	return ncclSuccess;
}
static ncclResult_t f_finalize(void *ctx)
{
	fake_counts.finalize++;
	return ncclSuccess;
}
static ncclResult_t f_set_attr(void *ctx, ncclNetAttr_v11_t *a)
{
	return ctx == &fake_counts ? ncclSuccess : ncclInvalidArgument;
}

__attribute__((visibility("default"))) const struct {
	ncclNet_v11_t net;
	struct fake_counts *counts;
} ncclNetPlugin_v11 = {
    .net =
	{
	    .name = "Fake",
	    .init = f_init,
	    .devices = f_devices,
	    .getProperties = f_props,
	    .listen = f_listen,
	    .connect = f_connect,
	    .accept = f_accept,
	    .regMr = f_regmr,
	    .deregMr = f_deregmr,
	    .isend = f_isend,
	    .irecv = f_irecv,
	    .iflush = f_iflush,
	    .test = f_test,
	    .closeSend = f_close_send,
	    .closeRecv = f_close_recv,
	    .closeListen = f_close_listen,
	    .getDeviceMr = f_device_mr,
	    .finalize = f_finalize,
	    .setNetAttr = f_set_attr,
	},
    .counts = &fake_counts,
};
