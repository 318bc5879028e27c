/* Fixed pools of profiler event records. NCCL's profiler callbacks may allocate nothing
 * unbounded and must survive bogus handles, so every record the adapter tracks lives in a static
 * array: a handle is an address inside it, checked by range and alignment before use, and a free
 * record is recognisable by its state. Free records circulate through a bounded
 * multi-producer/multi-consumer FIFO: a record freed now is handed out again only after the other
 * circulating free ones, which keeps a late child event that still holds its parent's old handle
 * from landing in an unrelated new event. Only PROF_POOL_WARM records circulate at first; the
 * rest join only when more are in flight at once, so that a steady stream reuses a cache-sized
 * working set (the whole array cycling through the caches tripled the per-event cost). When a
 * pool is exhausted the event is dropped (the callback returns a NULL handle) and counted.
 *
 * Two pools: collectives (with their kernel channels inline: a channel event needs no record of
 * its own, its handle points into the collective's) and proxy operations. */
#ifndef NCCLBPF_PROFILER_POOL_H
#define NCCLBPF_PROFILER_POOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_COLL_SLOTS	 8192u /* power of two; 1344 B each: 11 MiB, touched only as used */
#define PROF_PROXY_SLOTS 4096u /* power of two */
#define PROF_MAX_CH	 64    /* NCCL's MAXCHANNELS; channelId is a uint8_t below it */
#define PROF_POOL_WARM	 512u  /* records circulating before demand adds more */

enum prof_ev_state {
	PROF_EV_FREE = 0,
	PROF_EV_COLL,  /* a collective: lives until its host stop and its channels stopped */
	PROF_EV_PROXY, /* one proxy (network) operation */
	PROF_EV_DYING, /* being released by the thread that won the transition */
};

/* Kernel-channel state word: (record generation << 2) | one of these. A word from an earlier
 * use of the record never matches the current generation. */
enum { PROF_CH_IDLE = 0, PROF_CH_RUNNING = 1, PROF_CH_DONE = 2 };
#define PROF_HOST_DONE 0x80000000u
#define PROF_REFS(p)   ((p) & ~PROF_HOST_DONE)

struct prof_comm;

struct prof_coll {
	_Atomic uint32_t state; /* enum prof_ev_state */
	_Atomic uint32_t gen;	/* incremented at every allocation */
	/* References in the low 31 bits (host side, announced channels not yet stopped, proxy
	 * children); PROF_HOST_DONE once the host stopEvent dropped its reference (so that a
	 * second one cannot), in the same word: a host stop is one read-modify-write. */
	_Atomic uint32_t pending;
	uint32_t _pad0;
	_Atomic(struct prof_comm *) comm;
	uint64_t seq;
	uint64_t n_bytes;
	uint32_t coll_type;
	int32_t algorithm;
	int32_t protocol;
	uint32_t n_channels;
	uint64_t _pad;
	/* Offset 64: channel handles are &ch_state[c]. */
	_Atomic uint32_t ch_state[PROF_MAX_CH];
	_Atomic uint64_t ch_start[PROF_MAX_CH]; /* GPU timestamps (ns) */
	_Atomic uint64_t ch_end[PROF_MAX_CH];	/* 0 until KernelChStop */
};

struct prof_proxy {
	_Atomic uint32_t state;
	uint32_t channel;
	_Atomic(struct prof_comm *) comm;
	struct prof_coll *parent; /* holds one reference, or NULL */
	uint64_t n_bytes;
	uint64_t t_start; /* host CLOCK_MONOTONIC */
	uint32_t peer;
	uint32_t _pad;
	uint64_t _pad2[2];
};

_Static_assert(offsetof(struct prof_coll, ch_state) == 64, "channel states after the header");
_Static_assert(sizeof(struct prof_coll) == 64 + PROF_MAX_CH * 20, "record layout");
_Static_assert(sizeof(struct prof_proxy) == 64, "one cache line per proxy record");

/* Prepares the free lists (idempotent, thread-safe). */
void prof_pool_init(void);
/* A free record (state still PROF_EV_FREE), or NULL when the pool is empty (counted). */
struct prof_coll *prof_coll_get(void);
struct prof_proxy *prof_proxy_get(void);
/* Returns a record; its state must already be PROF_EV_FREE. */
void prof_coll_put(struct prof_coll *c);
void prof_proxy_put(struct prof_proxy *p);

/* The record arrays (profiler_pool.c), visible so that decoding a handle inlines into every
 * callback. */
extern struct prof_coll prof_colls_[PROF_COLL_SLOTS];
extern struct prof_proxy prof_proxies_[PROF_PROXY_SLOTS];

/* What a handle names: a collective (channel < 0) or one of its channels, a proxy record, or
 * nothing of ours (NULL, out of range, misaligned). */
static inline struct prof_coll *prof_coll_of(const void *handle, int *channel)
{
	uintptr_t off = (uintptr_t)handle - (uintptr_t)prof_colls_;
	if (off >= sizeof(prof_colls_))
		return NULL;
	size_t in = off % sizeof(struct prof_coll);
	struct prof_coll *c = &prof_colls_[off / sizeof(struct prof_coll)];
	if (in == 0) {
		*channel = -1;
		return c;
	}
	size_t ch0 = offsetof(struct prof_coll, ch_state);
	if (in < ch0 || in >= ch0 + sizeof(c->ch_state) || (in - ch0) % sizeof(c->ch_state[0]))
		return NULL;
	*channel = (int)((in - ch0) / sizeof(c->ch_state[0]));
	return c;
}

static inline struct prof_proxy *prof_proxy_of(const void *handle)
{
	uintptr_t off = (uintptr_t)handle - (uintptr_t)prof_proxies_;
	if (off >= sizeof(prof_proxies_) || off % sizeof(struct prof_proxy))
		return NULL;
	return &prof_proxies_[off / sizeof(struct prof_proxy)];
}
/* Record i, for finalize's sweep. Records [used(), SLOTS) have never been handed out (the
 * count only grows), so a sweep stops there instead of touching the whole array. */
struct prof_coll *prof_coll_at(uint32_t i);
struct prof_proxy *prof_proxy_at(uint32_t i);
uint32_t prof_coll_used(void);
uint32_t prof_proxy_used(void);

#endif
