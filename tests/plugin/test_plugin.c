/* CPU harness: loads libnccl-ncclbpf.so exactly as NCCL does (dlopen RTLD_NOW|RTLD_LOCAL,
 * versioned symbols) and drives every exported tuner version with tables shaped as each NCCL
 * release shapes them. usage: test_plugin PLUGIN.so COMPARISON.so [POLICY-DIR [TEST-POLICY-DIR]]
 * PLUGIN is the shipped library; COMPARISON is the same code with native test policies
 * (NCCLBPF_POLICY=native:NAME), which exercises the adapter's output discipline with policies
 * that misbehave in ways a verified program may still choose to. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"

static const char *plugin_path, *native_path;
static const size_t sizes[] = {8, 1024, 65536, 1 << 20, 16 << 20, 256u << 20};

/* One getCollInfo call through whichever version; returns the channel count NCCL would get. */
static int call(const struct harness_plugin *p, int ver, void *ctx, int coll, size_t bytes,
		float *t, int na, int np, int reg)
{
	int ch = 0;
	ncclResult_t r = ncclInternalError;
	switch (ver) {
	case 3:
		r = p->v3->getCollInfo(ctx, coll, bytes, 1, (float **)t, na, np, &ch);
		break;
	case 4:
		r = p->v4->getCollInfo(ctx, coll, bytes, 1, (float **)t, na, np, reg, &ch);
		break;
	case 5:
		r = p->v5->getCollInfo(ctx, coll, bytes, 1, (float **)t, na, np, reg, &ch);
		break;
	case 6:
		r = p->v6->getCollInfo(ctx, coll, bytes, 1, (float **)t, na, np, reg, &ch);
		break;
	}
	CHECK(r == ncclSuccess);
	return ch;
}

static void *init(const struct harness_plugin *p, int ver, uint64_t comm_id, int nranks, int nnodes)
{
	void *ctx = (void *)1;
	ncclResult_t r = ncclInternalError;
	ncclNvlDomainInfo_v5_t nvl = {nnodes, nranks / nnodes, nranks / nnodes};
	static ncclTunerConstants_v5_t consts; /* contents irrelevant: the plugin leaves them */
	switch (ver) {
	case 3:
		r = p->v3->init(nranks, nnodes, harness_logger, &ctx);
		break;
	case 4:
		r = p->v4->init(nranks, nnodes, harness_logger, &ctx);
		break;
	case 5:
		r = p->v5->init(&ctx, comm_id, nranks, nnodes, harness_logger, &nvl, &consts);
		break;
	case 6:
		r = p->v6->init(&ctx, comm_id, nranks, nnodes, harness_logger, &nvl, &consts);
		break;
	}
	CHECK(r == ncclSuccess);
	return ctx;
}

static void fini(const struct harness_plugin *p, int ver, void *ctx)
{
	ncclResult_t r = ver == 3   ? p->v3->destroy(ctx)
			 : ver == 4 ? p->v4->destroy(ctx)
			 : ver == 5 ? p->v5->finalize(ctx)
				    : p->v6->finalize(ctx);
	CHECK(r == ncclSuccess);
}

/* NCCL release shapes: 2.22 calls v3 with 6x3, 2.23 calls v3 with 7x3, later 7x3. */
struct shape {
	int ver, na, np;
};
static const struct shape shapes[] = {{3, 6, 3}, {3, 7, 3}, {4, 7, 3}, {5, 7, 3}, {6, 7, 3}};

static void test_exports(void)
{
	struct harness_plugin p;
	CHECK(harness_open(&p, plugin_path) == 0);
	CHECK(p.v3 && p.v4 && p.v5 && p.v6);
	if (!(p.v3 && p.v4 && p.v5 && p.v6))
		exit(check_summary("test_plugin"));
	CHECK(!strcmp(p.v5->name, "NCCLbpf") && !strcmp(p.v6->name, "NCCLbpf"));
	CHECK(p.v6->getChunkSize != NULL);
	/* Nothing of ours besides the tables is reachable. */
	CHECK(dlsym(p.handle, "ncclbpf_rt_acquire") == NULL);
	CHECK(dlsym(p.handle, "ncclbpf_rt_reload") == NULL);
	CHECK(dlsym(p.handle, "ebpf_exec__new") == NULL);
	CHECK(dlsym(p.handle, "ncclTunerPlugin_v2") == NULL);
	harness_close(&p);
}

/* Without a usable policy the plugin must never change NCCL's decision. */
static void check_passthrough(const char *policy, const char *what)
{
	if (policy)
		setenv("NCCLBPF_POLICY", policy, 1);
	else
		unsetenv("NCCLBPF_POLICY");
	struct harness_plugin p;
	CHECK(harness_open(&p, plugin_path) == 0);
	int warns0 = harness_warns;
	/* One communicator lives throughout, so the bundle is loaded (and rejected) once. */
	void *holder = init(&p, 5, 0x4321, 8, 1);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		const struct shape *sh = &shapes[s];
		void *ctx = init(&p, sh->ver, 0x1234, 8, 1);
		CHECK(ctx != NULL);
		for (int coll = 0; coll < 5; coll++)
			for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
				float t[21], o[21];
				harness_table(t, sh->na, sh->np, coll, sizes[i]);
				memcpy(o, t, sizeof(t));
				int ch =
				    call(&p, sh->ver, ctx, coll, sizes[i], t, sh->na, sh->np, 0);
				CHECK(ch == 0);
				CHECK(!memcmp(t, o, sizeof(float) * (size_t)(sh->na * sh->np)));
			}
		if (sh->ver == 6) {
			size_t chunk = 131072;
			CHECK(p.v6->getChunkSize(ctx, 4, 1 << 20, 1, 2, 1, &chunk) == ncclSuccess);
			CHECK(chunk == 131072);
		}
		fini(&p, sh->ver, ctx);
	}
	fini(&p, 5, holder);
	/* One WARN that names the problem, not one per communicator. */
	CHECK(harness_warns - warns0 == 1);
	printf("%s: WARN: %s\n", what, harness_last_warn);
	harness_close(&p);
}

static void test_malformed(void)
{
	setenv("NCCLBPF_POLICY", "native:pick", 1);
	struct harness_plugin p;
	CHECK(harness_open(&p, native_path) == 0);
	void *ctx = init(&p, 5, 7, 8, 1);
	float t[21], o[21];
	harness_table(o, 7, 3, 4, 1 << 20);
	int ch = 0;
	/* NULL table, empty and absurd shapes, negative counts: untouched, success. */
	CHECK(p.v5->getCollInfo(ctx, 4, 1 << 20, 1, NULL, 7, 3, 0, &ch) == ncclSuccess && ch == 0);
	int bad_shapes[][2] = {{0, 3}, {7, 0}, {-1, 3},	     {7, -3},
			       {8, 3}, {7, 4}, {1 << 30, 3}, {INT32_MIN, INT32_MIN}};
	for (size_t i = 0; i < sizeof(bad_shapes) / sizeof(bad_shapes[0]); i++) {
		memcpy(t, o, sizeof(t));
		ch = 0;
		CHECK(p.v5->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, bad_shapes[i][0],
					bad_shapes[i][1], 0, &ch) == ncclSuccess);
		CHECK(ch == 0 && !memcmp(t, o, sizeof(t)));
	}
	/* NULL nChannels: the choice still applies, nothing written through the NULL. */
	memcpy(t, o, sizeof(t));
	CHECK(p.v5->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, NULL) == ncclSuccess);
	CHECK(t[1 * 3 + 2] == 0.0f);
	/* Odd arguments NCCL never passes but a shim might. */
	memcpy(t, o, sizeof(t));
	ch = 0;
	CHECK(p.v5->getCollInfo(ctx, 99, SIZE_MAX, -5, (float **)t, 7, 3, 7, &ch) == ncclSuccess);
	CHECK(ch == 8);
	/* A NULL context (e.g. after a failed allocation) and NULL pointers in init/finalize. */
	memcpy(t, o, sizeof(t));
	ch = 0;
	CHECK(p.v5->getCollInfo(NULL, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &ch) == ncclSuccess);
	CHECK(ch == 0 && !memcmp(t, o, sizeof(t)));
	CHECK(p.v5->finalize(NULL) == ncclSuccess);
	CHECK(p.v3->destroy(NULL) == ncclSuccess);
	CHECK(p.v5->init(NULL, 1, 8, 1, harness_logger, NULL, NULL) == ncclSuccess);
	CHECK(p.v3->init(8, 1, NULL, NULL) == ncclSuccess);
	void *c2 = NULL;
	CHECK(p.v5->init(&c2, 1, 8, 1, NULL, NULL, NULL) == ncclSuccess && c2);
	CHECK(p.v6->getChunkSize(NULL, 4, 1, 1, 2, 1, NULL) == ncclSuccess);
	CHECK(p.v6->getChunkSize(ctx, 4, 1, 1, 2, 1, NULL) == ncclSuccess);
	fini(&p, 5, c2);
	fini(&p, 5, ctx);
	harness_close(&p);
}

/* Policies through every version: a valid choice applies, invalid ones change nothing. */
static void test_policies(void)
{
	struct harness_plugin p;
	struct {
		const char *policy;
		int expect_algo, expect_proto, expect_ch; /* -2: NCCL's own choice */
	} cases[] = {
	    {"native:pick", NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8},
	    {"native:bad_range", -2, -2, 0},
	    {"native:bad_cell", -2, -2, 0},
	    {"native:noop", -2, -2, 0},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		setenv("NCCLBPF_POLICY", cases[c].policy, 1);
		CHECK(harness_open(&p, native_path) == 0);
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			const struct shape *sh = &shapes[s];
			void *ctx = init(&p, sh->ver, 42, 8, 1);
			for (int coll = 0; coll < 5; coll++)
				for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
					float t[21], o[21];
					harness_table(t, sh->na, sh->np, coll, sizes[i]);
					memcpy(o, t, sizeof(t));
					int ch = call(&p, sh->ver, ctx, coll, sizes[i], t, sh->na,
						      sh->np, 1);
					int a, pr;
					if (cases[c].expect_algo == -2) {
						CHECK(!memcmp(t, o,
							      sizeof(float) *
								  (size_t)(sh->na * sh->np)));
					} else {
						CHECK(t[cases[c].expect_algo * sh->np +
							cases[c].expect_proto] == 0.0f);
						a = pr = -1;
						for (int k = 0; k < sh->na * sh->np; k++)
							if (t[k] == 0.0f && a < 0) {
								a = k / sh->np;
								pr = k % sh->np;
							}
						CHECK(a == cases[c].expect_algo &&
						      pr == cases[c].expect_proto);
					}
					CHECK(ch == cases[c].expect_ch);
				}
			if (sh->ver == 6) {
				/* pick doubles the chunk; bad_range asks for 8 B (< any grain). */
				for (int proto = 0; proto < 3; proto++) {
					size_t chunk = 131072;
					CHECK(p.v6->getChunkSize(ctx, 4, 1 << 20, 1, proto, 1,
								 &chunk) == ncclSuccess);
					if (!strcmp(cases[c].policy, "native:pick"))
						CHECK(chunk == 262144);
					else
						CHECK(chunk == 131072);
				}
				size_t chunk = 131072; /* unknown protocol: untouched */
				p.v6->getChunkSize(ctx, 4, 1 << 20, 1, 3, 1, &chunk);
				CHECK(chunk == 131072);
			}
			fini(&p, sh->ver, ctx);
		}
		harness_close(&p);
	}
}

/* 1,000 communicators created and destroyed by 8 threads at once, each calling while others
 * come and go, plus one long-lived communicator across all of it. */
struct cyc {
	struct harness_plugin *p;
	int id, bad;
};

static void *cycle_thread(void *arg)
{
	struct cyc *c = arg;
	for (int i = 0; i < 125; i++) {
		int ver = 3 + (c->id + i) % 4;
		void *ctx = init(c->p, ver, (uint64_t)c->id << 32 | (unsigned)i, 8, 1);
		for (int k = 0; k < 20; k++) {
			float t[21];
			size_t bytes = sizes[k % 6];
			harness_table(t, 7, 3, 4, bytes);
			int ch = call(c->p, ver, ctx, 4, bytes, t, 7, 3, 0);
			if (ch != 8 || t[1 * 3 + 2] != 0.0f)
				c->bad++;
		}
		fini(c->p, ver, ctx);
	}
	return NULL;
}

static void test_cycles(void)
{
	setenv("NCCLBPF_POLICY", "native:pick", 1);
	struct harness_plugin p;
	CHECK(harness_open(&p, native_path) == 0);
	void *keep = init(&p, 5, 99, 16, 2);
	pthread_t th[8];
	struct cyc cs[8];
	for (int i = 0; i < 8; i++) {
		cs[i] = (struct cyc){.p = &p, .id = i};
		pthread_create(&th[i], NULL, cycle_thread, &cs[i]);
	}
	for (int k = 0; k < 1000; k++) {
		float t[21];
		harness_table(t, 7, 3, 2, 4096);
		CHECK(call(&p, 5, keep, 2, 4096, t, 7, 3, 0) == 8);
	}
	int bad = 0;
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		bad += cs[i].bad;
	}
	CHECK_EQ_U64(bad, 0);
	fini(&p, 5, keep);
	/* dlclose then dlopen again, as NCCL does after its last communicator is gone. */
	harness_close(&p);
	CHECK(harness_open(&p, native_path) == 0);
	void *ctx = init(&p, 6, 5, 8, 1);
	float t[21];
	harness_table(t, 7, 3, 4, 1 << 20);
	CHECK(call(&p, 6, ctx, 4, 1 << 20, t, 7, 3, 0) == 8);
	fini(&p, 6, ctx);
	harness_close(&p);
}

/* The shipped eBPF policies through the shipped plugin, with the JIT and the interpreter: the
 * decisions NCCL ends up with are the ones each policy's source describes. */
static const char *policy_dir, *test_policy_dir;

static void expect_decision(const struct harness_plugin *p, void *ctx, int coll, size_t bytes,
			    int algo, int proto, int ch)
{
	float t[21], o[21];
	harness_table(t, 7, 3, coll, bytes);
	memcpy(o, t, sizeof(t));
	int got_ch = call(p, 5, ctx, coll, bytes, t, 7, 3, 0);
	int a = -1, pr = -1;
	if (algo < 0) {
		CHECK(!memcmp(t, o, sizeof(t))); /* NCCL's own choice */
	} else {
		for (int k = 0; k < 21 && a < 0; k++)
			if (t[k] == 0.0f) {
				a = k / 3;
				pr = k % 3;
			}
		CHECK(a == algo && pr == proto);
		if (a != algo || pr != proto)
			fprintf(stderr, "  coll %d bytes %zu: got %d/%d, want %d/%d\n", coll, bytes,
				a, pr, algo, proto);
	}
	CHECK(got_ch == ch);
}

static void test_bundles(const char *engine)
{
	char path[4096];
	struct harness_plugin p;
	setenv("NCCLBPF_ENGINE", engine, 1);

	snprintf(path, sizeof(path), "%s/size_aware.o", policy_dir);
	setenv("NCCLBPF_POLICY", path, 1);
	int warns0 = harness_warns;
	CHECK(harness_open(&p, plugin_path) == 0);
	void *ctx = init(&p, 5, 3, 8, 1);
	/* size_aware: <= 64 KiB tree/LL else ring/LL; <= 4 MiB ring/LL128; larger ring/SIMPLE. */
	expect_decision(&p, ctx, 4, 8, NCCL_ALGO_TREE, NCCL_PROTO_LL, 0);
	expect_decision(&p, ctx, 2, 8, NCCL_ALGO_RING, NCCL_PROTO_LL, 0); /* no tree for AG */
	expect_decision(&p, ctx, 4, 65536, NCCL_ALGO_TREE, NCCL_PROTO_LL, 0);
	expect_decision(&p, ctx, 4, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_LL128, 0);
	expect_decision(&p, ctx, 3, 4 << 20, NCCL_ALGO_RING, NCCL_PROTO_LL128, 0);
	expect_decision(&p, ctx, 4, 256u << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0);
	/* A table smaller than 7 x 3 (NCCL before 2.23), 2 x 2: TREE, RING x LL, LL128. The
	 * program reads each cell at its 7 x 3 place (tuner_cells_f32), converted or not. */
	float mid[4] = {5.0f, 6.0f, 7.0f, 8.0f}, small[4] = {-1.0f, 6.0f, 7.0f, 8.0f},
	      big[4] = {5.0f, 6.0f, 7.0f, 8.0f};
	call(&p, 5, ctx, 4, 1 << 20, mid, 2, 2, 0); /* RING/LL128 */
	CHECK(mid[3] == 0.0f && mid[0] == 5.0f && mid[1] == 6.0f && mid[2] == 7.0f);
	call(&p, 5, ctx, 4, 8, small, 2, 2, 0); /* TREE/LL unusable: RING/LL */
	CHECK(small[2] == 0.0f && small[0] == -1.0f && small[1] == 6.0f && small[3] == 8.0f);
	call(&p, 5, ctx, 4, 256u << 20, big, 2, 2, 0); /* no SIMPLE column: NCCL decides */
	CHECK(big[0] == 5.0f && big[1] == 6.0f && big[2] == 7.0f && big[3] == 8.0f);
	fini(&p, 5, ctx);
	harness_close(&p);
	CHECK(harness_warns == warns0);

	snprintf(path, sizeof(path), "%s/table_tuner.o", policy_dir);
	setenv("NCCLBPF_POLICY", path, 1);
	CHECK(harness_open(&p, plugin_path) == 0);
	ctx = init(&p, 5, 3, 8, 1);
	expect_decision(&p, ctx, 4, 1024, NCCL_ALGO_TREE, NCCL_PROTO_LL, 2);
	expect_decision(&p, ctx, 4, 65536, NCCL_ALGO_RING, NCCL_PROTO_LL, 4);
	expect_decision(&p, ctx, 4, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_LL128, 8);
	expect_decision(&p, ctx, 4, 16 << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 16);
	expect_decision(&p, ctx, 4, 256u << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0);
	expect_decision(&p, ctx, 4, 1u << 30, -1, -1, 0); /* beyond the table: NCCL */
	expect_decision(&p, ctx, 2, 1024, -1, -1, 0);	  /* tree unavailable: rejected */
	fini(&p, 5, ctx);
	harness_close(&p);

	snprintf(path, sizeof(path), "%s/noop.o", policy_dir);
	setenv("NCCLBPF_POLICY", path, 1);
	CHECK(harness_open(&p, plugin_path) == 0);
	ctx = init(&p, 6, 3, 8, 1);
	for (int coll = 0; coll < 5; coll++)
		expect_decision(&p, ctx, coll, 1 << 20, -1, -1, 0);
	fini(&p, 6, ctx);
	harness_close(&p);

	/* A call-free program that reads n_nodes, which the register-keeping path does not fill,
	 * sees the communicator's node count (it takes the plain path). */
	snprintf(path, sizeof(path), "%s/by_nodes.o", test_policy_dir ? test_policy_dir : "");
	setenv("NCCLBPF_POLICY", path, 1);
	for (int nodes = 1; test_policy_dir && nodes <= 4; nodes += 3) {
		CHECK(harness_open(&p, plugin_path) == 0);
		ctx = init(&p, 5, 3, 8, nodes);
		float t[21];
		harness_table(t, 7, 3, 4, 1 << 20);
		CHECKF(call(&p, 5, ctx, 4, 1 << 20, t, 7, 3, 0) == 1 + nodes, "%d nodes", nodes);
		fini(&p, 5, ctx);
		harness_close(&p);
	}
	unsetenv("NCCLBPF_ENGINE");
}

/* NCCL 2.30's getChunkSize through SEC("tuner/chunk"): applied when at least one protocol
 * grain, refused below it, untouched where the program leaves it; v5 has no such hook. */
static void test_chunk_bundle(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/chunk.o", test_policy_dir);
	setenv("NCCLBPF_POLICY", path, 1);
	struct harness_plugin p;
	CHECK(harness_open(&p, plugin_path) == 0);
	void *ctx = init(&p, 6, 9, 8, 1);
	size_t chunk = 131072;
	CHECK(p.v6->getChunkSize(ctx, 4, 1 << 20, 1, NCCL_PROTO_SIMPLE, 1, &chunk) == ncclSuccess);
	CHECK(chunk == 262144);
	chunk = 131072;
	CHECK(p.v6->getChunkSize(ctx, 4, 1 << 20, 1, NCCL_PROTO_LL, 1, &chunk) == ncclSuccess);
	CHECK(chunk == 131072); /* 8 B < 16 B grain: refused */
	chunk = 131072;
	CHECK(p.v6->getChunkSize(ctx, 4, 1 << 20, 1, NCCL_PROTO_LL128, 1, &chunk) == ncclSuccess);
	CHECK(chunk == 131072);
	float t[21], o[21];
	harness_table(t, 7, 3, 4, 1 << 20);
	memcpy(o, t, sizeof(t));
	CHECK(call(&p, 6, ctx, 4, 1 << 20, t, 7, 3, 0) == 0 && !memcmp(t, o, sizeof(t)));
	fini(&p, 6, ctx);
	harness_close(&p);
}

/* Every deliberately unsafe example is rejected with a WARN and changes nothing. */
static void test_unsafe_bundles(void)
{
	static const char *const names[] = {"ctx_write_input", "div_zero",	 "map_oob",
					    "null_deref",      "ptr_to_map",	 "rank_dependent",
					    "stack_overflow",  "unbounded_loop", "unknown_helper"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/unsafe/%s.o", policy_dir, names[i]);
		if (access(path, R_OK) != 0)
			continue;
		check_passthrough(path, names[i]);
		CHECK(strstr(harness_last_warn, "not loaded") != NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PLUGIN.so COMPARISON.so\n", argv[0]);
		return 2;
	}
	plugin_path = argv[1];
	native_path = argv[2];
	policy_dir = argc > 3 ? argv[3] : NULL;
	test_policy_dir = argc > 4 ? argv[4] : NULL;
	setenv("NCCLBPF_WATCH", "0", 1);
	test_exports();
	check_passthrough(NULL, "no policy");
	check_passthrough("/nonexistent/policy.o", "missing bundle");
	char junk[] = "/tmp/ncclbpf-junk-XXXXXX";
	int fd = mkstemp(junk);
	CHECK(fd >= 0 && write(fd, "not an ELF object", 17) == 17);
	close(fd);
	check_passthrough(junk, "garbage bundle");
	unlink(junk);
	test_malformed();
	test_policies();
	test_cycles();
	if (policy_dir) {
		test_bundles("jit");
		test_bundles("interp");
		test_unsafe_bundles();
	}
	if (test_policy_dir)
		test_chunk_bundle();
	CHECK(harness_hidden_warns == 0);
	return check_summary("test_plugin");
}
