/* Loader unit test: what the loader makes of the features object and the shipped policies, and
 * the exact rejection (section, symbol, offset) of every unsupported construct and of
 * hand-corrupted ELF headers. Arguments: the test-object directory and the policy directory. */
#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "ldr_util.h"
#include "ncclbpf.h"
#include "ebpf/elf.h"
#include "ebpf/epoch.h"
#include "ebpf/object.h"
#include "ebpf/jit.h"
#include "ncclbpf/nccl_platform.h"

static const char *bpf_dir, *pol_dir;
static char path[4096];

static const char *obj_path(const char *dir, const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* The call targets of a program are function starts inside it, each map immediate an index
 * into the object's map table. */
static void check_structure(const struct ebpf_object *obj, const struct ebpf_program *p)
{
	const struct ebpf_insn *in = ebpf_program__insns(p);
	uint32_t n = ebpf_program__insn_cnt(p);
	for (uint32_t i = 0; i < n; i++) {
		if (in[i].code == (EBPF_JMP | EBPF_CALL) && in[i].src_reg == EBPF_PSEUDO_CALL) {
			int64_t t = (int64_t)i + in[i].imm + 1;
			CHECK(t >= ebpf_program__entry_insn_cnt(p) && t < n);
			CHECK(t > 0 && in[t - 1].code == (EBPF_JMP | EBPF_EXIT));
		}
		if (ebpf_insn_is_lddw(&in[i])) {
			if (in[i].src_reg == EBPF_PSEUDO_MAP_FD ||
			    in[i].src_reg == EBPF_PSEUDO_MAP_VALUE)
				CHECK((uint32_t)in[i].imm < ebpf_object__map_cnt(obj));
			i++;
		}
	}
}

/* Finds the n-th LD_IMM64 with a pseudo source in p. */
static const struct ebpf_insn *nth_pseudo(const struct ebpf_program *p, int src, int nth)
{
	const struct ebpf_insn *in = ebpf_program__insns(p);
	for (uint32_t i = 0; i < ebpf_program__insn_cnt(p); i++)
		if (ebpf_insn_is_lddw(&in[i]) && in[i].src_reg == src && nth-- == 0)
			return &in[i];
	return NULL;
}

static void test_features(void)
{
	char err[256];
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path(bpf_dir, "features.o"), NULL, err, sizeof(err));
	CHECK(obj != NULL);
	if (!obj) {
		fprintf(stderr, "features.o: %s\n", err);
		return;
	}
	CHECK(strstr(ebpf_object__name(obj), "features.o") != NULL);
	CHECK(!ebpf_object__is_loaded(obj));
	/* The engine knows no program type of its own: without the NCCL platform the same file
	 * is refused at its first program section. */
	char none[256] = "";
	struct ebpf_object *bare =
	    ebpf_object__open_file(obj_path(bpf_dir, "features.o"), NULL, none, sizeof(none));
	CHECK(bare == NULL);
	CHECKF(strstr(none, "unknown program type (known: none;") != NULL, "%s", none);
	ebpf_object__close(bare);

	/* Maps: BTF maps in declaration order, then .rodata, .data, .bss. */
	static const struct {
		const char *name;
		uint32_t type, key, value, entries, flags;
		int kind;
	} want[] = {
	    {"hmap", EBPF_MAP_TYPE_HASH, 16, 8, 128, 0, EBPF_OBJECT_MAP_BTF},
	    {"pcpu", EBPF_MAP_TYPE_PERCPU_ARRAY, 4, 24, 4, 0, EBPF_OBJECT_MAP_BTF},
	    {"lru", EBPF_MAP_TYPE_LRU_HASH, 4, 4, 32, 0, EBPF_OBJECT_MAP_BTF},
	    {"events", EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, EBPF_OBJECT_MAP_BTF},
	    {".rodata", EBPF_MAP_TYPE_ARRAY, 4, 4, 1, EBPF_MAP_F_RDONLY_PROG,
	     EBPF_OBJECT_MAP_RODATA},
	    {".data", EBPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, EBPF_OBJECT_MAP_DATA},
	    {".bss", EBPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, EBPF_OBJECT_MAP_BSS},
	};
	CHECK_EQ_U64(ebpf_object__map_cnt(obj), sizeof(want) / sizeof(want[0]));
	uint32_t i = 0;
	for (struct ebpf_object_map *m = ebpf_object__next_map(obj, NULL); m;
	     m = ebpf_object__next_map(obj, m), i++) {
		if (i >= sizeof(want) / sizeof(want[0]))
			break;
		const struct ebpf_map_def *d = ebpf_object_map__def(m);
		CHECK(!strcmp(ebpf_object_map__name(m), want[i].name));
		CHECK(!strcmp(d->name, want[i].name));
		CHECK_EQ_U64(ebpf_object_map__index(m), i);
		CHECK_EQ_U64(d->type, want[i].type);
		CHECK_EQ_U64(d->key_size, want[i].key);
		CHECK_EQ_U64(d->value_size, want[i].value);
		CHECK_EQ_U64(d->max_entries, want[i].entries);
		CHECK_EQ_U64(d->flags, want[i].flags);
		CHECK_EQ_U64(ebpf_object_map__kind(m), want[i].kind);
		CHECK(!strcmp(ebpf_object_map_kind__name(want[i].kind),
			      want[i].kind == EBPF_OBJECT_MAP_BTF ? "maps" : want[i].name + 1));
		CHECK(ebpf_object__find_map_by_name(obj, want[i].name) == m);
		CHECK(ebpf_object_map__map(m) == NULL);
	}
	CHECK(ebpf_object__find_map_by_name(obj, "nope") == NULL);
	CHECK(!strcmp(ebpf_object_map_kind__name(-1), "?"));
	size_t sz;
	const uint8_t *init = ebpf_object_map__initial_data(ebpf_object__map(obj, 4), &sz);
	uint32_t u32;
	uint64_t u64;
	CHECK(init && sz == 4);
	if (init) {
		memcpy(&u32, init, 4);
		CHECK_EQ_U64(u32, 1234);
	}
	init = ebpf_object_map__initial_data(ebpf_object__map(obj, 5), &sz);
	CHECK(init && sz == 8);
	if (init) {
		memcpy(&u64, init, 8);
		CHECK_EQ_U64(u64, 77);
	}
	init = ebpf_object_map__initial_data(ebpf_object__map(obj, 6), &sz);
	CHECK(init && sz == 4 && !init[0] && !init[3]);
	CHECK(ebpf_object_map__initial_data(ebpf_object__map(obj, 0), &sz) == NULL && sz == 0);

	/* Programs: two in one section, each with its own copy of the subprograms it calls. */
	static const struct {
		const char *name, *sec, *type;
	} wp[] = {{"first", "tuner", "tuner"},
		  {"second", "tuner", "tuner"},
		  {"prof", "profiler", "profiler"},
		  {"on_connect", "net/connect", "net"}};
	CHECK_EQ_U64(ebpf_object__prog_cnt(obj), 4);
	for (i = 0; i < 4 && i < ebpf_object__prog_cnt(obj); i++) {
		struct ebpf_program *p = ebpf_object__prog(obj, i);
		CHECK(!strcmp(ebpf_program__name(p), wp[i].name));
		CHECK(!strcmp(ebpf_program__section(p), wp[i].sec));
		CHECK(!strcmp(ebpf_program__type(p)->name, wp[i].type));
		CHECK(ebpf_object__find_program_by_name(obj, wp[i].name) == p);
		CHECK(ebpf_program__exec(p) == NULL);
		check_structure(obj, p);
	}
	struct ebpf_program *first = ebpf_object__find_program_by_name(obj, "first");
	struct ebpf_program *second = ebpf_object__find_program_by_name(obj, "second");
	struct ebpf_program *prof = ebpf_object__find_program_by_name(obj, "prof");
	CHECK(ebpf_object__find_program_by_name(obj, "twice") == NULL); /* a subprogram */
	CHECK(first && second && prof);
	if (!first || !second || !prof)
		goto out;
	/* first calls twice: one function appended; second calls thrice_plus which calls twice. */
	CHECK(ebpf_program__insn_cnt(first) > ebpf_program__entry_insn_cnt(first));
	CHECK(ebpf_program__insn_cnt(prof) == ebpf_program__entry_insn_cnt(prof));
	uint32_t calls = 0;
	const struct ebpf_insn *in = ebpf_program__insns(second);
	for (i = 0; i < ebpf_program__insn_cnt(second); i++)
		calls += in[i].code == (EBPF_JMP | EBPF_CALL) && in[i].src_reg == EBPF_PSEUDO_CALL;
	CHECK_EQ_U64(calls, 2);
	uint32_t twice_len = ebpf_program__insn_cnt(first) - ebpf_program__entry_insn_cnt(first);
	CHECK(ebpf_program__insn_cnt(second) > ebpf_program__entry_insn_cnt(second) + twice_len);

	/* Global data references: .rodata 'limit' (map 4) from twice, .data 'counter' (5), .bss
	 * 'zeroed' (6); map references as PSEUDO_MAP_FD. */
	const struct ebpf_insn *ld = nth_pseudo(first, EBPF_PSEUDO_MAP_VALUE, 0);
	CHECK(ld && ld->imm == 4 && ld[1].imm == 0);
	int seen[8] = {0};
	for (int k = 0; (ld = nth_pseudo(second, EBPF_PSEUDO_MAP_VALUE, k)); k++)
		if ((uint32_t)ld->imm < 8)
			seen[ld->imm]++;
	CHECK(seen[4] && seen[5] && seen[6]);
	memset(seen, 0, sizeof(seen));
	for (int k = 0; (ld = nth_pseudo(prof, EBPF_PSEUDO_MAP_FD, k)); k++)
		if ((uint32_t)ld->imm < 8)
			seen[ld->imm]++;
	CHECK(seen[0] && seen[1] && seen[2] && seen[3] && !seen[4]);

	/* Line info: sorted, covers the entry and the appended subprogram with its own source. */
	uint32_t nl;
	const struct ebpf_line_info *li = ebpf_program__line_info(second, &nl);
	CHECK(nl > 0);
	int sub_line = 0;
	for (i = 0; i < nl; i++) {
		CHECK(li[i].insn < ebpf_program__insn_cnt(second));
		if (i)
			CHECK(li[i].insn >= li[i - 1].insn);
		CHECK(li[i].file == NULL || strstr(li[i].file, "features.c") != NULL);
		if (li[i].insn >= ebpf_program__entry_insn_cnt(second) && li[i].src &&
		    strstr(li[i].src, "counter += 1"))
			sub_line = 1;
	}
	CHECK(sub_line);
	const struct ebpf_line_info *l0 = ebpf_program__line_of(second, 0);
	CHECK(l0 && l0->src && strstr(l0->src, "second"));
	const struct ebpf_line_info *last =
	    ebpf_program__line_of(second, ebpf_program__insn_cnt(second) - 1);
	CHECK(last && last->src && strstr(last->src, "x * 2 + limit"));
out:
	ebpf_object__close(obj);
}

static void expect_reject(const char *file, const char *msg1, const char *msg2)
{
	char err[512] = "";
	errno = 0;
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path(bpf_dir, file), NULL, err, sizeof(err));
	CHECK(obj == NULL);
	CHECK(errno == EINVAL);
	CHECK(strstr(err, msg1) != NULL);
	CHECK(!msg2 || strstr(err, msg2) != NULL);
	if (obj || !strstr(err, msg1) || (msg2 && !strstr(err, msg2)))
		fprintf(stderr, "%s: got '%s'\n", file, err);
	ebpf_object__close(obj);
}

static void test_rejections(void)
{
	/* the known sections are listed from the program type table, net's each by name (all of
	 * them against the table: test_sections.c) */
	expect_reject("bad_section.o", "section 'xdp': unknown program type",
		      "profiler/coll_end, profiler/proxy, net/connect, net/accept,");
	expect_reject("bad_extern.o", "section 'tuner', function 'uses_extern', insn 0",
		      "undefined symbol 'CONFIG_HZ'");
	expect_reject("bad_extern_call.o", "function 'calls_extern', insn ", "call to 'elsewhere'");
	expect_reject("bad_callback.o", "function 'takes_address'", "address of function 'cb'");
	expect_reject("bad_core.o", "section 'tuner', offset 0x", "CO-RE relocation");
	expect_reject("bad_map_attr.o", "map 'odd': unknown attribute 'frobnicate'", NULL);
	expect_reject("bad_ptr_in_data.o", "'.rel.data'", "pointers in global data");
	expect_reject("bad_no_btf_maps.o", "map 'm'", "compile with -g");
}

/* Corrupts a copy of features.o with edit() and expects a rejection mentioning msg. */
static void corrupt(const char *what, void (*edit)(uint8_t *img, size_t *size), const char *msg)
{
	size_t size;
	char err[512] = "";
	uint8_t *img = ldr_read_file(obj_path(bpf_dir, "features.o"), &size);
	CHECK(img != NULL);
	if (!img)
		return;
	edit(img, &size);
	errno = 0;
	struct ebpf_object *obj = ncclbpf_object_open_mem(img, size, NULL, err, sizeof(err));
	CHECK(obj == NULL);
	CHECK(errno == EINVAL || errno == E2BIG);
	CHECK(strstr(err, msg) != NULL);
	if (obj || !strstr(err, msg))
		fprintf(stderr, "%s: got '%s', want '%s'\n", what, err, msg);
	ebpf_object__close(obj);
	free(img);
}

static void set16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}
static void set32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}
static void set64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void e_machine(uint8_t *img, size_t *size)
{
	set16(img + 18, 62); /* x86-64 */
}
static void e_class(uint8_t *img, size_t *size)
{
	img[4] = 1;
}
static void e_endian(uint8_t *img, size_t *size)
{
	img[5] = 2;
}
static void e_truncate(uint8_t *img, size_t *size)
{
	*size -= 200; /* cuts into the section headers at the end */
}
static void e_sec_outside(uint8_t *img, size_t *size)
{
	set64(ldr_shdr(img, ldr_find_shdr(img, "tuner")) + 32, 1ull << 40);
}
static void e_overlap(uint8_t *img, size_t *size)
{
	uint8_t *t = ldr_shdr(img, ldr_find_shdr(img, "tuner"));
	uint8_t *p = ldr_shdr(img, ldr_find_shdr(img, "profiler"));
	memcpy(p + 24, t + 24, 8); /* profiler's contents start where tuner's do */
}
static void e_name(uint8_t *img, size_t *size)
{
	set32(ldr_shdr(img, ldr_find_shdr(img, "tuner")), 0x7fffffff);
}
static void e_shnum(uint8_t *img, size_t *size)
{
	set16(img + 60, 0xffff);
}
static void e_reltype(uint8_t *img, size_t *size)
{
	uint8_t *r = ldr_shdr(img, ldr_find_shdr(img, ".reltuner"));
	uint64_t off;
	memcpy(&off, r + 24, 8);
	set32(img + off + 8, 77); /* first relocation's type */
}
static void e_relsym(uint8_t *img, size_t *size)
{
	uint8_t *r = ldr_shdr(img, ldr_find_shdr(img, ".reltuner"));
	uint64_t off;
	memcpy(&off, r + 24, 8);
	set32(img + off + 12, 0xfffff); /* first relocation's symbol */
}
static void e_reloff(uint8_t *img, size_t *size)
{
	uint8_t *r = ldr_shdr(img, ldr_find_shdr(img, ".reltuner"));
	uint64_t off;
	memcpy(&off, r + 24, 8);
	set64(img + off, 1ull << 33);
}
static void e_reldup(uint8_t *img, size_t *size)
{
	uint8_t *r = ldr_shdr(img, ldr_find_shdr(img, ".reltuner"));
	uint64_t off, n;
	memcpy(&off, r + 24, 8);
	memcpy(&n, r + 32, 8);
	CHECK(n >= 32);			      /* features.c's tuner has more than one relocation */
	memcpy(img + off + 16, img + off, 8); /* the second one stands on the first one's insn */
}
static void e_btf_types(uint8_t *img, size_t *size)
{
	uint8_t *b = ldr_shdr(img, ldr_find_shdr(img, ".BTF"));
	uint64_t off;
	memcpy(&off, b + 24, 8);
	set32(img + off + 12, 0x7fffffff); /* type_len */
}
static void e_btf_str(uint8_t *img, size_t *size)
{
	uint8_t *b = ldr_shdr(img, ldr_find_shdr(img, ".BTF"));
	uint64_t off;
	memcpy(&off, b + 24, 8);
	uint32_t hdr_len, type_off;
	memcpy(&hdr_len, img + off + 4, 4);
	memcpy(&type_off, img + off + 8, 4);
	set32(img + off + hdr_len + type_off, 0x7ffffff0); /* name_off of type 1 */
}
static void e_ext_count(uint8_t *img, size_t *size)
{
	uint8_t *b = ldr_shdr(img, ldr_find_shdr(img, ".BTF.ext"));
	uint64_t off;
	memcpy(&off, b + 24, 8);
	uint32_t hdr_len, li_off;
	memcpy(&hdr_len, img + off + 4, 4);
	memcpy(&li_off, img + off + 16, 4);
	set32(img + off + hdr_len + li_off + 8, 0x10000000); /* first section's record count */
}
static void e_symtab_entsize(uint8_t *img, size_t *size)
{
	set64(ldr_shdr(img, ldr_find_shdr(img, ".symtab")) + 56, 16);
}
static void e_code_size(uint8_t *img, size_t *size)
{
	uint8_t *t = ldr_shdr(img, ldr_find_shdr(img, "tuner"));
	uint64_t sz;
	memcpy(&sz, t + 32, 8);
	set64(t + 32, sz - 4);
}

static void test_corruptions(void)
{
	corrupt("machine", e_machine, "is not BPF");
	corrupt("class", e_class, "need ELF64");
	corrupt("endian", e_endian, "need little-endian");
	corrupt("truncated", e_truncate, "outside the file");
	corrupt("section outside", e_sec_outside, "outside the file");
	corrupt("overlap", e_overlap, "overlap");
	corrupt("section name", e_name, "name offset");
	corrupt("section count", e_shnum, "section header");
	corrupt("relocation type", e_reltype, "section 'tuner', offset 0x");
	corrupt("relocation type", e_reltype, "): relocation type 77 not supported");
	corrupt("relocation symbol", e_relsym, "): relocation against unknown symbol 1048575");
	corrupt("relocation twice", e_reldup, "): two relocations");
	corrupt("relocation offset", e_reloff, "outside or misaligned");
	corrupt("BTF type length", e_btf_types, "section '.BTF'");
	corrupt("BTF string offset", e_btf_str, "name offset");
	corrupt("BTF.ext count", e_ext_count, "overrun");
	corrupt("symtab entsize", e_symtab_entsize, "symbol size");
	corrupt("code size", e_code_size, "not a multiple of 8");

	char err[128] = "x";
	CHECK(ncclbpf_object_open_mem(NULL, 0, NULL, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "not an ELF") != NULL);
	CHECK(ncclbpf_object_open_mem("\x7f"
				      "ELF",
				      4, NULL, err, sizeof(err)) == NULL);
	CHECK(ncclbpf_object_open_file("/nonexistent/x.o", NULL, err, sizeof(err)) == NULL);
	CHECK(errno == ENOENT && strstr(err, "/nonexistent/x.o"));
	/* A named open uses the name in messages. */
	struct ebpf_object_open_opts o = {.sz = sizeof(o), .name = "bundle-7"};
	CHECK(ncclbpf_object_open_mem("junk", 4, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "not an ELF") != NULL);
}

/* ebpf_elf_find_section on features.o as built, then on copies corrupted by edit(): the found
 * bytes are the section's, and each malformed image is refused with its own message. */
static void find_in(const char *what, void (*edit)(uint8_t *img, size_t *size), const char *name,
		    int want_rc, const char *msg)
{
	size_t size;
	uint8_t *img = ldr_read_file(obj_path(bpf_dir, "features.o"), &size);
	CHECK(img != NULL);
	if (!img)
		return;
	if (edit)
		edit(img, &size);
	uint64_t off = 7, len = 7;
	uint32_t type = 0;
	char err[256] = "";
	int rc = ebpf_elf_find_section(img, size, name, &off, &len, &type, err, sizeof(err));
	CHECKF(rc == want_rc && (!msg || strstr(err, msg)), "%s: rc %d, '%s'", what, rc, err);
	if (!rc && !strcmp(name, ".data")) {
		uint64_t v = 0;
		CHECK(type == EBPF_ELF_SHT_PROGBITS && len == 8 && off + len <= size);
		if (len == 8)
			memcpy(&v, img + off, 8);
		CHECK_EQ_U64(v, 77); /* features.c's initialised global */
	}
	if (!rc && !strcmp(name, ".bss"))
		CHECK(type == EBPF_ELF_SHT_NOBITS && off == 0 && len == 0);
	free(img);
}

static void test_find_section(void)
{
	find_in("as built", NULL, ".data", 0, NULL);
	find_in("as built", NULL, ".bss", 0, NULL);
	find_in("as built", NULL, ".ncclbpf.nope", -ENOENT, "no .ncclbpf.nope section");
	find_in("class", e_class, ".data", -ENOEXEC, "not a little-endian ELF64 object");
	find_in("endian", e_endian, ".data", -ENOEXEC, "not a little-endian ELF64 object");
	find_in("truncated", e_truncate, ".data", -ENOEXEC, "bad section header table");
	find_in("shnum", e_shnum, ".data", -ENOEXEC, "bad section header table");
	find_in("outside", e_sec_outside, "tuner", -ENOEXEC, "section tuner lies outside the file");
	find_in("name", e_name, "tuner", -ENOENT, "no tuner section");
}

/* Every shipped policy opens with the programs it declares. */
static void test_policies(void)
{
	static const struct {
		const char *file, *prog, *type;
		uint32_t maps;
	} pol[] = {
	    {"noop.o", "noop", "tuner", 0},
	    {"size_aware.o", "size_aware", "tuner", 0},
	    {"table_tuner.o", "table_tuner", "tuner", 1},
	    {"profiler_latency.o", "profiler_latency", "profiler_coll_end", 2},
	    {"unsafe/null_deref.o", "null_deref", "profiler", 1},
	    {"unsafe/map_oob.o", "map_oob", "profiler", 1},
	    {"unsafe/ctx_write_input.o", "ctx_write_input", "tuner", 0},
	    {"unsafe/unbounded_loop.o", "unbounded_loop", "tuner", 0},
	    {"unsafe/unknown_helper.o", "unknown_helper", "profiler", 1},
	    {"unsafe/stack_overflow.o", "stack_overflow", "tuner", 0},
	    {"unsafe/div_zero.o", "div_zero", "tuner", 1},
	    {"unsafe/ptr_to_map.o", "ptr_to_map", "profiler", 1},
	    {"unsafe/rank_dependent.o", "decide", "tuner", 1},
	    {"unsafe/closed_loop_direct.o", "adapt", "tuner", 1},
	};
	for (size_t i = 0; i < sizeof(pol) / sizeof(pol[0]); i++) {
		char err[256];
		struct ebpf_object *obj = ncclbpf_object_open_file(obj_path(pol_dir, pol[i].file),
								   NULL, err, sizeof(err));
		CHECK(obj != NULL);
		if (!obj) {
			fprintf(stderr, "%s: %s\n", pol[i].file, err);
			continue;
		}
		struct ebpf_program *p = ebpf_object__find_program_by_name(obj, pol[i].prog);
		CHECK(p && !strcmp(ebpf_program__type(p)->name, pol[i].type));
		CHECK_EQ_U64(ebpf_object__map_cnt(obj), pol[i].maps);
		if (p) {
			uint32_t nl;
			ebpf_program__line_info(p, &nl);
			CHECK(nl > 0);
			check_structure(obj, p);
		}
		ebpf_object__close(obj);
	}
	/* table_tuner's table is the .data map's initial contents (6 rows of 24 bytes). */
	char err[256];
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path(pol_dir, "table_tuner.o"), NULL, err, sizeof(err));
	if (obj) {
		struct ebpf_object_map *m = ebpf_object__find_map_by_name(obj, ".data");
		size_t sz;
		const uint8_t *d = m ? ebpf_object_map__initial_data(m, &sz) : NULL;
		uint64_t first_max;
		CHECK(d && sz == 6 * 24);
		if (d) {
			memcpy(&first_max, d, 8);
			CHECK_EQ_U64(first_max, 4096);
		}
		ebpf_object__close(obj);
	}
}

static uint64_t run(const struct ebpf_program *p, void *ctx)
{
	uint64_t r0 = ~0ull;
	ebpf_epoch_enter();
	int ret = ebpf_interp__run(ebpf_program__exec(p), (uint64_t)(uintptr_t)ctx, 0, NULL, &r0);
	ebpf_epoch_exit();
	CHECK_EQ_U64(ret, 0);
	return r0;
}

/* Loading creates the maps with their initial data and programs that compute what the C says,
 * subprograms and global data included. */
static void test_load(void)
{
	char err[256];
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path(bpf_dir, "features.o"), NULL, err, sizeof(err));
	CHECK(obj != NULL);
	if (!obj)
		return;
	int ret = ebpf_object__load(obj, NULL, err, sizeof(err));
	CHECK_EQ_U64(ret, 0);
	if (ret) {
		fprintf(stderr, "load: %s\n", err);
		ebpf_object__close(obj);
		return;
	}
	CHECK(ebpf_object__is_loaded(obj));
	CHECK_EQ_U64(ebpf_object__load(obj, NULL, err, sizeof(err)), -EBUSY);
	for (uint32_t i = 0; i < ebpf_object__map_cnt(obj); i++) {
		struct ebpf_map *m = ebpf_object_map__map(ebpf_object__map(obj, i));
		CHECK(m != NULL);
		if (m)
			CHECK(!strcmp(ebpf_map__name(m),
				      ebpf_object_map__name(ebpf_object__map(obj, i))));
	}
	struct ebpf_map *ro = ebpf_object_map__map(ebpf_object__find_map_by_name(obj, ".rodata"));
	struct ebpf_map *data = ebpf_object_map__map(ebpf_object__find_map_by_name(obj, ".data"));
	struct ebpf_map *bss = ebpf_object_map__map(ebpf_object__find_map_by_name(obj, ".bss"));
	uint32_t key = 0, u32 = 0;
	uint64_t u64 = 0;
	CHECK(ro && ebpf_map__user_lookup(ro, &key, &u32) == 0 && u32 == 1234);
	CHECK(ro && (ebpf_map__flags(ro) & EBPF_MAP_F_RDONLY_PROG));
	CHECK(ro && ebpf_map__is_frozen(ro));
	CHECK(ro && ebpf_map__user_update(ro, &key, &u32, EBPF_ANY) == -EPERM);
	CHECK(data && !ebpf_map__is_frozen(data));
	CHECK(data && ebpf_map__user_lookup(data, &key, &u64) == 0 && u64 == 77);

	struct ncclbpf_tuner_ctx t = {.n_ranks = 5};
	struct ebpf_program *first = ebpf_object__find_program_by_name(obj, "first");
	struct ebpf_program *second = ebpf_object__find_program_by_name(obj, "second");
	struct ebpf_program *conn = ebpf_object__find_program_by_name(obj, "on_connect");
	CHECK(first && second && conn && ebpf_program__exec(first));
	if (first && second && conn) {
		CHECK_EQ_U64(run(first, &t), 0);
		CHECK_EQ_U64(t.n_channels, 5 * 2 + 1234);
		CHECK_EQ_U64(run(second, &t), 0);
		CHECK_EQ_U64(t.n_channels, 5 * 2 + 1234 + 5);
		CHECK(ebpf_map__user_lookup(data, &key, &u64) == 0 && u64 == 78);
		CHECK(ebpf_map__user_lookup(bss, &key, &u32) == 0 && u32 == 1);
		struct ncclbpf_net_ctx n = {.peer = 3};
		CHECK_EQ_U64(run(conn, &n), NCCLBPF_NET_DENY);
		n.peer = 4;
		CHECK_EQ_U64(run(conn, &n), NCCLBPF_NET_ALLOW);
	}
	ebpf_object__close(obj);
}

/* Loading verifies: every unsafe example is rejected with its program, source line and reason;
 * maps written by profiler programs are rank-local for tuner programs, other maps are not. */
static void test_verify(void)
{
	static const struct {
		const char *file, *prog, *why;
		int err;
	} bad[] = {
	    {"unsafe/null_deref.o", "null_deref", "map_value_or_null", EACCES},
	    {"unsafe/map_oob.o", "map_oob", "outside of the allowed memory range", EACCES},
	    {"unsafe/ctx_write_input.o", "ctx_write_input", "read-only context field", EACCES},
	    {"unsafe/unbounded_loop.o", "unbounded_loop", "too complex", 0},
	    {"unsafe/unknown_helper.o", "unknown_helper", "unknown#14", EACCES},
	    {"unsafe/stack_overflow.o", "stack_overflow", "off=-520", EACCES},
	    {"unsafe/div_zero.o", "div_zero", "division by zero", EACCES},
	    {"unsafe/ptr_to_map.o", "ptr_to_map", "leaks addr into map", EACCES},
	    {"unsafe/rank_dependent.o", "decide", "rank-local map `avg_lat`", EACCES},
	    {"unsafe/closed_loop_direct.o", "adapt", "rank-local map `lat_by_bucket`", EACCES},
	};
	char err[1024], want[128];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ebpf_object *obj = ncclbpf_object_open_file(obj_path(pol_dir, bad[i].file),
								   NULL, err, sizeof(err));
		CHECK(obj != NULL);
		if (!obj)
			continue;
		/* The unbounded loop is rejected by the complexity budget: a small one is enough.
		 */
		struct ebpf_object_load_opts lo = {.sz = sizeof(lo), .complexity_limit = 100000};
		err[0] = 0;
		int ret = ebpf_object__load(obj, &lo, err, sizeof(err));
		snprintf(want, sizeof(want), "program '%s' (section '", bad[i].prog);
		CHECK(ret < 0);
		CHECK(!bad[i].err || ret == -bad[i].err);
		CHECK(strstr(err, want) != NULL);
		CHECK(strstr(err, bad[i].why) != NULL);
		CHECK(strstr(err, ": line ") != NULL); /* the C source line from .BTF.ext */
		if (ret >= 0 || !strstr(err, want) || !strstr(err, bad[i].why))
			fprintf(stderr, "%s: got %d '%s'\n", bad[i].file, ret, err);
		/* Nothing stays created after a failed load. */
		CHECK(!ebpf_object__is_loaded(obj));
		for (uint32_t k = 0; k < ebpf_object__map_cnt(obj); k++)
			CHECK(ebpf_object_map__map(ebpf_object__map(obj, k)) == NULL);
		for (uint32_t k = 0; k < ebpf_object__prog_cnt(obj); k++)
			CHECK(ebpf_program__exec(ebpf_object__prog(obj, k)) == NULL);
		ebpf_object__close(obj);
	}
	static const char *const good[] = {"noop.o", "size_aware.o", "table_tuner.o",
					   "profiler_latency.o"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct ebpf_object *obj =
		    ncclbpf_object_open_file(obj_path(pol_dir, good[i]), NULL, err, sizeof(err));
		int ret = obj ? ebpf_object__load(obj, NULL, err, sizeof(err)) : -1;
		CHECK_EQ_U64(ret, 0);
		if (ret)
			fprintf(stderr, "%s: %s\n", good[i], err);
		if (obj && !ret) {
			const struct ebpf_verify_stats *st =
			    ebpf_program__verify_stats(ebpf_object__prog(obj, 0));
			CHECK(st->insns == ebpf_program__insn_cnt(ebpf_object__prog(obj, 0)));
			CHECK(st->processed >= st->insns || st->insns <= 2);
		}
		ebpf_object__close(obj);
	}
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path(bpf_dir, "rank_split.o"), NULL, err, sizeof(err));
	int ret = obj ? ebpf_object__load(obj, NULL, err, sizeof(err)) : -1;
	CHECK_EQ_U64(ret, 0);
	if (ret)
		fprintf(stderr, "rank_split.o: %s\n", err);
	ebpf_object__close(obj);
	/* The unsafe experimental mode lets the rank-dependent tuner through. */
	obj = ncclbpf_object_open_file(obj_path(pol_dir, "unsafe/rank_dependent.o"), NULL, err,
				       sizeof(err));
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo),
					   .verify_flags = EBPF_VERIFY_F_ALLOW_RANK_LOCAL};
	ret = obj ? ebpf_object__load(obj, &lo, err, sizeof(err)) : -1;
	CHECK_EQ_U64(ret, 0);
	if (ret)
		fprintf(stderr, "rank_dependent.o (allowed): %s\n", err);
	ebpf_object__close(obj);
}

/* An open object holds memory for the maps it declares, not for the most an object may have:
 * it once cleared room for 64 map entries of over 2 KiB each on every open, which made the
 * loader's mutation tests (hundreds of thousands of opens) 5-9 times slower under ASan. Measured
 * with glibc's counters, so not in sanitizer builds (their allocator is not glibc's). */
static void test_open_memory(void)
{
#ifndef __SANITIZE_ADDRESS__
	char err[256];
	struct stat st;
	const char *file = obj_path(pol_dir, "table_tuner.o");
	CHECK(stat(file, &st) == 0);
	struct mallinfo2 before = mallinfo2();
	struct ebpf_object *obj = ncclbpf_object_open_file(file, NULL, err, sizeof(err));
	CHECKF(obj != NULL, "%s", err);
	if (!obj)
		return;
	struct mallinfo2 after = mallinfo2();
	size_t used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
	/* the image copy and what is parsed from it, plus a few KiB per declared map */
	size_t bound = 2 * (size_t)st.st_size + 4096 * ebpf_object__map_cnt(obj) + 32768;
	CHECKF(used <= bound,
	       "opening table_tuner.o (%u maps, %lld bytes) took %zu bytes, more than %zu",
	       ebpf_object__map_cnt(obj), (long long)st.st_size, used, bound);
	ebpf_object__close(obj);
#endif
}

/* Converted cost-cell reads (cells_convert.c): with convert_ctx the loader converts the program
 * that reads whole cells at fixed offsets and leaves the others reading memory; without it, none.
 * Each program decides the same in both forms - converted on the float table, plain on the
 * cells filled from it - with both engines, on tables with valid, tied and unusable cells. */
static struct ebpf_object *load_cells(int convert)
{
	char err[512];
	struct ebpf_object *obj =
	    ncclbpf_object_open_file(obj_path(bpf_dir, "cells_convert.o"), NULL, err, sizeof(err));
	struct ebpf_object_load_opts o = {.sz = sizeof(o), .convert_ctx = convert};
	CHECKF(obj && ebpf_object__load(obj, &o, err, sizeof(err)) == 0, "%s", err);
	return obj;
}

static struct ebpf_program *prog_named(struct ebpf_object *obj, const char *name)
{
	for (struct ebpf_program *p = ebpf_object__next_program(obj, NULL); p;
	     p = ebpf_object__next_program(obj, p))
		if (!strcmp(ebpf_program__name(p), name))
			return p;
	return NULL;
}

static void test_convert(void)
{
	struct ebpf_object *plain = load_cells(0), *conv = load_cells(1);
	if (!plain || !conv)
		goto out;
	static const char *const names[] = {"whole", "narrow", "no_cells"};
	static const float tables[][2] = {{1.5f, 2.0f},	  {7.25f, 3.0f}, {-1.0f, 2.0f},
					  {5.0f, 3.6e9f}, {2.0f, 2.0f},	 {0.0004f, 1e6f}};
	for (int k = 0; k < 3; k++) {
		struct ebpf_program *pp = prog_named(plain, names[k]),
				    *pc = prog_named(conv, names[k]);
		CHECK(pp && pc);
		if (!pp || !pc)
			continue;
		CHECK(!ebpf_program__ctx_converted(pp));
		CHECKF(ebpf_program__ctx_converted(pc) == (k == 0), "%s", names[k]);
		struct ebpf_exec *ep = ebpf_program__exec(pp), *ec = ebpf_program__exec(pc);
		char err[160];
		int jit = ebpf_exec__jit(ep, NULL, err, sizeof(err)) == 0 &&
			  ebpf_exec__jit(ec, NULL, err, sizeof(err)) == 0;
		for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
			float cells[21];
			for (int i = 0; i < 21; i++)
				cells[i] = 1.0f + (float)i;
			cells[NCCLBPF_ALGO_RING * 3 + NCCLBPF_PROTO_LL] = tables[t][0];
			cells[NCCLBPF_ALGO_TREE * 3 + NCCLBPF_PROTO_SIMPLE] = tables[t][1];
			for (int engine = EBPF_ENGINE_INTERP; engine <= (jit ? EBPF_ENGINE_JIT : 1);
			     engine++) {
				struct {
					struct ncclbpf_tuner_ctx x;
					const float *cells;
				} a = {.x = {.n_bytes = 77, .algorithm = -1, .protocol = -1},
				       .cells = cells},
				  b;
				for (int i = 0; i < 21; i++) /* the plain form reads them filled */
					a.x.cost_ns[i / 3][i % 3] = ebpf_ctx_from_f32_value(
					    ncclbpf_tuner_cells(), cells[i]);
				b = a;
				uint64_t r0;
				CHECK(ebpf_exec__run(ep, (enum ebpf_engine)engine,
						     (uint64_t)(uintptr_t)&a, 0, NULL, &r0) == 0);
				memset(b.x.cost_ns, 0xa5,
				       sizeof(b.x.cost_ns)); /* unused when converted */
				if (k != 0)
					memcpy(b.x.cost_ns, a.x.cost_ns, sizeof(b.x.cost_ns));
				CHECK(ebpf_exec__run(ec, (enum ebpf_engine)engine,
						     (uint64_t)(uintptr_t)&b, 0, NULL, &r0) == 0);
				CHECKF(a.x.algorithm == b.x.algorithm &&
					   a.x.protocol == b.x.protocol &&
					   a.x.n_channels == b.x.n_channels,
				       "%s, table %zu, engine %d: %d/%d/%d vs %d/%d/%d", names[k],
				       t, engine, a.x.algorithm, a.x.protocol, a.x.n_channels,
				       b.x.algorithm, b.x.protocol, b.x.n_channels);
			}
		}
	}
out:
	ebpf_object__close(plain);
	ebpf_object__close(conv);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s BPF_TEST_DIR POLICY_DIR\n", argv[0]);
		return 2;
	}
	bpf_dir = argv[1];
	pol_dir = argv[2];
	test_features();
	test_rejections();
	test_corruptions();
	test_find_section();
	test_policies();
	test_load();
	test_verify();
	test_open_memory();
	test_convert();
	return check_summary("loader");
}
