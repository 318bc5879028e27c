/* Epoch-based reclamation: nothing retired is freed while a reader that could hold it is inside
 * a section; everything is freed once readers have left; retirements of exited threads are not
 * lost; a swap-and-retire stress with poisoning free functions never shows a reader a freed
 * object. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebpf/epoch.h"
#include "check.h"

static _Atomic int freed_flag;
static _Atomic int freed_count;

static void set_flag(void *p)
{
	atomic_store(&freed_flag, 1);
	free(p);
}

static void count_free(void *p)
{
	atomic_fetch_add(&freed_count, 1);
	free(p);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* A reader parked inside a section until told to leave. */
static _Atomic int reader_inside, reader_leave;

static void *reader_thread(void *arg)
{
	ebpf_epoch_enter();
	atomic_store(&reader_inside, 1);
	while (!atomic_load(&reader_leave))
		sleep_ms(1);
	ebpf_epoch_exit();
	return NULL;
}

static _Atomic int sync_done, sync_rc;

static void *sync_thread(void *arg)
{
	atomic_store(&sync_rc, ebpf_epoch_synchronize());
	atomic_store(&sync_done, 1);
	return NULL;
}

static void test_reader_blocks_free(void)
{
	pthread_t r, s;
	atomic_store(&reader_inside, 0);
	atomic_store(&reader_leave, 0);
	atomic_store(&freed_flag, 0);
	pthread_create(&r, NULL, reader_thread, NULL);
	while (!atomic_load(&reader_inside))
		sleep_ms(1);
	ebpf_epoch_retire(malloc(16), set_flag);
	for (int i = 0; i < 100; i++)
		ebpf_epoch_reclaim();
	CHECK(atomic_load(&freed_flag) == 0);
	/* synchronize must wait for the reader. */
	atomic_store(&sync_done, 0);
	pthread_create(&s, NULL, sync_thread, NULL);
	sleep_ms(50);
	CHECK(atomic_load(&sync_done) == 0);
	CHECK(atomic_load(&freed_flag) == 0);
	atomic_store(&reader_leave, 1);
	pthread_join(r, NULL);
	pthread_join(s, NULL);
	CHECK(atomic_load(&sync_done) == 1);
	CHECK(atomic_load(&sync_rc) == 0);
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_flag) == 1);
}

static void test_basic(void)
{
	CHECK(!ebpf_epoch_in_section());
	ebpf_epoch_enter();
	/* The mode this run tests: NCCLBPF_EPOCH_MEMBARRIER=0 must give full-barrier readers. */
	const char *mb = getenv("NCCLBPF_EPOCH_MEMBARRIER");
	int slow = !(atomic_load(&ebpf_epoch_tls_.state) & EBPF_EPOCH_FAST);
	printf("epoch readers: %s\n", slow ? "full barrier" : "membarrier (plain stores)");
	if (mb && strcmp(mb, "0") == 0)
		CHECK(slow);
	ebpf_epoch_enter();
	CHECK(ebpf_epoch_in_section());
	ebpf_epoch_exit();
	CHECK(ebpf_epoch_in_section());
	CHECK(ebpf_epoch_synchronize() == -EDEADLK);
	ebpf_epoch_exit();
	CHECK(!ebpf_epoch_in_section());
	ebpf_epoch_exit(); /* unbalanced: ignored */
	CHECK(!ebpf_epoch_in_section());
	atomic_store(&freed_flag, 0);
	ebpf_epoch_retire(malloc(8), set_flag);
	ebpf_epoch_retire(NULL, set_flag); /* ignored */
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_flag) == 1);
	/* Retired inside our own section: freed only after we leave. */
	atomic_store(&freed_flag, 0);
	ebpf_epoch_enter();
	ebpf_epoch_retire(malloc(8), set_flag);
	for (int i = 0; i < 10; i++)
		ebpf_epoch_reclaim();
	CHECK(atomic_load(&freed_flag) == 0);
	ebpf_epoch_exit();
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_flag) == 1);
}

static void *retire_and_exit(void *arg)
{
	for (int i = 0; i < 10; i++)
		ebpf_epoch_retire(malloc(8), count_free);
	return NULL;
}

static void test_thread_exit_orphans(void)
{
	atomic_store(&freed_count, 0);
	pthread_t t;
	pthread_create(&t, NULL, retire_and_exit, NULL);
	pthread_join(t, NULL);
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_count) == 10);
}

/* Swap-and-retire stress. */
#define MAGIC 0x5eedf00dcafe1234ull
struct obj {
	_Atomic uint64_t magic;
	uint64_t payload;
};
static _Atomic(struct obj *) cur;
static _Atomic int stop;
static _Atomic uint64_t bad_reads, reads;
static _Atomic int readers_running; /* readers that completed a section */

static void poison_free(void *p)
{
	struct obj *o = p;
	atomic_store_explicit(&o->magic, 0, memory_order_relaxed);
	free(o);
}

static void *stress_reader(void *arg)
{
	uint64_t n = 0, bad = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		ebpf_epoch_enter();
		struct obj *o = atomic_load_explicit(&cur, memory_order_acquire);
		for (int i = 0; i < 4; i++)
			bad += atomic_load_explicit(&o->magic, memory_order_relaxed) != MAGIC ||
			       o->payload != 42;
		ebpf_epoch_exit();
		if (n++ == 0)
			atomic_fetch_add(&readers_running, 1);
	}
	atomic_fetch_add(&reads, n);
	atomic_fetch_add(&bad_reads, bad);
	return NULL;
}

static struct obj *new_obj(void)
{
	struct obj *o = malloc(sizeof(*o));
	atomic_init(&o->magic, MAGIC);
	o->payload = 42;
	return o;
}

static void test_stress(int swaps)
{
	struct ebpf_epoch_stats before, after;
	ebpf_epoch_get_stats(&before);
	atomic_store(&cur, new_obj());
	pthread_t rd[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&rd[i], NULL, stress_reader, NULL);
	for (int i = 0; i < swaps; i++) {
		struct obj *old = atomic_exchange_explicit(&cur, new_obj(), memory_order_acq_rel);
		ebpf_epoch_retire(old, poison_free);
		if (i % 5000 == 0)
			CHECK(ebpf_epoch_synchronize() == 0);
	}
	/* On a loaded machine the swaps may finish before a reader ran: let every reader overlap
	 * at least one section with the swaps' aftermath before stopping them. */
	while (atomic_load(&readers_running) < 3)
		sleep_ms(1);
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(rd[i], NULL);
	CHECK(ebpf_epoch_synchronize() == 0);
	ebpf_epoch_get_stats(&after);
	CHECK_EQ_U64(atomic_load(&bad_reads), 0);
	CHECK(atomic_load(&reads) > 0);
	CHECK_EQ_U64(after.retired - before.retired, (uint64_t)swaps);
	CHECK_EQ_U64(after.retired, after.freed);
	CHECK(after.epoch > before.epoch);
	free(atomic_load(&cur));
}

/* Three levels: the inner two take the inline nested path; only the outermost exit ends the
 * section (a retire from inside stays alive until then). */
static void test_deep_nesting(void)
{
	atomic_store(&freed_flag, 0);
	ebpf_epoch_enter();
	ebpf_epoch_enter();
	ebpf_epoch_enter();
	ebpf_epoch_retire(malloc(8), set_flag);
	ebpf_epoch_exit();
	ebpf_epoch_exit();
	CHECK(ebpf_epoch_in_section());
	for (int i = 0; i < 10; i++)
		ebpf_epoch_reclaim();
	CHECK(atomic_load(&freed_flag) == 0);
	ebpf_epoch_exit();
	CHECK(!ebpf_epoch_in_section());
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_flag) == 1);
}

/* ebpf_epoch_try_enter_outer: enters only the outermost section of a registered thread, and
 * that section protects like any other; inside a section (or unregistered) it enters nothing. */
static void *try_enter_fresh_thread(void *arg)
{
	(void)arg;
	/* A thread that never entered is not registered yet: only the slow path registers. */
	CHECK(!ebpf_epoch_try_enter_outer());
	CHECK(!ebpf_epoch_in_section());
	ebpf_epoch_enter();
	ebpf_epoch_exit();
	return NULL;
}

static void test_try_enter_outer(void)
{
	pthread_t t;
	CHECK(pthread_create(&t, NULL, try_enter_fresh_thread, NULL) == 0);
	pthread_join(t, NULL);

	ebpf_epoch_enter(); /* registered (and left) */
	ebpf_epoch_exit();
	if (!(atomic_load(&ebpf_epoch_tls_.state) & EBPF_EPOCH_FAST)) {
		/* Full-barrier readers: every enter goes out of line, so the inline one refuses. */
		CHECK(!ebpf_epoch_try_enter_outer());
		CHECK(!ebpf_epoch_in_section());
		return;
	}
	atomic_store(&freed_flag, 0);
	CHECK(ebpf_epoch_try_enter_outer());
	CHECK(ebpf_epoch_in_section());
	CHECK(!ebpf_epoch_try_enter_outer()); /* nested: refused, the section stays one deep */
	ebpf_epoch_retire(malloc(8), set_flag);
	for (int i = 0; i < 10; i++)
		ebpf_epoch_reclaim();
	CHECK(atomic_load(&freed_flag) == 0); /* the section protects */
	ebpf_epoch_exit_outer();
	CHECK(!ebpf_epoch_in_section());
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_flag) == 1);

	ebpf_epoch_enter(); /* inside an ordinary section: refused too */
	CHECK(!ebpf_epoch_try_enter_outer());
	ebpf_epoch_exit();
	CHECK(!ebpf_epoch_in_section());
}

/* After any number of advances the inline enter announces the current epoch with the outermost
 * section's bits, which a reclaimer needs to see the reader inside (a stale or wrong word would
 * either stall every advance or let one pass a reader). */
static void test_fast_enter_announces_current(void)
{
	ebpf_epoch_enter(); /* registered (and left) */
	ebpf_epoch_exit();
	if (!(atomic_load(&ebpf_epoch_tls_.state) & EBPF_EPOCH_FAST))
		return; /* full-barrier readers: no inline enter */
	for (int round = 0; round < 5; round++) {
		CHECK(ebpf_epoch_synchronize() == 0); /* two advances at least */
		struct ebpf_epoch_stats st;
		ebpf_epoch_get_stats(&st);
		CHECK(ebpf_epoch_try_enter_outer());
		uint64_t s = atomic_load(&ebpf_epoch_tls_.state);
		CHECK(s == (st.epoch << EBPF_EPOCH_SHIFT | EBPF_EPOCH_DEPTH1 | EBPF_EPOCH_FAST |
			    EBPF_EPOCH_INSIDE));
		CHECK((uint32_t)(s >> EBPF_EPOCH_SHIFT) == (uint32_t)st.epoch);
		CHECK(s & EBPF_EPOCH_INSIDE);
		ebpf_epoch_exit_outer();
	}
	/* a reader inside the inline section still holds back what it may see */
	atomic_store(&freed_flag, 0);
	CHECK(ebpf_epoch_try_enter_outer());
	ebpf_epoch_retire(malloc(8), set_flag);
	for (int i = 0; i < 10; i++)
		ebpf_epoch_reclaim();
	CHECK(atomic_load(&freed_flag) == 0);
	ebpf_epoch_exit_outer();
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(atomic_load(&freed_flag) == 1);
}

/* Readers whose threads come and go while another thread scans their (thread-local) records:
 * a scan must never read the record of a thread that has exited (TSan/ASan builds). */
static _Atomic int churn_stop;

static void *churn_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		ebpf_epoch_enter();
		struct obj *o = atomic_load(&cur);
		if (o && atomic_load(&o->magic) != MAGIC)
			atomic_fetch_add(&bad_reads, 1);
		ebpf_epoch_exit();
	}
	return NULL;
}

static void *churn_spawner(void *arg)
{
	(void)arg;
	while (!atomic_load(&churn_stop)) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, churn_reader, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

static void test_thread_churn(int swaps)
{
	struct ebpf_epoch_stats before, after;
	pthread_t sp;
	ebpf_epoch_get_stats(&before);
	atomic_store(&bad_reads, 0);
	atomic_store(&churn_stop, 0);
	atomic_store(&cur, new_obj());
	pthread_create(&sp, NULL, churn_spawner, NULL);
	for (int i = 0; i < swaps; i++) {
		struct obj *old = atomic_exchange(&cur, new_obj());
		ebpf_epoch_retire(old, poison_free);
		if (i % 64 == 0)
			CHECK(ebpf_epoch_synchronize() == 0);
	}
	atomic_store(&churn_stop, 1);
	pthread_join(sp, NULL);
	CHECK(ebpf_epoch_synchronize() == 0);
	ebpf_epoch_get_stats(&after);
	CHECK_EQ_U64(atomic_load(&bad_reads), 0);
	CHECK_EQ_U64(after.retired - before.retired, (uint64_t)swaps);
	CHECK_EQ_U64(after.retired, after.freed);
	free(atomic_load(&cur));
	atomic_store(&cur, NULL);
}

int main(int argc, char **argv)
{
	test_basic();
	test_deep_nesting();
	test_try_enter_outer();
	test_fast_enter_announces_current();
	test_reader_blocks_free();
	test_thread_exit_orphans();
	test_stress(argc > 1 ? atoi(argv[1]) : 50000);
	test_thread_churn(argc > 1 ? atoi(argv[1]) / 10 : 5000);
	return check_summary("epoch");
}
