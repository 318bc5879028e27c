/* Trace records: format/parse round trip (floats bit-identical), rejection of malformed lines,
 * and recording through the real plugin (NCCLBPF_TRACE) with the decision NCCL ends up with.
 * usage: test_trace COMPARISON.so OUT.trace  (OUT is left for the replay CLI tests) */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"
#include "ncclbpf/trace.h"

static void test_roundtrip(void)
{
	unsigned seed = 7;
	char buf[2048], err[128];
	for (int it = 0; it < 20000; it++) {
		struct ncclbpf_trace_rec r, q;
		memset(&r, 0, sizeof(r));
		r.kind = 1 + it % 4;
		r.pid = (uint32_t)rand_r(&seed);
		r.ctx = (uint32_t)rand_r(&seed) % 1000;
		r.comm_id = ((uint64_t)rand_r(&seed) << 33) ^ (uint64_t)rand_r(&seed);
		r.n_ranks = 1 + rand_r(&seed) % 4096;
		r.n_nodes = 1 + rand_r(&seed) % 512;
		r.api = 3 + rand_r(&seed) % 4;
		r.seq = (uint64_t)rand_r(&seed) * 1000;
		r.n_bytes = ((uint64_t)rand_r(&seed) << 20) + (uint64_t)rand_r(&seed);
		r.coll = rand_r(&seed) % 5;
		r.pipe = rand_r(&seed) % 8;
		r.reg = rand_r(&seed) % 2;
		r.num_algo = 6 + rand_r(&seed) % 2;
		r.num_proto = 3;
		for (int i = 0; i < r.num_algo * r.num_proto; i++) {
			uint32_t bits = (uint32_t)rand_r(&seed) ^ ((uint32_t)rand_r(&seed) << 16);
			float v;
			memcpy(&v, &bits, sizeof(v));
			if (isnan(v) || isinf(v))
				v = -1.0f; /* NaN has no stable text form; NCCL never stores one */
			r.cost[i] = rand_r(&seed) % 3 ? v : -1.0f;
		}
		r.algo = rand_r(&seed) % 8 - 1;
		r.proto = rand_r(&seed) % 4 - 1;
		r.channels = rand_r(&seed) % 65;
		r.version = rand_r(&seed) % 100;
		r.chunk_in = (uint64_t)rand_r(&seed);
		r.chunk_out = (uint64_t)rand_r(&seed);
		if (it % 3 == 0) { /* a profiler record */
			r.kind = NCCLBPF_TRACE_PINIT + it / 3 % 7;
			r.rank = (uint32_t)rand_r(&seed) % 4096;
			r.handle = ((uint64_t)rand_r(&seed) << 20) ^ (uint64_t)rand_r(&seed);
			r.parent = (uint64_t)rand_r(&seed) << 12;
			r.t_ns = (uint64_t)rand_r(&seed) * 977;
			r.timer = (uint64_t)rand_r(&seed) * 1000003;
			r.proxy_pid = (uint32_t)rand_r(&seed);
			r.peer = rand_r(&seed) % 64 - 1;
			r.steps = rand_r(&seed) % 100;
			r.chunk = rand_r(&seed);
			r.channels = rand_r(&seed) % 64;
			ncclbpf_trace_name(r.func, it % 2 ? "AllReduce" : NULL);
			ncclbpf_trace_name(r.dtype,
					   "ncclFloat32 x=y"); /* one token: "?" for each */
			ncclbpf_trace_name(r.alg, "RING");
			ncclbpf_trace_name(r.prot, "SIMPLE");
		}
		if (it % 3 == 1 && it % 2) { /* a net record */
			r.kind = NCCLBPF_TRACE_NET;
			r.net_op = 1 + (uint32_t)rand_r(&seed) % 6;
			r.t_ns = (uint64_t)rand_r(&seed) * 977;
			r.dur_ns = it % 4 == 1 ? 0 : (uint64_t)rand_r(&seed) * 31;
			r.dev = (uint32_t)rand_r(&seed) % 16;
			r.peer = it % 7 ? -1 : rand_r(&seed) % 4096;
			r.tag = rand_r(&seed) - RAND_MAX / 2;
			for (int i = 0; i < 16; i++)
				r.peer_addr[i] = (uint8_t)rand_r(&seed);
			r.peer_port = (uint32_t)rand_r(&seed) % 65536;
			r.has_ret = rand_r(&seed) % 2;
			r.ret = r.has_ret
				    ? ((uint64_t)rand_r(&seed) << 32) ^ (uint64_t)rand_r(&seed)
				    : 0;
		}
		int n = ncclbpf_trace_format(&r, buf, sizeof(buf));
		CHECK(n > 0 && buf[n - 1] == '\n');
		CHECK(ncclbpf_trace_parse(buf, &q, err, sizeof(err)) == 1);
		CHECK(q.kind == r.kind && q.pid == r.pid && q.ctx == r.ctx);
		if (r.kind == NCCLBPF_TRACE_INIT)
			CHECK(q.comm_id == r.comm_id && q.n_ranks == r.n_ranks &&
			      q.n_nodes == r.n_nodes && q.api == r.api);
		if (r.kind == NCCLBPF_TRACE_CALL) {
			CHECK(q.seq == r.seq && q.n_bytes == r.n_bytes && q.coll == r.coll &&
			      q.pipe == r.pipe && q.reg == r.reg && q.algo == r.algo &&
			      q.proto == r.proto && q.channels == r.channels &&
			      q.version == r.version);
			CHECK(!memcmp(q.cost, r.cost, sizeof(float) * (size_t)(r.num_algo * 3)));
		}
		if (r.kind == NCCLBPF_TRACE_PINIT)
			CHECK(q.comm_id == r.comm_id && q.rank == r.rank && q.api == r.api);
		if (r.kind == NCCLBPF_TRACE_PCOLL)
			CHECK(q.handle == r.handle && q.t_ns == r.t_ns && q.seq == r.seq &&
			      q.n_bytes == r.n_bytes && q.channels == r.channels &&
			      !strcmp(q.func, it % 2 ? "AllReduce" : "-") &&
			      !strcmp(q.dtype, "ncclFloat32?x?y") && !strcmp(q.alg, "RING") &&
			      !strcmp(q.prot, "SIMPLE"));
		if (r.kind == NCCLBPF_TRACE_PKCH || r.kind == NCCLBPF_TRACE_PKCH_END)
			CHECK(q.handle == r.handle && q.timer == r.timer &&
			      (r.kind == NCCLBPF_TRACE_PKCH_END ||
			       (q.parent == r.parent && q.channels == r.channels)));
		if (r.kind == NCCLBPF_TRACE_PPROXY)
			CHECK(q.handle == r.handle && q.parent == r.parent &&
			      q.proxy_pid == r.proxy_pid && q.peer == r.peer &&
			      q.steps == r.steps && q.chunk == r.chunk && q.channels == r.channels);
		if (r.kind == NCCLBPF_TRACE_PSTOP)
			CHECK(q.handle == r.handle && q.t_ns == r.t_ns);
		if (r.kind == NCCLBPF_TRACE_NET)
			CHECK(q.net_op == r.net_op && q.comm_id == r.comm_id &&
			      q.n_bytes == r.n_bytes && q.t_ns == r.t_ns && q.dur_ns == r.dur_ns &&
			      q.dev == r.dev && q.peer == r.peer && q.tag == r.tag &&
			      !memcmp(q.peer_addr, r.peer_addr, 16) && q.peer_port == r.peer_port &&
			      q.has_ret == r.has_ret && q.ret == r.ret);
		if (r.kind == NCCLBPF_TRACE_CHUNK)
			CHECK(q.chunk_in == r.chunk_in && q.chunk_out == r.chunk_out &&
			      q.algo == r.algo && q.channels == r.channels);
	}
	struct ncclbpf_trace_rec q;
	/* A net record as the plugin writes it reads back field by field. */
	CHECK(ncclbpf_trace_parse("net c=12.3 op=complete_recv comm=00000000000000ab bytes=4096 "
				  "t=100 dur=25 dev=1 peer=-1 tag=7 "
				  "addr=7f000001000000000000000000000000 port=4000 ret=-\n",
				  &q, err, sizeof(err)) == 1);
	CHECK(q.kind == NCCLBPF_TRACE_NET && q.pid == 12 && q.ctx == 3 && q.net_op == 6 &&
	      q.comm_id == 0xab && q.n_bytes == 4096 && q.t_ns == 100 && q.dur_ns == 25 &&
	      q.dev == 1 && (uint32_t)q.peer == 0xffffffffu && q.tag == 7 &&
	      q.peer_addr[0] == 0x7f && q.peer_addr[3] == 1 && q.peer_port == 4000 && !q.has_ret);
	CHECK(!strcmp(ncclbpf_trace_net_op_name(3), "isend") &&
	      !strcmp(ncclbpf_trace_net_op_name(99), "?"));
	CHECK(ncclbpf_trace_parse("# comment\n", &q, err, sizeof(err)) == 0);
	CHECK(ncclbpf_trace_parse("\n", &q, err, sizeof(err)) == 0);
	const char *bad[] = {
	    "bogus c=1.2\n",
	    "init c=1.2 comm=ff ranks=8 nodes=1\n", /* api missing */
	    "init c=1 comm=ff ranks=8 nodes=1 api=5\n",
	    "call c=1.0 seq=0 coll=4 bytes=8 pipe=1 reg=0 table=7x3 cost=1,2 algo=1 proto=2 ch=0 "
	    "ver=1\n",
	    "call c=1.0 seq=0 coll=4 bytes=8 pipe=1 reg=0 table=9x3 cost=- algo=1 proto=2 ch=0 "
	    "ver=1\n",
	    "call c=1.0 seq=x coll=4 bytes=8 pipe=1 reg=0 table=0x0 cost=- algo=1 proto=2 ch=0 "
	    "ver=1\n",
	    "call c=1.0 seq=0 coll=4 bytes=-8 pipe=1 reg=0 table=0x0 cost=- algo=1 proto=2 ch=0 "
	    "ver=1\n",
	    "fini c=1.0 junk\n",
	    "stop c=1.0 t=5\n",			  /* ev missing */
	    "kch c=1.0 ev=10 t=5 ch=1 timer=7\n", /* parent missing */
	    "coll c=1.0 ev=10 t=5 seq=1 func=AllReduce count=4 dtype=ncclInt8 nch=1 alg=RING\n",
	    "coll c=1.0 ev=10 t=5 seq=1 func=AllReduceAllReduceAllReduceAllReduce count=4 "
	    "dtype=ncclInt8 nch=1 alg=RING prot=LL\n", /* name too long */
	    /* net: an unknown op, a short address, a signed return, ret missing */
	    "net c=1.1 op=send comm=0 bytes=1 t=1 dur=0 dev=0 peer=-1 tag=0 "
	    "addr=7f000001000000000000000000000000 port=1 ret=-\n",
	    "net c=1.1 op=isend comm=0 bytes=1 t=1 dur=0 dev=0 peer=-1 tag=0 "
	    "addr=7f000001 port=1 ret=-\n",
	    "net c=1.1 op=isend comm=0 bytes=1 t=1 dur=0 dev=0 peer=-1 tag=0 "
	    "addr=7f000001000000000000000000000000 port=1 ret=-5\n",
	    "net c=1.1 op=isend comm=0 bytes=1 t=1 dur=0 dev=0 peer=-1 tag=0 "
	    "addr=7f000001000000000000000000000000 port=1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(ncclbpf_trace_parse(bad[i], &q, err, sizeof(err)) < 0);
}

static void test_record(const char *lib, const char *out)
{
	unlink(out);
	setenv("NCCLBPF_TRACE", out, 1);
	setenv("NCCLBPF_POLICY", "native:pick", 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	struct harness_plugin p;
	CHECK(harness_open(&p, lib) == 0);
	void *a = NULL, *b = NULL;
	ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
	CHECK(p.v5->init(&a, 0xabcdef, 8, 1, harness_logger, &nvl, NULL) == ncclSuccess);
	CHECK(p.v3->init(16, 2, harness_logger, &b) == ncclSuccess);
	float passed[40][21];
	int n = 0;
	for (int i = 0; i < 20; i++) {
		size_t bytes = (size_t)1 << i;
		int ch = 0;
		harness_table(passed[n], 7, 3, 4, bytes);
		float t[21];
		memcpy(t, passed[n++], sizeof(t));
		p.v5->getCollInfo(a, 4, bytes, 1, (float **)t, 7, 3, 0, &ch);
		harness_table(passed[n], 6, 3, 2, bytes);
		memcpy(t, passed[n++], sizeof(t));
		p.v3->getCollInfo(b, 2, bytes, 1, (float **)t, 6, 3, &ch);
	}
	int ch = 0;
	p.v5->getCollInfo(a, 4, 1, 1, NULL, 7, 3, 0, &ch); /* malformed: recorded without table */
	p.v5->finalize(a);
	p.v3->destroy(b);
	harness_close(&p);
	unsetenv("NCCLBPF_TRACE");

	FILE *f = fopen(out, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[4096], err[128];
	int inits = 0, finis = 0, calls = 0, bad = 0;
	while (fgets(line, sizeof(line), f)) {
		struct ncclbpf_trace_rec r;
		int k = ncclbpf_trace_parse(line, &r, err, sizeof(err));
		if (k < 0)
			bad++;
		if (k <= 0)
			continue;
		CHECK(r.pid == (uint32_t)getpid());
		inits += r.kind == NCCLBPF_TRACE_INIT;
		finis += r.kind == NCCLBPF_TRACE_FINI;
		if (r.kind == NCCLBPF_TRACE_INIT)
			CHECK(r.api == 5 ? r.comm_id == 0xabcdef && r.n_ranks == 8
					 : r.comm_id == 0 && r.n_ranks == 16 && r.api == 3);
		if (r.kind != NCCLBPF_TRACE_CALL)
			continue;
		if (calls < 40) {
			/* Inputs exactly as passed, decision as NCCL ends up with it. */
			CHECK(r.num_algo == (calls % 2 ? 6 : 7) && r.num_proto == 3);
			CHECK(!memcmp(r.cost, passed[calls],
				      sizeof(float) * (size_t)(r.num_algo * r.num_proto)));
			CHECK(r.seq == (uint64_t)calls / 2);
			CHECK(r.algo == NCCL_ALGO_RING && r.proto == NCCL_PROTO_SIMPLE &&
			      r.channels == 8 && r.version >= 1);
		} else {
			CHECK(r.num_algo == 0 && r.algo == -1 && r.version == 0);
		}
		calls++;
	}
	fclose(f);
	CHECK(inits == 2 && finis == 2 && calls == 41 && bad == 0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s COMPARISON.so OUT.trace\n", argv[0]);
		return 2;
	}
	test_roundtrip();
	test_record(argv[1], argv[2]);
	return check_summary("test_trace");
}
