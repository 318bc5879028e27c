/* RINGBUF: creation rules, reserve/submit/discard/output, consumer order, discarded records
 * skipped, BUSY records block the consumer, wrap-around, full-ring refusal, stats. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/maps.h"
#include "check.h"

static struct ebpf_map *mk(uint32_t size)
{
	struct ebpf_map_def d = {
	    .sz = sizeof(d), .name = "rb", .type = EBPF_MAP_TYPE_RINGBUF, .max_entries = size};
	return ebpf_map__create(&d, NULL, 0);
}

struct sink {
	int n;
	uint32_t sizes[64];
	uint64_t first_words[64];
	int stop_after;
};

static int collect(void *ctx, const void *data, uint32_t size)
{
	struct sink *s = ctx;
	if (s->n < 64) {
		s->sizes[s->n] = size;
		uint64_t w = 0;
		memcpy(&w, data, size < 8 ? size : 8);
		s->first_words[s->n] = w;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static void *late_producer(void *arg)
{
	struct timespec ts = {0, 30 * 1000000};
	nanosleep(&ts, NULL);
	uint64_t v = 0x1a7e;
	ebpf_ringbuf__output(arg, &v, 8, 0);
	return NULL;
}

int main(void)
{
	CHECK(mk(4095) == NULL);
	CHECK(mk(4096 + 4096 * 2) == NULL);
	CHECK(mk(0) == NULL);
	struct ebpf_map_def bd = {
	    .sz = sizeof(bd), .type = EBPF_MAP_TYPE_RINGBUF, .key_size = 4, .max_entries = 4096};
	CHECK(ebpf_map__create(&bd, NULL, 0) == NULL);
	struct ebpf_map *m = mk(4096);
	CHECK(m != NULL);
	if (!m)
		return check_summary("maps_ringbuf");
	CHECK(ebpf_map__user_value_size(m) == 0);
	uint32_t k = 0;
	CHECK(ebpf_map__lookup_elem(m, &k) == NULL);
	CHECK(ebpf_map__update_elem(m, &k, &k, 0) == -EOPNOTSUPP);
	CHECK(ebpf_map__delete_elem(m, &k) == -EOPNOTSUPP);

	struct sink s = {0};
	CHECK(ebpf_ringbuf__consume(m, collect, &s, 0) == 0);
	uint64_t a = 1, b = 2, c = 3;
	uint64_t *r1 = ebpf_ringbuf__reserve(m, 8, 0);
	uint64_t *r2 = ebpf_ringbuf__reserve(m, 13, 0);
	CHECK(r1 && r2 && ((uintptr_t)r1 & 7) == 0 && ((uintptr_t)r2 & 7) == 0);
	CHECK(ebpf_ringbuf__reserve(m, 8, 1) == NULL); /* flags must be 0 */
	CHECK(ebpf_ringbuf__avail_data(m) == 16 + 24);
	*r1 = a;
	*r2 = b;
	/* r1 still BUSY: nothing to consume, even though r2 is submitted. */
	ebpf_ringbuf__submit(r2, 0);
	CHECK(ebpf_ringbuf__consume(m, collect, &s, 0) == 0);
	ebpf_ringbuf__submit(r1, 0);
	CHECK(ebpf_ringbuf__output(m, &c, 8, EBPF_RB_FORCE_WAKEUP) == 0);
	CHECK(ebpf_ringbuf__output(m, &c, 8, 4) == -EINVAL);
	void *d = ebpf_ringbuf__reserve(m, 100, 0);
	CHECK(d != NULL);
	ebpf_ringbuf__discard(d, 0);
	CHECK(ebpf_ringbuf__output(m, &a, 1, 0) == 0);
	CHECK(ebpf_ringbuf__consume(m, collect, &s, 0) == 4);
	CHECK(s.n == 4);
	CHECK(s.sizes[0] == 8 && s.first_words[0] == 1);
	CHECK(s.sizes[1] == 13 && s.first_words[1] == 2);
	CHECK(s.sizes[2] == 8 && s.first_words[2] == 3);
	CHECK(s.sizes[3] == 1 && s.first_words[3] == 1);
	CHECK(ebpf_ringbuf__avail_data(m) == 0);
	/* Too big for the ring / full ring. */
	CHECK(ebpf_ringbuf__reserve(m, 4096, 0) == NULL);
	CHECK(ebpf_ringbuf__output(m, &a, 4096, 0) == -E2BIG);
	void *big = ebpf_ringbuf__reserve(m, 4088, 0);
	CHECK(big != NULL);
	CHECK(ebpf_ringbuf__output(m, &a, 8, 0) == -EAGAIN);
	ebpf_ringbuf__submit(big, 0);
	s = (struct sink){0};
	CHECK(ebpf_ringbuf__consume(m, collect, &s, 0) == 1 && s.sizes[0] == 4088);
	/* Wrap-around many times with records of varying size; contents intact, max honoured. */
	unsigned char buf[300];
	uint64_t produced = 0, consumed = 0;
	int bad = 0;
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 5; i++) {
			uint32_t sz = 8 + (uint32_t)((round * 37 + i * 101) % 280);
			memset(buf, 0, sizeof(buf));
			uint64_t seq = produced;
			memcpy(buf, &seq, 8);
			if (sz > 8)
				buf[sz - 1] = (unsigned char)seq;
			if (ebpf_ringbuf__output(m, buf, sz, 0) == 0)
				produced++;
		}
		s = (struct sink){0};
		s.stop_after = 3;
		long n = ebpf_ringbuf__consume(m, collect, &s, round % 2 ? 2 : 0);
		CHECK(n >= 0 && n <= 3);
		for (long i = 0; i < n && i < 64; i++)
			bad += s.first_words[i] != consumed + (uint64_t)i;
		consumed += (uint64_t)n;
	}
	s = (struct sink){0};
	consumed += (uint64_t)ebpf_ringbuf__consume(m, collect, &s, 0);
	CHECK(bad == 0);
	CHECK(produced > 500 && consumed == produced);
	struct ebpf_map_stats st = {.sz = sizeof(st)};
	CHECK(ebpf_map__get_stats(m, &st) == 0);
	CHECK(st.deletes == 1 && st.rb_consumed == consumed + 5 && st.entries == 0);
	CHECK(ebpf_ringbuf__consume(NULL, collect, &s, 0) == -EINVAL);
	uint32_t akey = 0;
	struct ebpf_map_def ad = {.sz = sizeof(ad),
				  .type = EBPF_MAP_TYPE_ARRAY,
				  .key_size = 4,
				  .value_size = 4,
				  .max_entries = 1};
	struct ebpf_map *arr = ebpf_map__create(&ad, NULL, 0);
	CHECK(ebpf_ringbuf__reserve(arr, 8, 0) == NULL);
	CHECK(ebpf_ringbuf__output(arr, &akey, 4, 0) == -EINVAL);
	CHECK(ebpf_ringbuf__consume(arr, collect, &s, 0) == -EINVAL);
	/* poll: times out empty, returns what is there, and waits for a late producer. */
	s = (struct sink){0};
	CHECK(ebpf_ringbuf__poll(m, collect, &s, 20) == 0);
	CHECK(ebpf_ringbuf__output(m, &a, 8, 0) == 0);
	CHECK(ebpf_ringbuf__poll(m, collect, &s, 0) == 1);
	pthread_t t;
	pthread_create(&t, NULL, late_producer, m);
	CHECK(ebpf_ringbuf__poll(m, collect, &s, -1) == 1);
	pthread_join(t, NULL);
	CHECK(s.n == 2 && s.first_words[1] == 0x1a7e);
	CHECK(ebpf_ringbuf__poll(arr, collect, &s, 0) == -EINVAL);
	ebpf_map__free(arr);
	ebpf_map__free(m);
	return check_summary("maps_ringbuf");
}
