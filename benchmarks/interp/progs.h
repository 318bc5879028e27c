/* The benchmark's compute kernels (progs.c), native declarations. */
#ifndef NCCLBPF_BENCH_PROGS_H
#define NCCLBPF_BENCH_PROGS_H

#ifdef __bpf__
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t;
typedef unsigned char uint8_t;
#else
#include <stdint.h>
#endif

#define BENCH_MEM_BYTES 512 /* the buffer every kernel gets as its first argument */

uint64_t bench_sieve(uint64_t *mem, uint64_t n);
uint64_t bench_log2(uint64_t *mem, uint64_t n);
uint64_t bench_memcpy(uint64_t *mem, uint64_t n);
uint64_t bench_switch(uint64_t *mem, uint64_t n);
uint64_t bench_crc32(uint64_t *mem, uint64_t n);

#endif
