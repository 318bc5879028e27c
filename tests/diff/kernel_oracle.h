/* The Linux kernel as a semantics oracle: loads a raw eBPF program with bpf(BPF_PROG_LOAD) and
 * runs it once with bpf(BPF_PROG_TEST_RUN), returning the full 64-bit r0 and the input buffer as
 * the program left it. Raw syscalls only (no libbpf).
 *
 * How: the program is called as a bpf-to-bpf subprogram of a small trampoline, which passes
 * r1 = the buffer, r2 = its length (the `ncclbpf exec` convention) and stores the returned r0
 * into a map value. The buffer itself lives in that (mmap-able, one-element array) map value,
 * so programs may use atomics and sign-extending loads on it, which the kernel does not allow
 * on packet memory:
 *
 *     r1 = map_value[0] + 0     ; lddw, BPF_PSEUDO_MAP_VALUE
 *     r2 = buf_len
 *     call program
 *     r1 = map_value[0] + 0
 *     *(u64 *)(r1 + KO_MAX_BUF) = r0
 *     r0 = 0
 *     exit
 *     program...
 *
 * The program type is BPF_PROG_TYPE_SYSCALL (sleepable), whose test run needs no packet.
 *
 * Programs that use maps (gen.h's map families) name them by index, the engine's convention;
 * kernel_oracle__set_maps creates matching kernel maps and every run rewrites the indexes of
 * map references (lddw with src_reg BPF_PSEUDO_MAP_FD or _VALUE) into their descriptors. */
#ifndef NCCLBPF_TEST_KERNEL_ORACLE_H
#define NCCLBPF_TEST_KERNEL_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"
#include "ebpf/isa.h"

#define KO_MAX_BUF	    256	 /* largest buffer a program may get */
#define KO_MAX_INSNS	    8192 /* program instructions (without the trampoline) */
#define KO_TRAMPOLINE_INSNS 9

enum ko_result {
	KO_RAN = 0,	 /* the program ran: *r0 and buf hold the kernel's results */
	KO_REJECTED = 1, /* the kernel's verifier refused the program (not an error) */
};

struct kernel_oracle;

/* Creates the map and checks that bpf() works by loading and running a trivial program.
 * Returns 0, or -errno with err filled; -EPERM and -ENOSYS mean "bpf() refused here". */
int kernel_oracle__open(struct kernel_oracle **out, char *err, size_t err_len);
/* kernel_oracle__open for a test: 0 with *out set, or the status the test exits with after the
 * printed reason: TEST_SKIP (77) when bpf() is refused (EPERM, ENOSYS; the "bpf" oracle of
 * tests/common/skip.h, a failure where it is required), 1 for any other error. */
int kernel_oracle__open_for_test(struct kernel_oracle **out);
void kernel_oracle__close(struct kernel_oracle *ko);

/* Creates kernel maps like maps[0..n) (replacing earlier ones); programs refer to them by index.
 * 0, or -errno with err filled. */
int kernel_oracle__set_maps(struct kernel_oracle *ko, const struct gen_map *maps, uint32_t n,
			    char *err, size_t err_len);

/* Loads and runs insns[0..n) with buf[0..buf_len) as input memory (buf_len <= KO_MAX_BUF,
 * may be 0). On KO_RAN, *r0 is the result and buf the memory afterwards. On KO_REJECTED and
 * when log is not NULL, log receives the end of the kernel verifier's log (its error message).
 * Returns KO_RAN, KO_REJECTED, or -errno for a system error (err-like text in log). */
int kernel_oracle__run(struct kernel_oracle *ko, const struct ebpf_insn *insns, uint32_t n,
		       uint8_t *buf, uint32_t buf_len, uint64_t *r0, char *log, size_t log_len);

/* 1 when the kernel accepts the v4 instructions (signed div/mod, movsx, ldsx, bswap, gotol;
 * Linux 6.6+). Drivers generate v3 programs only when it does not. */
int kernel_oracle__has_v4(struct kernel_oracle *ko);

/* Known kernel deviations from RFC 9669 that the oracle can detect (kernel_oracle__quirks). */
#define KO_QUIRK_CMPXCHG32_NO_ZEXT                                                                 \
	0x1u /* r0 keeps its upper half after a successful                                         \
	      * 32-bit cmpxchg (seen on one 6.18 build, Intel host) */

/* Probes the kernel for the known deviations above; returns a KO_QUIRK_* mask and describes
 * them in desc (empty when none). */
unsigned kernel_oracle__quirks(struct kernel_oracle *ko, char *desc, size_t desc_len);

/* The kernel verifier's one-line reason from a log (the last line that is not a statistics
 * line), copied into out. */
void kernel_oracle__reason(const char *log, char *out, size_t out_len);

#endif
