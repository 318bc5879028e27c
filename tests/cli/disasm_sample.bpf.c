/* A BPF program that exercises many instruction forms, compiled by clang at test time so that
 * `ncclbpf disasm` can be compared with llvm-objdump on a whole real listing (disasm_llvm.sh).
 * It is never run. */
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
typedef long long s64;
typedef int s32;
typedef short s16;
typedef signed char s8;

static long (*helper_five)(u64 a) = (void *)5;
static long (*helper_one)(void *map, const void *key) = (void *)1;

u64 counter;
const volatile u32 limit = 7;

__attribute__((noinline)) static u64 mix(u64 a, u64 b, u32 c)
{
	u64 x = a * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	x += b << (c & 63);
	x = (x >> 7) | (x << 57);
	return x / (b | 1) + x % 13;
}

__attribute__((noinline)) static s64 signed_ops(s64 a, s32 b)
{
	s64 r = a >> 3;

	if (a < -5)
		r -= b;
	if ((s32)a > b)
		r = -r;
	if (b <= 100 && a >= -100)
		r ^= 0x55;
	return r + (s16)a + (s8)b;
}

__attribute__((noinline)) static u32 narrow(u32 a, u32 b)
{
	u32 r = a + b;

	r *= 3;
	r /= (b | 1);
	r %= 1000;
	r <<= (a & 31);
	r >>= 2;
	r &= 0xfff0;
	if (r > 77 || a == b)
		r |= 1;
	return r - a;
}

__attribute__((noinline)) static u64 memory(u8 *p, u64 n)
{
	u64 sum = 0;

	for (u64 k = 0; k < n && k < 64; k++) {
		sum += p[k];
		p[k] = (u8)sum;
	}
	sum += *(u16 *)(p + 2) + *(u32 *)(p + 4) + *(u64 *)(p + 8);
	*(u32 *)(p + 12) = (u32)sum;
	*(u16 *)(p + 20) = 0x1234;
	*(u64 *)(p + 24) = sum;
	return sum + __builtin_bswap16((u16)sum) + __builtin_bswap32((u32)sum) +
	       __builtin_bswap64(sum);
}

__attribute__((noinline)) static u64 atomics(u64 *p, u64 v)
{
	u64 old;

	__sync_fetch_and_add(p, v);
	old = __sync_fetch_and_add(p + 1, v);
	__sync_fetch_and_or(p + 2, v);
	__sync_fetch_and_and(p + 3, v);
	old += __sync_fetch_and_xor(p + 4, v);
	old += __sync_lock_test_and_set(p + 5, v);
	old += __sync_val_compare_and_swap(p + 6, old, v);
	return old;
}

__attribute__((noinline)) static int dispatch(int op, int x)
{
	switch (op) {
	case 0:
		return x + 1;
	case 1:
		return x * 7;
	case 2:
		return x ^ 0x3c;
	case 3:
		return x - 100;
	case 4:
		return x & 0x7f;
	default:
		return -1;
	}
}

__attribute__((section("prog"), used)) int sample(u64 *ctx)
{
	u8 buf[64];
	u64 key = ctx[0];
	u64 r = 0;

	for (u32 k = 0; k < sizeof(buf); k++)
		buf[k] = (u8)(key + k);
	r += mix(ctx[1], ctx[2], (u32)ctx[3]);
	r += (u64)signed_ops((s64)ctx[4], (s32)ctx[5]);
	r += narrow((u32)ctx[6], (u32)ctx[7]);
	r += memory(buf, ctx[8]);
	r += atomics(ctx + 9, r);
	r += (u64)dispatch((int)ctx[16], (int)r);
	r += (u64)helper_five(r);
	if (helper_one(&counter, &key))
		r++;
	counter += r + limit;
	return (int)(r >> 32) + 0x12345;
}

char LICENSE[] __attribute__((section("license"), used)) = "GPL";
