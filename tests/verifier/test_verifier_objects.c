/* Policies in C, compiled with clang, loaded as the runtime loads them (ebpf_object__load): each
 * source in tests/verifier/bpf/ says in its header comment what must happen to it:
 *   EXPECT-ACCEPT                      the object loads
 *   EXPECT-REJECT: text                loading fails with a message containing text (each line)
 *   EXPECT-CLASS: map rank-local|uniform|per-comm   how loading classified the map
 *   EXPECT-PROCESSED-MAX: n            no program took more than n processed instructions
 *   EXPECT-MEMORY-MAX-MB: n            no program's verification (accepted or not) took more
 *                                      than n MiB of verifier memory
 * In a REJECT text, @text@ stands for the number of the first source line containing text (the
 * line a message must name). One expectation per comment: clang-format reflows long comments.
 * Usage: test_verifier_objects SOURCE_DIR OBJECT_DIR */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"

#define MAX_EXPECT 16

struct expect {
	int accept;
	unsigned long max_processed, max_memory_mb;
	int n_reject, n_class;
	char reject[MAX_EXPECT][256];
	char class_map[MAX_EXPECT][64], class_name[MAX_EXPECT][32];
};

/* Replaces every @text@ in s by the number of the first line of the source containing text. */
static void resolve_lines(char *s, size_t len, const char *src)
{
	char *a, *b, out[256], text[128];
	while ((a = strchr(s, '@')) && (b = strchr(a + 1, '@'))) {
		int line = 0, n = 1;
		snprintf(text, sizeof(text), "%.*s", (int)(b - a - 1), a + 1);
		for (const char *l = src; *l && !line; n++) {
			const char *end = strchr(l, '\n');
			size_t ll = end ? (size_t)(end - l) : strlen(l);
			char buf[512];
			snprintf(buf, sizeof(buf), "%.*s", (int)ll, l);
			/* not the expectation itself */
			if (strstr(buf, text) && !strstr(buf, "EXPECT-"))
				line = n;
			l = end ? end + 1 : l + ll;
		}
		snprintf(out, sizeof(out), "%.*s%d%s", (int)(a - s), s, line, b + 1);
		snprintf(s, len, "%s", out);
	}
}

static void parse(FILE *f, struct expect *e)
{
	char line[512];
	memset(e, 0, sizeof(*e));
	while (fgets(line, sizeof(line), f)) {
		char *p;
		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "EXPECT-ACCEPT"))
			e->accept = 1;
		if ((p = strstr(line, "EXPECT-REJECT: ")) && e->n_reject < MAX_EXPECT) {
			p += strlen("EXPECT-REJECT: ");
			/* a comment's closing marker ends the text */
			char *end = strstr(p, " */");
			if (end)
				*end = 0;
			snprintf(e->reject[e->n_reject++], sizeof(e->reject[0]), "%s", p);
		}
		if ((p = strstr(line, "EXPECT-CLASS: ")) && e->n_class < MAX_EXPECT) {
			if (sscanf(p + strlen("EXPECT-CLASS: "), "%63s %31s",
				   e->class_map[e->n_class], e->class_name[e->n_class]) == 2)
				e->n_class++;
		}
		if ((p = strstr(line, "EXPECT-PROCESSED-MAX: ")))
			e->max_processed = strtoul(p + strlen("EXPECT-PROCESSED-MAX: "), NULL, 10);
		if ((p = strstr(line, "EXPECT-MEMORY-MAX-MB: ")))
			e->max_memory_mb = strtoul(p + strlen("EXPECT-MEMORY-MAX-MB: "), NULL, 10);
	}
}

static const char *class_of(const struct ebpf_object_map *m)
{
	uint32_t f = ebpf_object_map__rank_flags(m);
	if (f & EBPF_OBJECT_MAP_F_PER_COMM)
		return "per-comm";
	return f & EBPF_OBJECT_MAP_F_RANK_LOCAL ? "rank-local" : "uniform";
}

static void check_object(const char *src_dir, const char *obj_dir, const char *name)
{
	char path[1024], err[1024] = "";
	struct expect e;
	snprintf(path, sizeof(path), "%s/%s", src_dir, name);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	parse(f, &e);
	rewind(f);
	static char src[1 << 16];
	size_t got = fread(src, 1, sizeof(src) - 1, f);
	src[got] = 0;
	fclose(f);
	for (int i = 0; i < e.n_reject; i++)
		resolve_lines(e.reject[i], sizeof(e.reject[i]), src);
	CHECKF(e.accept != (e.n_reject > 0), "%s: says neither or both of ACCEPT and REJECT", name);

	snprintf(path, sizeof(path), "%s/%.*s.o", obj_dir, (int)(strlen(name) - 2), name);
	struct ebpf_object *obj = ncclbpf_object_open_file(path, NULL, err, sizeof(err));
	CHECKF(obj != NULL, "%s: %s", path, err);
	if (!obj)
		return;
	int rc = ebpf_object__load(obj, NULL, err, sizeof(err));
	if (e.accept)
		CHECKF(rc == 0, "%s: rejected: %s", name, err);
	else
		CHECKF(rc != 0, "%s: accepted, expected a rejection", name);
	for (int i = 0; i < e.n_reject; i++)
		CHECKF(strstr(err, e.reject[i]) != NULL, "%s: message lacks \"%s\": %s", name,
		       e.reject[i], err);
	for (int i = 0; i < e.n_class; i++) {
		struct ebpf_object_map *m = ebpf_object__find_map_by_name(obj, e.class_map[i]);
		CHECKF(m != NULL, "%s: no map %s", name, e.class_map[i]);
		if (m)
			CHECKF(!strcmp(class_of(m), e.class_name[i]),
			       "%s: map %s is %s, expected %s", name, e.class_map[i], class_of(m),
			       e.class_name[i]);
	}
	for (struct ebpf_program *p = ebpf_object__next_program(obj, NULL);
	     p && e.max_processed && !rc; p = ebpf_object__next_program(obj, p))
		CHECKF(ebpf_program__verify_stats(p)->processed <= e.max_processed,
		       "%s: %s processed %llu instructions, expected at most %lu", name,
		       ebpf_program__name(p),
		       (unsigned long long)ebpf_program__verify_stats(p)->processed,
		       e.max_processed);
	for (struct ebpf_program *p = ebpf_object__next_program(obj, NULL); p && e.max_memory_mb;
	     p = ebpf_object__next_program(obj, p))
		CHECKF(ebpf_program__verify_stats(p)->memory_bytes <= (e.max_memory_mb << 20),
		       "%s: %s took %llu bytes of verifier memory, expected at most %lu MiB", name,
		       ebpf_program__name(p),
		       (unsigned long long)ebpf_program__verify_stats(p)->memory_bytes,
		       e.max_memory_mb);
	printf("%s: %s\n", name, rc ? err : "loaded");
	ebpf_object__close(obj);
}

/* The loader's rank-consistency advice is in the platform's words: another host's words, or
 * none, and never the NCCL SDK's names from the engine itself (source lines quoted in the
 * message may name the SDK's other macros). */
static void check_platform_words(const char *obj_dir)
{
	static const struct {
		const char *obj, *mine, *none;
	} cases[] = {
	    {"rank_array_counter",
	     "declare it per-communicator (MY_PER_COMM), decide from ctx->tick, "
	     "or change it only through the control plane",
	     "declare it per-communicator, or change it only through the control plane"},
	    {"rank_global_counter",
	     "keep decision state in a per-communicator map (MY_PER_COMM) or decide from "
	     "ctx->tick, "
	     "and make",
	     "keep decision state in a per-communicator map, and make"},
	    {"rank_lru_presence", "per-communicator HASH (MY_PER_COMM)", "per-communicator HASH"},
	    {"rank_percpu_config", "per-communicator ARRAY (MY_PER_COMM)",
	     "per-communicator ARRAY"},
	    {"rank_observer_written",
	     "the control plane (mytool poke) into a map no program writes",
	     "the control plane into a map no program writes"},
	};
	struct ebpf_platform mine = *ncclbpf_platform(), none = *ncclbpf_platform();
	mine.per_comm_decl = "MY_PER_COMM";
	mine.uniform_input = "ctx->tick";
	mine.map_update_how = "mytool poke";
	none.per_comm_decl = none.uniform_input = none.map_update_how = NULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int w = 0; w < 2; w++) {
			char path[1024], err[1024] = "";
			struct ebpf_object_open_opts oo = {.sz = sizeof(oo),
							   .platform = w ? &none : &mine};
			const char *want = w ? cases[i].none : cases[i].mine;
			snprintf(path, sizeof(path), "%s/%s.o", obj_dir, cases[i].obj);
			struct ebpf_object *obj =
			    ebpf_object__open_file(path, &oo, err, sizeof(err));
			CHECKF(obj != NULL, "%s: %s", path, err);
			if (!obj)
				continue;
			CHECKF(ebpf_object__load(obj, NULL, err, sizeof(err)) != 0 &&
				   strstr(err, want) && !strstr(err, "NCCLBPF_F_PER_COMM") &&
				   !strstr(err, "NCCLBPF_CP_DIR"),
			       "%s (%s words): message lacks \"%s\" or names the SDK: %s",
			       cases[i].obj, w ? "no" : "another host's", want, err);
			ebpf_object__close(obj);
		}
}

/* Loads obj_dir/name.o; its load result, message and first program's processed instructions
 * and peak stored states (in one number). */
static int load_verdict(const char *obj_dir, const char *name, char *err, size_t len,
			unsigned long long *work)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s.o", obj_dir, name);
	struct ebpf_object *obj = ncclbpf_object_open_file(path, NULL, err, len);
	CHECKF(obj != NULL, "%s: %s", path, err);
	if (!obj)
		return -1;
	int rc = ebpf_object__load(obj, NULL, err, len);
	const struct ebpf_verify_stats *st =
	    ebpf_program__verify_stats(ebpf_object__next_program(obj, NULL));
	*work = st->processed << 20 | st->peak_states;
	ebpf_object__close(obj);
	return rc;
}

/* A verdict depends on the program only, not on what the process verified before: the memory
 * the verifier keeps from one verification for the next once counted toward the limit on
 * stored states, so a program that reaches it went another way after a large verification. */
static void check_repeatable(const char *obj_dir)
{
	static char e1[1024], e2[1024], e3[1024];
	unsigned long long p1, p2, p3;
	int r1 = load_verdict(obj_dir, "prec_counter_paths", e1, sizeof(e1), &p1);
	load_verdict(obj_dir, "prec_long_table_scan", e3, sizeof(e3), &p3);
	int r2 = load_verdict(obj_dir, "prec_counter_paths", e2, sizeof(e2), &p2);
	CHECKF(r1 == r2 && p1 == p2 && !strcmp(e1, e2),
	       "prec_counter_paths: verified differently the second time (%d, %llu: %s) / (%d, "
	       "%llu: %s)",
	       r1, p1, e1, r2, p2, e2);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s SOURCE_DIR OBJECT_DIR\n", argv[0]);
		return 2;
	}
	DIR *d = opendir(argv[1]);
	int n = 0;
	CHECK(d != NULL);
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t len = strlen(de->d_name);
		if (len < 3 || strcmp(de->d_name + len - 2, ".c"))
			continue;
		check_object(argv[1], argv[2], de->d_name);
		n++;
	}
	if (d)
		closedir(d);
	CHECK(n > 0);
	printf("%d policies\n", n);
	check_platform_words(argv[2]);
	check_repeatable(argv[2]);
	return check_summary("test_verifier_objects");
}
