/* The TCP transport's listener against connections that never finish their set-up, and the
 * handle it is given (docs/net-plugin.md, "What the transport trusts"). Each part runs in a
 * forked child that sets the environment before it loads the plugin (settings are read once per
 * process), with alarm() as a generous hang guard; nothing depends on how fast anything runs
 * except the deadline part, which waits for the deadline it configured.
 *
 *   test_net_pending LIB
 *     queue     100 idle connections from one address, idle ones from others, a garbage hello,
 *               then a real connection that succeeds and carries a message; who gets closed is
 *               counted against the bounds (per address, full queue), one WARN per cause
 *     deadline  idle connections are closed once NCCLBPF_NET_HELLO_MS has passed, one WARN
 *     handle    a handle with any field that can be checked broken is refused, naming it; a
 *               stage pointer this process did not create is never dereferenced
 * Needs loopback as the device (NCCL_SOCKET_IFNAME=lo): peers bind 127.0.0.x sources. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "check.h"
#include "net_harness.h"
#include "net_tcp_internal.h"
#include "net_tcp_pending.h"

#define COMM_ID 0x5151ull

static const char *lib_path;

/* Lines logged so far that contain needle. */
static int logged(const char *needle)
{
	int n = 0;
	pthread_mutex_lock(&nh_log_lock);
	for (const char *p = nh_log_text; (p = strstr(p, needle)); p++)
		n++;
	pthread_mutex_unlock(&nh_log_lock);
	return n;
}

struct side {
	struct nh_lib l;
	void *ctx, *lc;
	char handle[NCCL_NET_HANDLE_MAXSIZE];
};

static int side_open(struct side *s)
{
	if (nh_open(&s->l, lib_path, 12))
		return -1;
	CHECKF(s->l.t->init(&s->ctx, COMM_ID, NULL, nh_logger, NULL) == ncclSuccess, "init");
	CHECKF(s->l.t->listen(s->ctx, 0, s->handle, &s->lc) == ncclSuccess && s->lc, "listen");
	const struct tcp_handle *h = (const void *)s->handle;
	CHECKF(h->family == AF_INET, "the loopback device is IPv4 (NCCL_SOCKET_IFNAME=lo)");
	return h->family == AF_INET && !check_failures ? 0 : -1;
}

static void side_close(struct side *s)
{
	CHECKF(s->l.t->closeListen(s->lc) == ncclSuccess, "closeListen");
	CHECKF(s->l.t->finalize(s->ctx) == ncclSuccess, "finalize");
}

/* A plain TCP connection to the listener from source address src that sends `junk` bytes of a
 * hello (fewer than a whole one: still idle) or nothing. */
static int raw_connect(const struct side *s, const char *src, size_t junk)
{
	const struct tcp_handle *h = (const void *)s->handle;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
	inet_pton(AF_INET, src, &from.sin_addr);
	to.sin_port = h->port;
	memcpy(&to.sin_addr, h->addr, 4);
	if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		CHECKF(0, "connect from %s: %s", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char bytes[sizeof(struct tcp_hello)];
	memset(bytes, 'x', sizeof(bytes)); /* no magic: not a hello of ours */
	if (junk)
		CHECKF(send(fd, bytes, junk, MSG_NOSIGNAL) == (ssize_t)junk, "send");
	return fd;
}

/* 1 once the listener has closed fd (end of stream or reset). */
static int closed(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static int open_count(const int *fds, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += fds[i] >= 0 && !closed(fds[i]);
	return k;
}

/* accept as NCCL's proxy calls it: nothing is complete, so no comm comes back. */
static void accept_idle(struct side *s, int times)
{
	for (int i = 0; i < times; i++) {
		void *rc = (void *)1;
		ncclNetDeviceHandle_v12_t *dh = NULL;
		CHECKF(s->l.t->accept(s->lc, &rc, &dh) == ncclSuccess && !rc, "accept");
	}
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A real connection to the listener, one message each way of the pair, closed again. */
static void real_connection(struct side *s)
{
	struct nh_setup st;
	int e = nh_connect_accept(&s->l, s->ctx, 0, s->handle, s->lc, &st, 60);
	CHECKF(e == 0 && st.send && st.recv, "real connection: connect %d accept %d (%d)",
	       st.connect_res, st.accept_res, e);
	if (e || !st.send || !st.recv)
		return;
	const ncclNet_v12_t *t = s->l.t;
	uint8_t out[4096], in[4096];
	void *smh = NULL, *rmh = NULL, *sq = NULL, *rq = NULL, *bufs[1] = {in};
	size_t sizes[1] = {sizeof(in)};
	int tags[1] = {7}, got[1] = {0};
	nh_fill(out, sizeof(out), 1, 2);
	CHECKF(t->regMr(st.send, out, sizeof(out), NCCL_PTR_HOST, &smh) == ncclSuccess, "regMr");
	CHECKF(t->regMr(st.recv, in, sizeof(in), NCCL_PTR_HOST, &rmh) == ncclSuccess, "regMr");
	CHECKF(nh_irecv(&s->l, st.recv, 1, bufs, sizes, tags, &rmh, &rq) == ncclSuccess, "irecv");
	CHECKF(nh_isend(&s->l, st.send, out, sizeof(out), 7, smh, &sq) == ncclSuccess, "isend");
	CHECKF(nh_wait2(&s->l, sq, rq, got, 60) == ncclSuccess && got[0] == (int)sizeof(in),
	       "message: %d bytes", got[0]);
	CHECKF(nh_check(in, sizeof(in), 1, 2) < 0, "message contents");
	CHECKF(t->deregMr(st.send, smh) == ncclSuccess && t->deregMr(st.recv, rmh) == ncclSuccess,
	       "deregMr");
	CHECKF(t->closeSend(st.send) == ncclSuccess && t->closeRecv(st.recv) == ncclSuccess,
	       "close");
}

#define FROM_MANY  100
#define BYSTANDERS 8
#define LATE_A	   30
#define LATE_B	   10

static int part_queue(void)
{
	setenv("NCCLBPF_NET_HELLO_MS", "600000", 1); /* no deadline in this part */
	struct side s;
	if (side_open(&s))
		return 1;
	/* A whole hello that is not ours: closed at once, one WARN. */
	int bad = raw_connect(&s, "127.0.0.6", sizeof(struct tcp_hello));
	accept_idle(&s, 1);
	CHECKF(closed(bad), "garbage hello closed");
	CHECKF(logged("sent a hello not meant for this listener") == 1, "one WARN for it");
	close(bad);

	/* Idle bystanders, then FROM_MANY idle connections from one address (every other one
	 * with part of a hello): that address keeps TCP_PENDING_PER_ADDR, its own oldest idle
	 * ones closed; the bystanders stay. One WARN however many were closed. */
	int by[BYSTANDERS], many[FROM_MANY], a[LATE_A], b[LATE_B];
	for (int i = 0; i < BYSTANDERS; i++)
		by[i] = raw_connect(&s, "127.0.0.3", 0);
	accept_idle(&s, 1);
	for (int i = 0; i < FROM_MANY; i++)
		many[i] = raw_connect(&s, "127.0.0.2", i % 2 ? 5 : 0);
	accept_idle(&s, 3);
	CHECKF(open_count(many, FROM_MANY) == TCP_PENDING_PER_ADDR,
	       "one address keeps %d pending, has %d", TCP_PENDING_PER_ADDR,
	       open_count(many, FROM_MANY));
	for (int i = 0; i < FROM_MANY - TCP_PENDING_PER_ADDR; i++)
		CHECKF(closed(many[i]), "the oldest of the address are closed (%d)", i);
	CHECKF(open_count(by, BYSTANDERS) == BYSTANDERS, "bystanders stay: %d",
	       open_count(by, BYSTANDERS));
	CHECKF(logged("the most one address may have") == 1, "one WARN for the address cap");

	/* More idle connections from two more addresses fill the queue: its oldest idle
	 * entries (the bystanders, then the first address's oldest) make room. */
	for (int i = 0; i < LATE_A; i++)
		a[i] = raw_connect(&s, "127.0.0.4", 0);
	for (int i = 0; i < LATE_B; i++)
		b[i] = raw_connect(&s, "127.0.0.5", 0);
	accept_idle(&s, 2);
	int over = BYSTANDERS + TCP_PENDING_PER_ADDR + LATE_A + LATE_B - TCP_PENDING_MAX;
	CHECKF(over > BYSTANDERS, "the test overfills the queue past the bystanders");
	CHECKF(open_count(by, BYSTANDERS) == 0, "bystanders were the oldest");
	CHECKF(open_count(many, FROM_MANY) == TCP_PENDING_PER_ADDR - (over - BYSTANDERS),
	       "then the first address's oldest: %d open", open_count(many, FROM_MANY));
	CHECKF(open_count(a, LATE_A) == LATE_A && open_count(b, LATE_B) == LATE_B,
	       "the newest stay");
	CHECKF(logged("the oldest idle one of a full queue of") == 1, "one WARN for a full queue");

	/* A real connection still gets through (each of its sockets replaces an idle one). */
	real_connection(&s);
	int idle_left = open_count(many, FROM_MANY) + open_count(a, LATE_A) + open_count(b, LATE_B);
	int nsocks = 1 + atoi(getenv("NCCLBPF_NET_NSOCKS") ? getenv("NCCLBPF_NET_NSOCKS") : "4");
	CHECKF(idle_left == TCP_PENDING_MAX - nsocks, "%d idle left for %d sockets", idle_left,
	       nsocks);
	CHECKF(logged("the oldest idle one of a full queue of") == 1, "still one WARN");
	close_all(by, BYSTANDERS);
	close_all(many, FROM_MANY);
	close_all(a, LATE_A);
	close_all(b, LATE_B);
	side_close(&s);
	return check_failures;
}

/* long enough that a loaded machine still sends a real hello in time */
#define DEADLINE_MS "2000"

static int part_deadline(void)
{
	setenv("NCCLBPF_NET_HELLO_MS", DEADLINE_MS, 1);
	struct side s;
	if (side_open(&s))
		return 1;
	int fds[10];
	for (int i = 0; i < 10; i++)
		fds[i] = raw_connect(&s, "127.0.0.2", i % 2 ? 7 : 0);
	accept_idle(&s, 1);
	/* NCCL's proxy calls accept again and again; the deadline closes them (hang guard:
	 * alarm in main). */
	while (open_count(fds, 10)) {
		accept_idle(&s, 1);
		usleep(10000);
	}
	CHECKF(logged("did not complete its set-up within " DEADLINE_MS
		      " ms (NCCLBPF_NET_HELLO_MS)") == 1,
	       "one WARN for the deadline");
	close_all(fds, 10);
	real_connection(&s);
	side_close(&s);
	return check_failures;
}

/* Connect with a copy of the listener's handle broken by edit: refused, the WARN names why. */
static void broken(struct side *s, void (*edit)(struct tcp_handle *h), const char *why)
{
	char copy[NCCL_NET_HANDLE_MAXSIZE];
	memcpy(copy, s->handle, sizeof(copy));
	edit((struct tcp_handle *)copy);
	void *sc = (void *)1;
	ncclNetDeviceHandle_v12_t *dh = NULL;
	CHECKF(s->l.t->connect(s->ctx, 0, copy, &sc, &dh) != ncclSuccess && !sc, "%s accepted",
	       why);
	CHECKF(nh_last_warn_has(why), "WARN '%s' lacks '%s'", nh_last_warn, why);
}

static void e_magic(struct tcp_handle *h)
{
	h->magic ^= 1;
}
static void e_stage(struct tcp_handle *h)
{
	h->stage = (struct tcp_connecting *)(uintptr_t)0x1000; /* never dereferenced */
}
static void e_port(struct tcp_handle *h)
{
	h->port = 0;
}
static void e_multicast(struct tcp_handle *h)
{
	inet_pton(AF_INET, "224.0.0.1", h->addr);
}
static void e_any(struct tcp_handle *h)
{
	memset(h->addr, 0, 4);
}
static void e_v4_tail(struct tcp_handle *h)
{
	h->addr[9] = 1;
}
static void e_family(struct tcp_handle *h)
{
	h->family = 99;
}
static void e_listen_id(struct tcp_handle *h)
{
	h->listen_id &= ~1ull;
}
static void e_reserved(struct tcp_handle *h)
{
	((uint8_t *)h)[NCCL_NET_HANDLE_MAXSIZE - 1] = 1;
}

static int part_handle(void)
{
	struct side s;
	if (side_open(&s))
		return 1;
	broken(&s, e_magic, "not an NCCLbpf handle");
	broken(&s, e_stage, "a connection attempt this process does not have");
	broken(&s, e_port, "port 0");
	broken(&s, e_multicast, "not a unicast IPv4 address");
	broken(&s, e_any, "not a unicast IPv4 address");
	broken(&s, e_v4_tail, "not a unicast IPv4 address");
	broken(&s, e_family, "unknown address family");
	broken(&s, e_listen_id, "malformed listener id");
	broken(&s, e_reserved, "reserved bytes are not zero");
	/* The unbroken handle still connects (its stage is ours while connect runs). */
	real_connection(&s);
	side_close(&s);
	return check_failures;
}

static int in_child(int (*fn)(void), const char *name)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(120); /* a hang is a failure, not a stuck suite */
		int rc = fn();
		fflush(stderr);
		_exit(rc ? 1 : 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	fprintf(stderr, "%s: %s\n", name, ok ? "ok" : "FAILED");
	return !ok;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE,
	       SIG_DFL); /* a SIGPIPE from the transport must kill us: it must never come */
	if (argc < 2) {
		fprintf(stderr, "usage: test_net_pending LIB\n");
		return 2;
	}
	lib_path = argv[1];
	int bad = in_child(part_queue, "queue") + in_child(part_deadline, "deadline") +
		  in_child(part_handle, "handle");
	if (bad) {
		printf("FAILED (%d part(s))\n", bad);
		return 1;
	}
	printf("OK\n");
	return 0;
}
