/* Trace recording and parsing (format in ncclbpf/trace.h). */
#include "ncclbpf/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncclbpf/trusted_path.h"
#include "policy.h"

int ncclbpf_trace_path(const char *tmpl, char *out, size_t len)
{
	struct rt_ident id;
	int have_id = 0;
	size_t n = 0;
	for (const char *s = tmpl; *s; s++) {
		char num[24];
		const char *add = num;
		if (*s != '%') {
			num[0] = *s;
			num[1] = 0;
		} else if (s[1] == '%') {
			add = "%";
			s++;
		} else if (s[1] == 'p') {
			snprintf(num, sizeof(num), "%d", (int)getpid());
			s++;
		} else if (s[1] == 'h') {
			if (!have_id)
				rt_ident_read(&id);
			have_id = 1;
			add = id.host;
			s++;
		} else {
			return -EINVAL;
		}
		size_t k = strlen(add);
		if (n + k >= len)
			return -ENAMETOOLONG;
		memcpy(out + n, add, k);
		n += k;
	}
	if (len == 0)
		return -ENAMETOOLONG;
	out[n] = 0;
	return 0;
}

const char *ncclbpf_trace_path_why(int err)
{
	return err == -EINVAL ? "only %p (process id), %h (host name) and %% may follow a %"
			      : "the path is too long";
}

void rt_trace_open(const char *tmpl)
{
	if (ncclbpf_trace_on())
		return;
	char path[4096];
	int e = ncclbpf_trace_path(tmpl, path, sizeof(path));
	if (e) {
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: NCCLBPF_TRACE=%s: %s, not recording", tmpl,
		       ncclbpf_trace_path_why(e));
		return;
	}
	/* Never through a link, never a FIFO or someone else's file: trusted_path.h. */
	char why[600];
	int fd = ncclbpf_path_open_append(path, why, sizeof(why));
	if (fd < 0) {
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: cannot open the trace file (NCCLBPF_TRACE): %s",
		       why);
		return;
	}
	static const char hdr[] = "# ncclbpf trace v2\n";
	errno = 0;
	if (lseek(fd, 0, SEEK_END) == 0 && write(fd, hdr, sizeof(hdr) - 1) != sizeof(hdr) - 1) {
		int err = errno;
		close(fd);
		rt_log(NCCLBPF_LOG_WARN,
		       "NCCLbpf: cannot write the trace file %s (%s), not recording", path,
		       err ? strerror(err) : "short write");
		return;
	}
	__atomic_store_n(&ncclbpf_rt_hot_.trace_fd, fd, __ATOMIC_RELEASE);
	rt_log(NCCLBPF_LOG_INFO, "NCCLbpf: recording tuner calls, profiler and net events to %s",
	       path);
}

void rt_trace_close(void)
{
	int fd = __atomic_exchange_n(&ncclbpf_rt_hot_.trace_fd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0)
		close(fd);
}

/* snprintf that accumulates into buf, remembering overflow. */
struct out {
	char *buf;
	size_t len, pos;
	int overflow;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	if (o->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->pos)
		o->overflow = 1;
	else
		o->pos += (size_t)n;
}

int ncclbpf_trace_format(const struct ncclbpf_trace_rec *r, char *buf, size_t len)
{
	struct out o = {.buf = buf, .len = len};
	switch (r->kind) {
	case NCCLBPF_TRACE_INIT:
		put(&o, "init c=%u.%u comm=%016" PRIx64 " ranks=%u nodes=%u api=%u\n", r->pid,
		    r->ctx, r->comm_id, r->n_ranks, r->n_nodes, r->api);
		break;
	case NCCLBPF_TRACE_CALL: {
		int cells = r->num_algo * r->num_proto;
		if (r->num_algo < 0 || r->num_proto < 0 || cells > NCCLBPF_TRACE_MAX_CELLS)
			cells = 0;
		put(&o,
		    "call c=%u.%u seq=%" PRIu64 " coll=%u bytes=%" PRIu64
		    " pipe=%u reg=%u table=%dx%d cost=",
		    r->pid, r->ctx, r->seq, r->coll, r->n_bytes, r->pipe, r->reg,
		    cells ? r->num_algo : 0, cells ? r->num_proto : 0);
		for (int i = 0; i < cells; i++)
			put(&o, "%s%.9g", i ? "," : "", (double)r->cost[i]);
		if (!cells)
			put(&o, "-");
		put(&o, " algo=%d proto=%d ch=%d ver=%" PRIu64, r->algo, r->proto, r->channels,
		    r->version);
		if (r->cp)
			put(&o, " g=%" PRIu64 " h=%016" PRIx64, r->gen, r->hash);
		put(&o, "\n");
		break;
	}
	case NCCLBPF_TRACE_CHUNK:
		put(&o,
		    "chunk c=%u.%u seq=%" PRIu64 " coll=%u bytes=%" PRIu64
		    " algo=%d proto=%d nch=%d in=%" PRIu64 " out=%" PRIu64 " ver=%" PRIu64,
		    r->pid, r->ctx, r->seq, r->coll, r->n_bytes, r->algo, r->proto, r->channels,
		    r->chunk_in, r->chunk_out, r->version);
		if (r->cp)
			put(&o, " g=%" PRIu64 " h=%016" PRIx64, r->gen, r->hash);
		put(&o, "\n");
		break;
	case NCCLBPF_TRACE_FINI:
	case NCCLBPF_TRACE_PFINI:
		put(&o, "%s c=%u.%u\n", r->kind == NCCLBPF_TRACE_FINI ? "fini" : "pfini", r->pid,
		    r->ctx);
		break;
	case NCCLBPF_TRACE_PINIT:
		put(&o, "pinit c=%u.%u comm=%016" PRIx64 " ranks=%u nodes=%u rank=%u api=%u\n",
		    r->pid, r->ctx, r->comm_id, r->n_ranks, r->n_nodes, r->rank, r->api);
		break;
	case NCCLBPF_TRACE_PCOLL:
		put(&o,
		    "coll c=%u.%u ev=%" PRIx64 " t=%" PRIu64 " seq=%" PRIu64
		    " func=%s count=%" PRIu64 " dtype=%s nch=%d alg=%s prot=%s\n",
		    r->pid, r->ctx, r->handle, r->t_ns, r->seq, r->func, r->n_bytes, r->dtype,
		    r->channels, r->alg, r->prot);
		break;
	case NCCLBPF_TRACE_PKCH:
		put(&o,
		    "kch c=%u.%u ev=%" PRIx64 " parent=%" PRIx64 " t=%" PRIu64
		    " ch=%d timer=%" PRIu64 "\n",
		    r->pid, r->ctx, r->handle, r->parent, r->t_ns, r->channels, r->timer);
		break;
	case NCCLBPF_TRACE_PKCH_END:
		put(&o, "kchend c=%u.%u ev=%" PRIx64 " t=%" PRIu64 " timer=%" PRIu64 "\n", r->pid,
		    r->ctx, r->handle, r->t_ns, r->timer);
		break;
	case NCCLBPF_TRACE_PPROXY:
		put(&o,
		    "proxy c=%u.%u ev=%" PRIx64 " parent=%" PRIx64 " t=%" PRIu64
		    " pid=%u ch=%d peer=%d steps=%d chunk=%d\n",
		    r->pid, r->ctx, r->handle, r->parent, r->t_ns, r->proxy_pid, r->channels,
		    r->peer, r->steps, r->chunk);
		break;
	case NCCLBPF_TRACE_PSTOP:
		put(&o, "stop c=%u.%u ev=%" PRIx64 " t=%" PRIu64 "\n", r->pid, r->ctx, r->handle,
		    r->t_ns);
		break;
	case NCCLBPF_TRACE_NET:
		put(&o,
		    "net c=%u.%u op=%s comm=%016" PRIx64 " bytes=%" PRIu64 " t=%" PRIu64
		    " dur=%" PRIu64 " dev=%u peer=%d tag=%d addr=",
		    r->pid, r->ctx, ncclbpf_trace_net_op_name(r->net_op), r->comm_id, r->n_bytes,
		    r->t_ns, r->dur_ns, r->dev, r->peer, r->tag);
		for (int i = 0; i < 16; i++)
			put(&o, "%02x", r->peer_addr[i]);
		put(&o, " port=%u ret=", r->peer_port);
		if (r->has_ret)
			put(&o, "%" PRIu64 "\n", r->ret);
		else
			put(&o, "-\n");
		break;
	default:
		return -EINVAL;
	}
	return o.overflow ? -ENOSPC : (int)o.pos;
}

void ncclbpf_trace_emit(const struct ncclbpf_trace_rec *r)
{
	int fd = __atomic_load_n(&ncclbpf_rt_hot_.trace_fd, __ATOMIC_ACQUIRE);
	if (fd < 0)
		return;
	char line[1024];
	int n = ncclbpf_trace_format(r, line, sizeof(line));
	errno = 0;
	if (n > 0 && write(fd, line, (size_t)n) != n) {
		/* A full disk must not disturb the job: stop recording, say so once. The descriptor
		 * stays open: another thread may still be writing through it. */
		int err = errno;
		if (__atomic_exchange_n(&ncclbpf_rt_hot_.trace_fd, -1, __ATOMIC_ACQ_REL) == fd)
			rt_log(
			    NCCLBPF_LOG_WARN,
			    "NCCLbpf: trace write failed (%s), recording stopped (NCCLBPF_TRACE)",
			    err ? strerror(err) : "short write");
	}
}

static const char *const net_ops[] = {
    [NCCLBPF_NET_CONNECT] = "connect",	 [NCCLBPF_NET_ACCEPT] = "accept",
    [NCCLBPF_NET_ISEND] = "isend",	 [NCCLBPF_NET_IRECV] = "irecv",
    [NCCLBPF_NET_COMPLETE] = "complete", [NCCLBPF_NET_COMPLETE_RECV] = "complete_recv",
};
#define N_NET_OPS (sizeof(net_ops) / sizeof(net_ops[0]))

const char *ncclbpf_trace_net_op_name(uint32_t op)
{
	return op < N_NET_OPS && net_ops[op] ? net_ops[op] : "?";
}

void ncclbpf_trace_name(char dst[NCCLBPF_TRACE_NAME_LEN], const char *s)
{
	if (!s || !*s)
		s = "-";
	size_t i = 0;
	for (; s[i] && i + 1 < NCCLBPF_TRACE_NAME_LEN; i++)
		dst[i] = s[i] > ' ' && s[i] <= '~' && s[i] != '=' ? s[i] : '?';
	dst[i] = 0;
}

/* --- Parsing ------------------------------------------------------------------------------ */

static int parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (errno || end == s || *end || *s == '-')
		return -1;
	*v = x;
	return 0;
}

static int parse_i32(const char *s, int32_t *v)
{
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (errno || end == s || *end || x < INT32_MIN || x > INT32_MAX)
		return -1;
	*v = (int32_t)x;
	return 0;
}

static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;
	if (parse_u64(s, 10, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int parse_cost(const char *s, struct ncclbpf_trace_rec *r)
{
	int cells = r->num_algo * r->num_proto;
	if (!strcmp(s, "-"))
		return cells == 0 ? 0 : -1;
	for (int i = 0; i < cells; i++) {
		char *end;
		r->cost[i] = strtof(s, &end);
		if (end == s || (*end != ',' && *end) || (*end == ',') != (i + 1 < cells))
			return -1;
		s = end + (*end == ',');
	}
	return *s ? -1 : 0;
}

static int parse_net_op(const char *s, uint32_t *op)
{
	for (uint32_t i = 0; i < N_NET_OPS; i++)
		if (net_ops[i] && !strcmp(s, net_ops[i])) {
			*op = i;
			return 0;
		}
	return -1;
}

/* 32 hex digits: the 16 bytes of a peer address. */
static int parse_addr(const char *s, uint8_t a[16])
{
	if (strlen(s) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		char hex[3] = {s[2 * i], s[2 * i + 1], 0};
		uint64_t v;
		if (parse_u64(hex, 16, &v) || hex[0] == '+' || hex[0] == ' ')
			return -1;
		a[i] = (uint8_t)v;
	}
	return 0;
}

/* A program's return value, or "-" when none ran. */
static int parse_ret(const char *s, struct ncclbpf_trace_rec *r)
{
	r->has_ret = strcmp(s, "-") != 0;
	return r->has_ret ? parse_u64(s, 10, &r->ret) : 0;
}

/* A name field: one token of at most NCCLBPF_TRACE_NAME_LEN - 1 bytes. */
static int parse_name(const char *s, char *dst)
{
	size_t n = strlen(s);
	if (n == 0 || n >= NCCLBPF_TRACE_NAME_LEN)
		return -1;
	memcpy(dst, s, n + 1);
	return 0;
}

static int parse_field(struct ncclbpf_trace_rec *r, const char *key, const char *val,
		       uint64_t *seen)
{
	uint64_t v64;
#define KEY(name, bit, expr)                                                                       \
	if (!strcmp(key, name)) {                                                                  \
		*seen |= 1ull << (bit);                                                            \
		return (expr) ? -1 : 0;                                                            \
	}
	if (!strcmp(key, "c")) {
		*seen |= 1u;
		char *dot = strchr(val, '.');
		if (!dot)
			return -1;
		char a[32];
		size_t n = (size_t)(dot - val);
		if (n == 0 || n >= sizeof(a))
			return -1;
		memcpy(a, val, n);
		a[n] = 0;
		return parse_u32(a, &r->pid) || parse_u32(dot + 1, &r->ctx) ? -1 : 0;
	}
	KEY("comm", 1, parse_u64(val, 16, &r->comm_id))
	KEY("ranks", 2, parse_u32(val, &r->n_ranks))
	KEY("nodes", 3, parse_u32(val, &r->n_nodes))
	KEY("api", 4, parse_u32(val, &r->api))
	KEY("seq", 5, parse_u64(val, 10, &r->seq))
	KEY("coll", 6, parse_u32(val, &r->coll))
	KEY("bytes", 7, parse_u64(val, 10, &r->n_bytes))
	KEY("pipe", 8, parse_u32(val, &r->pipe))
	KEY("reg", 9, parse_u32(val, &r->reg))
	if (!strcmp(key, "table")) {
		*seen |= 1ull << 10;
		if (sscanf(val, "%dx%d", &r->num_algo, &r->num_proto) != 2 || r->num_algo < 0 ||
		    r->num_proto < 0 || r->num_algo * r->num_proto > NCCLBPF_TRACE_MAX_CELLS)
			return -1;
		return 0;
	}
	if (!strcmp(key, "cost")) {
		*seen |= 1ull << 11;
		if (!(*seen & (1ull << 10)))
			return -1;
		return parse_cost(val, r);
	}
	KEY("algo", 12, parse_i32(val, &r->algo))
	KEY("proto", 13, parse_i32(val, &r->proto))
	KEY("ch", 14, parse_i32(val, &r->channels))
	KEY("nch", 14, parse_i32(val, &r->channels))
	KEY("ver", 15, parse_u64(val, 10, &r->version))
	KEY("in", 16, parse_u64(val, 10, &r->chunk_in))
	KEY("out", 17, parse_u64(val, 10, &r->chunk_out))
	KEY("g", 18, (r->cp = 1, parse_u64(val, 10, &r->gen)))
	KEY("h", 19, (r->cp = 1, parse_u64(val, 16, &r->hash)))
	KEY("rank", 20, parse_u32(val, &r->rank))
	KEY("ev", 21, parse_u64(val, 16, &r->handle))
	KEY("parent", 22, parse_u64(val, 16, &r->parent))
	KEY("t", 23, parse_u64(val, 10, &r->t_ns))
	KEY("func", 24, parse_name(val, r->func))
	KEY("count", 25, parse_u64(val, 10, &r->n_bytes))
	KEY("dtype", 26, parse_name(val, r->dtype))
	KEY("alg", 27, parse_name(val, r->alg))
	KEY("prot", 28, parse_name(val, r->prot))
	KEY("timer", 29, parse_u64(val, 10, &r->timer))
	KEY("pid", 30, parse_u32(val, &r->proxy_pid))
	KEY("peer", 31, parse_i32(val, &r->peer))
	KEY("steps", 32, parse_i32(val, &r->steps))
	KEY("chunk", 33, parse_i32(val, &r->chunk))
	KEY("op", 34, parse_net_op(val, &r->net_op))
	KEY("dur", 35, parse_u64(val, 10, &r->dur_ns))
	KEY("dev", 36, parse_u32(val, &r->dev))
	KEY("tag", 37, parse_i32(val, &r->tag))
	KEY("addr", 38, parse_addr(val, r->peer_addr))
	KEY("port", 39, parse_u32(val, &r->peer_port))
	KEY("ret", 40, parse_ret(val, r))
	(void)v64;
#undef KEY
	return -1;
}

#define B(bit) (1ull << (bit))

int ncclbpf_trace_parse(const char *line, struct ncclbpf_trace_rec *r, char *err, size_t err_len)
{
	memset(r, 0, sizeof(*r));
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '\n' || *line == '#')
		return 0;
	char buf[2048];
	size_t n = strcspn(line, "\n");
	if (n >= sizeof(buf)) {
		snprintf(err, err_len, "line too long");
		return -EINVAL;
	}
	memcpy(buf, line, n);
	buf[n] = 0;
	char *save = NULL;
	char *tok = strtok_r(buf, " \t", &save);
	static const struct {
		const char *name;
		int kind;
		uint64_t need;
	} kinds[] = {
	    {"init", NCCLBPF_TRACE_INIT, 0x1f},
	    {"call", NCCLBPF_TRACE_CALL, 0x1u | 0xfe0u | 0xf000u},
	    {"chunk", NCCLBPF_TRACE_CHUNK, 0x1u | 0xe0u | 0x3f000u},
	    {"fini", NCCLBPF_TRACE_FINI, 0x1},
	    {"pinit", NCCLBPF_TRACE_PINIT, 0x1fu | B(20)},
	    {"coll", NCCLBPF_TRACE_PCOLL,
	     1u | B(21) | B(23) | B(5) | B(24) | B(25) | B(26) | B(14) | B(27) | B(28)},
	    {"kch", NCCLBPF_TRACE_PKCH, 1u | B(21) | B(22) | B(23) | B(14) | B(29)},
	    {"kchend", NCCLBPF_TRACE_PKCH_END, 1u | B(21) | B(23) | B(29)},
	    {"proxy", NCCLBPF_TRACE_PPROXY,
	     1u | B(21) | B(22) | B(23) | B(30) | B(14) | B(31) | B(32) | B(33)},
	    {"stop", NCCLBPF_TRACE_PSTOP, 1u | B(21) | B(23)},
	    {"pfini", NCCLBPF_TRACE_PFINI, 0x1},
	    {"net", NCCLBPF_TRACE_NET,
	     1u | B(34) | B(1) | B(7) | B(23) | B(35) | B(36) | B(31) | B(37) | B(38) | B(39) |
		 B(40)},
	};
	uint64_t need = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(tok, kinds[i].name)) {
			r->kind = kinds[i].kind;
			need = kinds[i].need;
		}
	if (!r->kind) {
		snprintf(err, err_len, "unknown record '%.32s'", tok);
		return -EINVAL;
	}
	uint64_t seen = 0;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			snprintf(err, err_len, "expected key=value, got '%.40s'", tok);
			return -EINVAL;
		}
		*eq = 0;
		if (parse_field(r, tok, eq + 1, &seen)) {
			snprintf(err, err_len, "bad field '%.20s=%.40s'", tok, eq + 1);
			return -EINVAL;
		}
	}
	if ((seen & need) != need) {
		snprintf(err, err_len,
			 "record lacks fields (have 0x%" PRIx64 ", need 0x%" PRIx64 ")", seen,
			 need);
		return -EINVAL;
	}
	return 1;
}
