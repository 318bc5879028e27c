/* Kernel oracle: raw bpf() syscalls, see kernel_oracle.h. */
#define _GNU_SOURCE
#include "kernel_oracle.h"
#include "skip.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(sizeof(struct bpf_insn) == sizeof(struct ebpf_insn), "same encoding");

#define VALUE_SIZE  (KO_MAX_BUF + 8) /* buffer, then r0 */
#define R0_SENTINEL 0xdeadbeefcafef00dull
#define LOG_SIZE    (64 * 1024)

struct kernel_oracle {
	int map_fd;
	uint8_t *value; /* the map value, mmap-ed */
	size_t value_map_len;
	struct bpf_insn *insns; /* trampoline + program */
	char *log;
	uint32_t n_maps; /* the program's maps (kernel_oracle__set_maps) */
	int map_fds[GEN_MAX_MAPS];
};

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static struct bpf_insn mk(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i;
	memset(&i, 0, sizeof(i));
	i.code = code;
	i.dst_reg = dst & 0xf;
	i.src_reg = src & 0xf;
	i.off = off;
	i.imm = imm;
	return i;
}

static void trampoline(struct kernel_oracle *ko, uint32_t buf_len)
{
	struct bpf_insn *t = ko->insns;
	t[0] = mk(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_VALUE, 0, ko->map_fd);
	t[1] = mk(0, 0, 0, 0, 0);
	t[2] = mk(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)buf_len);
	t[3] = mk(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, KO_TRAMPOLINE_INSNS - 3 - 1);
	t[4] = mk(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_VALUE, 0, ko->map_fd);
	t[5] = mk(0, 0, 0, 0, 0);
	t[6] = mk(BPF_STX | BPF_MEM | BPF_DW, 1, 0, KO_MAX_BUF, 0);
	t[7] = mk(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	t[8] = mk(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/* Returns a prog fd, or -errno; log_level > 0 fills ko->log. */
static int load(struct kernel_oracle *ko, uint32_t total, int log_level)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SYSCALL;
	a.prog_flags = BPF_F_SLEEPABLE;
	a.insn_cnt = total;
	a.insns = (uint64_t)(uintptr_t)ko->insns;
	a.license = (uint64_t)(uintptr_t) "GPL";
	if (log_level) {
		ko->log[0] = 0;
		a.log_level = (uint32_t)log_level;
		a.log_buf = (uint64_t)(uintptr_t)ko->log;
		a.log_size = LOG_SIZE;
	}
	long fd;
	/* EAGAIN (interrupted) and ENOMEM (memory pressure from other processes) are transient. */
	for (int tries = 0;; tries++) {
		fd = sys_bpf(BPF_PROG_LOAD, &a);
		if (fd >= 0 || (errno != EAGAIN && errno != ENOMEM) || tries == 20)
			break;
		usleep(1000u << (tries < 6 ? tries : 6));
	}
	return fd < 0 ? -errno : (int)fd;
}

static int test_run(int prog_fd, uint32_t *retval)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog_fd;
	/* A syscall program's test run takes no repeat count, data or flags: it runs once. */
	if (sys_bpf(BPF_PROG_TEST_RUN, &a) < 0)
		return -errno;
	*retval = a.test.retval;
	return 0;
}

void kernel_oracle__reason(const char *log, char *out, size_t out_len)
{
	/* Walk the lines; keep the last one that is not the "processed N insns" statistics. */
	const char *best = NULL, *p = log;
	size_t best_len = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len && strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
		    strncmp(p, "stack depth", 11) && strncmp(p, "max_states", 10)) {
			best = p;
			best_len = len;
		}
		p += len + (e ? 1 : 0);
	}
	if (!best) {
		snprintf(out, out_len, "(no verifier message)");
		return;
	}
	snprintf(out, out_len, "%.*s", (int)best_len, best);
}

int kernel_oracle__has_v4(struct kernel_oracle *ko)
{
	/* r0 = -7; r0 s/= 2 (off = 1); exit: -3 on a v4 kernel, rejected before. */
	struct ebpf_insn p[3];
	memset(p, 0, sizeof(p));
	p[0] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_MOV | EBPF_K, .imm = -7};
	p[1] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_DIV | EBPF_K, .off = 1, .imm = 2};
	p[2] = (struct ebpf_insn){.code = EBPF_JMP | EBPF_EXIT};
	uint64_t r0 = 0;
	return kernel_oracle__run(ko, p, 3, NULL, 0, &r0, NULL, 0) == KO_RAN && r0 == (uint64_t)-3;
}

unsigned kernel_oracle__quirks(struct kernel_oracle *ko, char *desc, size_t desc_len)
{
	unsigned q = 0;
	desc[0] = 0;
	/* r0 = 1 << 63 (low half 0); *(u64 *)(fp - 8) = 0; w0 = cmpxchg(fp - 8, w0, 7): the
	 * comparison succeeds, so r0 must become the zero-extended old value, 0. */
	struct ebpf_insn p[6];
	memset(p, 0, sizeof(p));
	p[0] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_MOV | EBPF_K, .dst_reg = 0, .imm = 1};
	p[1] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_LSH | EBPF_K, .dst_reg = 0, .imm = 63};
	p[2] = (struct ebpf_insn){
	    .code = EBPF_ST | EBPF_MEM | EBPF_DW, .dst_reg = 10, .off = -8, .imm = 0};
	p[3] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_MOV | EBPF_K, .dst_reg = 1, .imm = 7};
	p[4] = (struct ebpf_insn){.code = EBPF_STX | EBPF_ATOMIC | EBPF_W,
				  .dst_reg = 10,
				  .src_reg = 1,
				  .off = -8,
				  .imm = EBPF_CMPXCHG};
	p[5] = (struct ebpf_insn){.code = EBPF_JMP | EBPF_EXIT};
	uint64_t r0 = 0;
	char log[64];
	if (kernel_oracle__run(ko, p, 6, NULL, 0, &r0, log, sizeof(log)) == KO_RAN && r0 != 0) {
		q |= KO_QUIRK_CMPXCHG32_NO_ZEXT;
		snprintf(desc, desc_len,
			 "kernel keeps r0's upper half after a successful 32-bit cmpxchg (r0 = "
			 "0x%llx, RFC 9669: 0); mismatches on programs with cmpxchg32 are the "
			 "kernel's",
			 (unsigned long long)r0);
	}
	return q;
}

int kernel_oracle__open(struct kernel_oracle **out, char *err, size_t err_len)
{
	*out = NULL;
	struct kernel_oracle *ko = calloc(1, sizeof(*ko));
	if (!ko) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	ko->map_fd = -1;
	ko->insns = calloc(KO_TRAMPOLINE_INSNS + KO_MAX_INSNS, sizeof(struct bpf_insn));
	ko->log = malloc(LOG_SIZE);
	if (!ko->insns || !ko->log) {
		kernel_oracle__close(ko);
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}

	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = VALUE_SIZE;
	a.max_entries = 1;
	a.map_flags = BPF_F_MMAPABLE;
	long fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0) {
		int e = errno;
		snprintf(err, err_len, "BPF_MAP_CREATE: %s", strerror(e));
		kernel_oracle__close(ko);
		return -e;
	}
	ko->map_fd = (int)fd;
	ko->value_map_len = (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, ko->value_map_len, PROT_READ | PROT_WRITE, MAP_SHARED, ko->map_fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		snprintf(err, err_len, "mmap of the array map: %s", strerror(e));
		kernel_oracle__close(ko);
		return -e;
	}
	ko->value = m;

	/* Probe: a program returning a 64-bit constant must come back whole. */
	struct ebpf_insn probe[3] = {0};
	probe[0].code = EBPF_LD | EBPF_DW | EBPF_IMM;
	probe[0].imm = 0x55667788;
	probe[1].imm = 0x11223344;
	probe[2].code = EBPF_JMP | EBPF_EXIT;
	uint64_t r0 = 0;
	int rc = kernel_oracle__run(ko, probe, 3, NULL, 0, &r0, ko->log, 256);
	if (rc != KO_RAN || r0 != 0x1122334455667788ull) {
		if (rc < 0)
			snprintf(err, err_len, "probe program: %s", strerror(-rc));
		else if (rc == KO_REJECTED)
			snprintf(err, err_len, "probe program rejected: %.200s", ko->log);
		else
			snprintf(err, err_len, "probe program returned 0x%llx",
				 (unsigned long long)r0);
		kernel_oracle__close(ko);
		return rc < 0 ? rc : -EPROTO;
	}
	*out = ko;
	return 0;
}

static void close_maps(struct kernel_oracle *ko)
{
	for (uint32_t i = 0; i < ko->n_maps; i++)
		close(ko->map_fds[i]);
	ko->n_maps = 0;
}

int kernel_oracle__set_maps(struct kernel_oracle *ko, const struct gen_map *maps, uint32_t n,
			    char *err, size_t err_len)
{
	close_maps(ko);
	if (n > GEN_MAX_MAPS) {
		snprintf(err, err_len, "%u maps, at most %u", n, GEN_MAX_MAPS);
		return -E2BIG;
	}
	for (uint32_t i = 0; i < n; i++) {
		union bpf_attr a;
		memset(&a, 0, sizeof(a));
		a.map_type = maps[i].type;
		a.key_size = maps[i].key_size;
		a.value_size = maps[i].value_size;
		a.max_entries = maps[i].max_entries;
		long fd = sys_bpf(BPF_MAP_CREATE, &a);
		if (fd < 0) {
			int e = errno;
			snprintf(err, err_len, "BPF_MAP_CREATE (map %u, type %u): %s", i,
				 maps[i].type, strerror(e));
			close_maps(ko);
			return -e;
		}
		ko->map_fds[ko->n_maps++] = (int)fd;
	}
	return 0;
}

/* Map indexes of the program's map references become the kernel maps' descriptors (an index
 * without a map becomes -1, which the kernel refuses). */
static void bind_maps(struct kernel_oracle *ko, struct bpf_insn *prog, uint32_t n)
{
	for (uint32_t pc = 0; pc + 1 < n; pc++) {
		struct bpf_insn *i = &prog[pc];
		if (i->code != (BPF_LD | BPF_DW | BPF_IMM))
			continue;
		if (i->src_reg == BPF_PSEUDO_MAP_FD || i->src_reg == BPF_PSEUDO_MAP_VALUE)
			i->imm =
			    i->imm >= 0 && (uint32_t)i->imm < ko->n_maps ? ko->map_fds[i->imm] : -1;
		pc++;
	}
}

int kernel_oracle__open_for_test(struct kernel_oracle **out)
{
	char err[256];
	int rc = kernel_oracle__open(out, err, sizeof(err));
	if (rc == -EPERM || rc == -ENOSYS)
		return test_skip("bpf", "bpf() refused: %s", err);
	if (rc) {
		fprintf(stderr, "kernel oracle: %s\n", err);
		return 1;
	}
	return 0;
}

void kernel_oracle__close(struct kernel_oracle *ko)
{
	if (!ko)
		return;
	close_maps(ko);
	if (ko->value)
		munmap(ko->value, ko->value_map_len);
	if (ko->map_fd >= 0)
		close(ko->map_fd);
	free(ko->insns);
	free(ko->log);
	free(ko);
}

int kernel_oracle__run(struct kernel_oracle *ko, const struct ebpf_insn *insns, uint32_t n,
		       uint8_t *buf, uint32_t buf_len, uint64_t *r0, char *log, size_t log_len)
{
	if (n > KO_MAX_INSNS || buf_len > KO_MAX_BUF) {
		if (log && log_len)
			snprintf(log, log_len, "program or buffer too large for the oracle");
		return -E2BIG;
	}
	trampoline(ko, buf_len);
	memcpy(ko->insns + KO_TRAMPOLINE_INSNS, insns, n * sizeof(*insns));
	bind_maps(ko, ko->insns + KO_TRAMPOLINE_INSNS, n);
	uint32_t total = KO_TRAMPOLINE_INSNS + n;

	int fd = load(ko, total, 0);
	if (fd < 0) {
		if (fd == -EPERM || fd == -ENOSYS || fd == -ENOMEM) {
			if (log && log_len)
				snprintf(log, log_len, "BPF_PROG_LOAD: %s", strerror(-fd));
			return fd;
		}
		if (log && log_len) {
			/* Load again with a log to learn why. */
			int fd2 = load(ko, total, 1);
			if (fd2 >= 0) {
				close(fd2);
				snprintf(log, log_len,
					 "rejected without log (%s), accepted with log",
					 strerror(-fd));
			} else {
				size_t len = strlen(ko->log);
				const char *tail =
				    len > log_len - 1 ? ko->log + len - (log_len - 1) : ko->log;
				snprintf(log, log_len, "%s", tail);
			}
		}
		return KO_REJECTED;
	}

	memset(ko->value, 0, VALUE_SIZE);
	if (buf_len)
		memcpy(ko->value, buf, buf_len);
	uint64_t sentinel = R0_SENTINEL;
	memcpy(ko->value + KO_MAX_BUF, &sentinel, 8);

	uint32_t retval = ~0u;
	int rc = test_run(fd, &retval);
	close(fd);
	if (rc < 0) {
		if (log && log_len)
			snprintf(log, log_len, "BPF_PROG_TEST_RUN: %s", strerror(-rc));
		return rc;
	}
	if (retval != 0) {
		if (log && log_len)
			snprintf(log, log_len, "trampoline returned %u, expected 0", retval);
		return -EPROTO;
	}
	memcpy(r0, ko->value + KO_MAX_BUF, 8);
	if (buf_len)
		memcpy(buf, ko->value, buf_len);
	return KO_RAN;
}
