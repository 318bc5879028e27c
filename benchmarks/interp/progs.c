/* Compute kernels for the interpreter benchmark, written once and compiled twice: by gcc -O2
 * into the benchmark binary (the native baseline) and by clang -O2 -target bpf -mcpu=v3 into an
 * object whose per-function sections become raw eBPF programs (no relocations: no globals, no
 * calls, no constant tables). Each takes (mem, n) like an eBPF program takes (r1, r2): mem is a
 * BENCH_MEM_BYTES buffer, n a work size; the result is a checksum both builds must agree on. */
#include "progs.h"

#ifdef __bpf__
#define BENCH_FN(name) __attribute__((section("bench." #name), used)) uint64_t bench_##name
#else
#define BENCH_FN(name) __attribute__((noinline)) uint64_t bench_##name
#endif
#define INLINE static inline __attribute__((always_inline))

/* Prime sieve over n < 2048 numbers with a bitmap on the stack (256 bytes). */
BENCH_FN(sieve)(uint64_t *mem, uint64_t n)
{
	uint64_t bits[32];
	uint64_t count = 0;
	if (n > 2048)
		n = 2048;
	for (int k = 0; k < 32; k++)
		bits[k] = 0;
	for (uint64_t i = 2; i < n; i++) {
		if (bits[i >> 6] & (1ull << (i & 63)))
			continue;
		count++;
		for (uint64_t j = i * i; j < n; j += i)
			bits[j >> 6] |= 1ull << (j & 63);
	}
	return count + mem[0];
}

INLINE uint64_t ilog2(uint64_t v)
{
	uint64_t r = 0;
	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

/* Integer log2 of n pseudo-random numbers (a branchy binary search per number). */
BENCH_FN(log2)(uint64_t *mem, uint64_t n)
{
	uint64_t x = mem[1] | 1, sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		sum += ilog2(x >> (x & 63));
	}
	return sum;
}

/* Byte-wise copy of 256 bytes, rotated by the round number, n rounds. */
BENCH_FN(memcpy)(uint64_t *mem, uint64_t n)
{
	uint8_t *b = (uint8_t *)mem;
	uint64_t sum = 0;
	for (uint64_t r = 0; r < n; r++) {
		for (uint64_t i = 0; i < 256; i++)
			b[256 + i] = b[(i + r) & 255];
		sum += b[256 + (r & 255)];
	}
	return sum;
}

/* A switch over 16 cases per step (a state machine, as an instruction decoder would be). */
BENCH_FN(switch)(uint64_t *mem, uint64_t n)
{
	uint64_t x = mem[2], acc = 0;
	for (uint64_t i = 0; i < n; i++) {
		switch ((x >> 7) & 15) {
		case 0:
			acc += x;
			break;
		case 1:
			acc ^= x << 1;
			break;
		case 2:
			acc -= x >> 3;
			break;
		case 3:
			acc = acc * 3 + 1;
			break;
		case 4:
			acc |= x & 0xff00;
			break;
		case 5:
			acc &= ~(x & 0xff);
			break;
		case 6:
			acc += i;
			break;
		case 7:
			acc = (acc << 5) | (acc >> 59);
			break;
		case 8:
			acc ^= 0x5555aaaa;
			break;
		case 9:
			acc += mem[i & 63];
			break;
		case 10:
			acc -= i * 7;
			break;
		case 11:
			acc = acc / 3 + x;
			break;
		case 12:
			acc ^= acc >> 13;
			break;
		case 13:
			acc += 0x1234;
			break;
		case 14:
			acc = ~acc;
			break;
		default:
			acc += x ^ i;
			break;
		}
		x = x * 2862933555777941757ull + 3037000493ull;
	}
	return acc;
}

/* Bitwise CRC-32 over n bytes of the buffer (wrapping). */
BENCH_FN(crc32)(uint64_t *mem, uint64_t n)
{
	const uint8_t *b = (const uint8_t *)mem;
	uint32_t crc = 0xffffffffu;
	for (uint64_t i = 0; i < n; i++) {
		crc ^= b[i & (BENCH_MEM_BYTES - 1)];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}
