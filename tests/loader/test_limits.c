/* What a bundle may ask for (docs/security.md, Limits), checked before anything is created or
 * verified: the engine's rule (ebpf_object__check_limits, and ebpf_object__load with limits)
 * around the usage of a real object, and the runtime's limits on the loader's limit_* and
 * dup_sections test objects through a reload, which must fail with the usage and the limit in
 * its message and without verifying a program. The operator's NCCLBPF_MAX_MAP_BYTES is read
 * once per process, so its cases run in forked children.
 * Arguments: the directory of the loader's test objects. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rss.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/nccl_platform.h"

static const char *dir;

static const char *obj_path(const char *name)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static int expect_e2big(const struct ebpf_object *obj, const struct ebpf_object_limits *lim,
			const char *needle)
{
	char err[512] = "";
	int ret = ebpf_object__check_limits(obj, lim, NULL, err, sizeof(err));
	CHECKF(ret == -E2BIG && strstr(err, needle), "ret %d, '%s' lacks '%s'", ret, err, needle);
	return ret;
}

/* Each limit set at what features.o asks passes; one below it refuses, naming the limit. */
static void test_engine_rule(void)
{
	char err[512], want[128];
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path("features.o"), NULL, err, sizeof(err));
	CHECKF(obj != NULL, "%s", err);
	if (!obj)
		return;
	struct ebpf_object_usage u = {.sz = sizeof(u)};
	CHECK(ebpf_object__check_limits(obj, NULL, &u, err, sizeof(err)) == 0);
	uint64_t bytes = 0, ring = 0;
	uint32_t insns = 0;
	for (uint32_t i = 0; i < ebpf_object__map_cnt(obj); i++) {
		const struct ebpf_map_def *d = ebpf_object_map__def(ebpf_object__map(obj, i));
		bytes += ebpf_map__def_memory(d);
		if (d->type == EBPF_MAP_TYPE_RINGBUF && d->max_entries > ring)
			ring = d->max_entries;
	}
	for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++)
		insns += ebpf_program__insn_cnt(ebpf_object__prog(obj, i));
	CHECK_EQ_U64(u.maps, ebpf_object__map_cnt(obj));
	CHECK_EQ_U64(u.progs, ebpf_object__prog_cnt(obj));
	CHECK_EQ_U64(u.insns, insns);
	CHECK_EQ_U64(u.map_bytes, bytes);
	CHECK_EQ_U64(u.ringbuf_bytes, ring);
	CHECK(u.progs > 1 && u.insns > 1 && ring > 1 && bytes > 1);

	const struct ebpf_object_limits at = {.sz = sizeof(at),
					      .map_bytes = u.map_bytes,
					      .ringbuf_bytes = u.ringbuf_bytes,
					      .progs = u.progs,
					      .insns = u.insns,
					      .map_bytes_hint = "HINT raises it"};
	CHECK(ebpf_object__check_limits(obj, &at, NULL, err, sizeof(err)) == 0);
	struct ebpf_object_limits l = at;
	l.progs--;
	expect_e2big(obj, &l, "programs, over the limit of");
	l = at;
	l.insns--;
	expect_e2big(obj, &l, "instructions in all programs, over the limit of");
	l = at;
	l.ringbuf_bytes--;
	expect_e2big(obj, &l, "ring buffer 'events' of 4.0 KiB (4096 bytes), over the limit");
	l = at;
	l.map_bytes--;
	snprintf(want, sizeof(want), "(%llu bytes in %u maps;", (unsigned long long)u.map_bytes,
		 u.maps);
	expect_e2big(obj, &l, want);
	snprintf(want, sizeof(want), "exceeds the limit of %.1f KiB (%llu bytes); HINT raises it",
		 (double)l.map_bytes / 1024, (unsigned long long)l.map_bytes);
	expect_e2big(obj, &l, want);

	/* Loading with the limits refuses the same way, before any map or verification. */
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo), .limits = &l};
	err[0] = 0;
	CHECK(ebpf_object__load(obj, &lo, err, sizeof(err)) == -E2BIG);
	CHECK(strstr(err, "exceeds the limit of") != NULL);
	CHECK(!ebpf_object__is_loaded(obj));
	for (uint32_t i = 0; i < ebpf_object__map_cnt(obj); i++)
		CHECK(ebpf_object_map__map(ebpf_object__map(obj, i)) == NULL);
	for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++)
		CHECK(ebpf_program__verify_stats(ebpf_object__prog(obj, i))->processed == 0);
	lo.limits = &at;
	CHECKF(ebpf_object__load(obj, &lo, err, sizeof(err)) == 0, "%s", err);
	ebpf_object__close(obj);
}

/* A reload of name under the runtime's limits: fails with want_err, the message holds every
 * needle, and no program was verified. */
static void expect_refused(const char *name, int want_err, const char *const *needles)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	int e = ncclbpf_rt_reload(obj_path(name), &r);
	CHECKF(e == want_err && r.err == want_err, "%s: %d (%s)", name, e, r.msg);
	CHECKF(r.verify_ns == 0, "%s: %llu ns verifying", name, (unsigned long long)r.verify_ns);
	for (; *needles; needles++)
		CHECKF(strstr(r.msg, *needles) != NULL, "%s: '%s' lacks '%s'", name, r.msg,
		       *needles);
}

static void test_runtime_limits(void)
{
	struct ebpf_object_limits l;
	ncclbpf_rt_bundle_limits(&l);
	/* the documented defaults (docs/security.md) */
	CHECK_EQ_U64(l.map_bytes, 1ull << 30);
	CHECK_EQ_U64(l.ringbuf_bytes, 256ull << 20);
	CHECK_EQ_U64(l.progs, 16);
	CHECK_EQ_U64(l.insns, 128u << 10);
	expect_refused("limit_arrays.o", -E2BIG,
		       (const char *const[]){"map memory 8.0 GiB (", "largest 'big0' array 4.0 GiB",
					     "exceeds the limit of 1.0 GiB (1073741824 bytes)",
					     "NCCLBPF_MAX_MAP_BYTES raises it", NULL});
	expect_refused("limit_hash.o", -E2BIG,
		       (const char *const[]){"map memory 16.0 TiB", "'grows' hash",
					     "exceeds the limit of 1.0 GiB", NULL});
	expect_refused("limit_ringbuf.o", -E2BIG,
		       (const char *const[]){"ring buffer 'events' of 1.0 GiB",
					     "over the limit of 256.0 MiB", NULL});
	expect_refused("dup_sections.o", -EINVAL,
		       (const char *const[]){"program second: a second program for the hook of "
					     "SEC(\"profiler/proxy\") (the first is first)",
					     NULL});
}

/* The operator raises the budget: the 8 GiB of arrays load, and cost no resident memory until
 * used (they are committed lazily). A value that is not a size gets one WARN and the default. */
static char warn_text[1024];
static void capture(int level, const char *msg)
{
	if (level == NCCLBPF_LOG_WARN)
		snprintf(warn_text, sizeof(warn_text), "%s", msg);
}

static int child_raised(void)
{
	setenv("NCCLBPF_MAX_MAP_BYTES", "9G", 1);
	struct ebpf_object_limits l;
	ncclbpf_rt_bundle_limits(&l);
	CHECK_EQ_U64(l.map_bytes, 9ull << 30);
	ncclbpf_rt_acquire();
	uint64_t r0 = test_rss_bytes();
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECKF(ncclbpf_rt_reload(obj_path("limit_arrays.o"), &r) == 0, "%s", r.msg);
	uint64_t r1 = test_rss_bytes();
	CHECKF(r1 < r0 + (256ull << 20), "resident %llu -> %llu bytes", (unsigned long long)r0,
	       (unsigned long long)r1);
	ncclbpf_rt_release();
	return check_failures;
}

static int child_garbage(const char *value)
{
	setenv("NCCLBPF_MAX_MAP_BYTES", value, 1);
	ncclbpf_rt_set_logger(capture);
	struct ebpf_object_limits l;
	ncclbpf_rt_bundle_limits(&l);
	CHECK_EQ_U64(l.map_bytes, 1ull << 30);
	char want[128];
	snprintf(want, sizeof(want), "NCCLBPF_MAX_MAP_BYTES=%s ignored", value);
	CHECKF(strstr(warn_text, want) != NULL, "WARN '%s'", warn_text);
	return check_failures;
}

static void in_child(int (*fn)(const char *), const char *arg, const char *what)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg) ? 1 : 0);
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x", what, st);
}

static int raised(const char *unused)
{
	(void)unused;
	return child_raised();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_limits BPF_OBJECT_DIR\n");
		return 2;
	}
	dir = argv[1];
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_MAX_MAP_BYTES");
	test_engine_rule();
	in_child(raised, NULL, "NCCLBPF_MAX_MAP_BYTES=9G");
	in_child(child_garbage, "zz", "NCCLBPF_MAX_MAP_BYTES=zz");
	in_child(child_garbage, "512K", "NCCLBPF_MAX_MAP_BYTES=512K");
	in_child(child_garbage, "2T", "NCCLBPF_MAX_MAP_BYTES=2T");
	ncclbpf_rt_acquire();
	test_runtime_limits();
	ncclbpf_rt_release();
	return check_summary("limits");
}
