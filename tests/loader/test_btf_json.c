/* ebpf_object_map__json: map keys and values as JSON typed by the object's BTF, checked
 * exactly against tests/loader/bpf/btf_values.c (structs by field, an anonymous union inlined,
 * bitfields, enums by name, a char array as a string, bools, signed numbers, arrays, per-CPU
 * values, a map declared by sizes only, global data sections), and the refusals: bytes too
 * short for the type, a buffer too small. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"

static int failures;

static void expect(const char *what, const struct ebpf_object_map *m, int value, const void *data,
		   size_t n, int want_rc, const char *want)
{
	char out[1024];
	int rc = ebpf_object_map__json(m, value, data, n, out, sizeof(out));
	if (rc != want_rc || strcmp(out, want)) {
		printf("FAIL %s: rc %d, '%s'\n  want rc %d, '%s'\n", what, rc, out, want_rc, want);
		failures++;
	}
}

struct span {
	unsigned long long start_ns, end_ns;
};

/* The layout of struct stats in btf_values.c, filled by hand. */
struct stats_bytes {
	char name[8];
	unsigned char seen, pad[3];
	int delta;
	unsigned phase;
	unsigned pad2;
	struct span span;
	unsigned raw;
	unsigned bits; /* low:3, high:5 */
	unsigned long long hist[3];
};

int main(int argc, char **argv)
{
	char err[512], path[4096];
	if (argc != 2) {
		fprintf(stderr, "usage: %s BPF_TEST_DIR\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/btf_values.o", argv[1]);
	struct ebpf_object *obj = ncclbpf_object_open_file(path, NULL, err, sizeof(err));
	if (!obj) {
		printf("FAIL open: %s\n", err);
		return 1;
	}
	const struct ebpf_object_map *typed = ebpf_object__find_map_by_name(obj, "typed");
	const struct ebpf_object_map *percpu = ebpf_object__find_map_by_name(obj, "percpu");
	const struct ebpf_object_map *untyped = ebpf_object__find_map_by_name(obj, "untyped");
	const struct ebpf_object_map *bss = ebpf_object__find_map_by_name(obj, ".bss");
	const struct ebpf_object_map *data = ebpf_object__find_map_by_name(obj, ".data");
	if (!typed || !percpu || !untyped || !bss || !data) {
		printf("FAIL: maps missing\n");
		return 1;
	}

	struct {
		unsigned comm;
		unsigned short coll, pad;
	} key = {7, 4, 0};
	expect("struct key", typed, 0, &key, sizeof(key), 1, "{\"comm\":7,\"coll\":4,\"pad\":0}");

	struct stats_bytes s;
	memset(&s, 0, sizeof(s));
	memcpy(s.name, "ring", 4);
	s.seen = 1;
	s.delta = -3;
	s.phase = 7;
	s.span = (struct span){100, 250};
	s.raw = 0x00020001;
	s.bits = 5 | 17 << 3;
	s.hist[0] = 1;
	s.hist[2] = 18446744073709551615ull;
	expect("struct value", typed, 1, &s, sizeof(s), 1,
	       "{\"name\":\"ring\",\"seen\":true,\"delta\":-3,\"phase\":\"PHASE_DONE\","
	       "\"span\":{\"start_ns\":100,\"end_ns\":250},\"raw\":131073,\"half\":[1,2],"
	       "\"low\":5,\"high\":17,\"hist\":[1,0,18446744073709551615]}");
	/* A name that is not a C string, an enum value without a name. */
	memcpy(s.name, "\x01\x02", 2);
	s.phase = 3;
	s.seen = 0;
	expect("bytes name, unnamed enum", typed, 1, &s, sizeof(s), 1,
	       "{\"name\":[1,2,110,103,0,0,0,0],\"seen\":false,\"delta\":-3,\"phase\":3,"
	       "\"span\":{\"start_ns\":100,\"end_ns\":250},\"raw\":131073,\"half\":[1,2],"
	       "\"low\":5,\"high\":17,\"hist\":[1,0,18446744073709551615]}");
	/* Too few bytes for the type: not typed, hex. */
	unsigned char three[3] = {1, 2, 3};
	expect("short value", typed, 1, three, sizeof(three), 0, "\"0x030201\"");

	long long v = -42;
	expect("per-CPU s64", percpu, 1, &v, sizeof(v), 1, "-42");
	unsigned zero = 0;
	expect("u32 key", percpu, 0, &zero, sizeof(zero), 1, "0");

	unsigned char twelve[12] = {0xff, 0, 0, 0, 1};
	expect("untyped value", untyped, 1, twelve, sizeof(twelve), 0,
	       "\"0x0000000000000001000000ff\"");
	unsigned k = 1;
	expect("untyped key", untyped, 0, &k, sizeof(k), 0, "1");

	struct span last = {1, 2};
	expect(".bss", bss, 1, &last, sizeof(last), 1, "{\"last\":{\"start_ns\":1,\"end_ns\":2}}");
	unsigned long long counter = 5;
	expect(".data", data, 1, &counter, sizeof(counter), 1, "{\"counter\":5}");

	char small[8];
	int rc = ebpf_object_map__json(typed, 1, &s, sizeof(s), small, sizeof(small));
	if (rc != -ENOSPC || small[0]) {
		printf("FAIL small buffer: rc %d '%s'\n", rc, small);
		failures++;
	}
	ebpf_object__close(obj);
	printf("%s\n", failures ? "FAILED" : "test_btf_json: all checks passed");
	return failures != 0;
}
