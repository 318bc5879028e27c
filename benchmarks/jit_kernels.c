/* Compute kernels for the JIT benchmark, compiled twice from this one source: by gcc -O2 into
 * the benchmark (the native baseline) and by clang -O2 -target bpf into one ELF section per
 * kernel (extracted to raw instructions at build time). Signature of every kernel: r1 = memory
 * (64-bit words), r2 = length; the result folds everything computed so nothing is dead code.
 * No calls, no globals: the raw sections need no relocation. */
#ifdef __bpf__
typedef unsigned long long uint64_t; /* no libc headers for the BPF target */
typedef unsigned char uint8_t;
#else
#include <stdint.h>
#endif

#ifdef __bpf__
#define KERNEL(name) __attribute__((section("bench_" #name), used)) uint64_t name
#else
#define KERNEL(name) uint64_t name
#endif

/* Primes below len (len bytes of mem used as the sieve). */
KERNEL(k_sieve)(uint64_t *mem, uint64_t len)
{
	volatile uint8_t *a = (volatile uint8_t *)mem; /* keep both compilers from calling memset */
	uint64_t count = 0;

	for (uint64_t i = 0; i < len; i++)
		a[i] = 1;
	for (uint64_t i = 2; i < len; i++) {
		if (!a[i])
			continue;
		count++;
		for (uint64_t j = i + i; j < len; j += i)
			a[j] = 0;
	}
	return count;
}

/* Sum of floor(log2(x)) over len pseudo-random x, by binary search on the bits. */
KERNEL(k_log2)(uint64_t *mem, uint64_t len)
{
	uint64_t s = 0, x = mem[0] | 1;

	for (uint64_t i = 0; i < len; i++) {
		uint64_t v = x, r = 0;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
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
		s += r;
	}
	return s;
}

/* Copies the first half of mem (len words) to the second half, word by word. */
KERNEL(k_memcpy)(uint64_t *mem, uint64_t len)
{
	uint64_t half = len / 2;

	for (uint64_t i = 0; i < half; i++)
		mem[half + i] = mem[i];
	return mem[len - 1];
}

/* A 16-way switch in a loop (jump table in gcc, compare tree in BPF). */
KERNEL(k_switch)(uint64_t *mem, uint64_t len)
{
	uint64_t s = mem[0];

	for (uint64_t i = 0; i < len; i++) {
		switch ((i ^ s) & 15) {
		case 0:
			s += i;
			break;
		case 1:
			s ^= i << 3;
			break;
		case 2:
			s -= i * 7;
			break;
		case 3:
			s = (s >> 1) + i;
			break;
		case 4:
			s |= i;
			break;
		case 5:
			s += 0x1234;
			break;
		case 6:
			s *= 3;
			break;
		case 7:
			s ^= 0xdeadbeef;
			break;
		case 8:
			s += i ^ 0x55;
			break;
		case 9:
			s -= 17;
			break;
		case 10:
			s = s * 5 + 1;
			break;
		case 11:
			s ^= s >> 7;
			break;
		case 12:
			s += i << 2;
			break;
		case 13:
			s = ~s;
			break;
		case 14:
			s -= i >> 1;
			break;
		default:
			s += 1;
			break;
		}
	}
	return s;
}
