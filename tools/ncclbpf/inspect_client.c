/* Client side of live inspection: process records, connections, answers (inspect_client.h). */
#define _GNU_SOURCE
#include "inspect_client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ncclbpf/envvars.h"
#include "ncclbpf/hex.h"
#include "ncclbpf/proc_registry.h"
#include "ncclbpf/trusted_path.h"

const char *insp_get(const struct insp_rec *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NULL;
}

uint64_t insp_getu(const struct insp_rec *r, const char *key)
{
	const char *v = insp_get(r, key);
	return v ? strtoull(v, NULL, 10) : 0;
}

const char *insp_default_dir(char *buf, size_t len)
{
	const char *v = ncclbpf_env_str("NCCLBPF_CP_DIR");
	if (v)
		snprintf(buf, len, "%s", v);
	else
		ncclbpf_rt_user_dir(buf, len);
	return buf;
}

const char *insp_hostname(void)
{
	static char host[65]; /* as long as the runtime's (struct rt_ident) */
	if (!host[0])
		ncclbpf_rt_host_name(host, sizeof(host));
	return host;
}

/* Records, answers and waits are bounded: a record file is small, an answer line at most
 * MAX_LINE, and a request gets IDLE_MS between two reads and TOTAL_MS in all. */
#define MAX_RECORD 16384
#define MAX_LINE   (1u << 20)
#define IDLE_MS	   10000
#define TOTAL_MS   60000

/* A process record <procs>/<host>.<pid>, read from the trusted directory procs_fd without
 * blocking. Its socket is always <record>.sock beside it (where the server creates it); a
 * record naming any other socket, or claiming another uid than its file's owner, is not one
 * the plugin wrote and is skipped. */
static int read_proc_record(int procs_fd, const char *procs, const char *name, struct insp_proc *p)
{
	int fd = ncclbpf_path_open_entry(procs_fd, name, NULL, 0);
	if (fd < 0)
		return -1;
	struct stat st;
	char buf[MAX_RECORD + 1];
	ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, MAX_RECORD) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	memset(p, 0, sizeof(*p));
	if (snprintf(p->rec_path, sizeof(p->rec_path), "%s/%s", procs, name) >=
		(int)sizeof(p->rec_path) - 5 ||
	    snprintf(p->sock, sizeof(p->sock), "%s.sock", p->rec_path) >= (int)sizeof(p->sock))
		return -1;
	char claimed_sock[sizeof(p->sock)] = "";
	long uid = -1;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = 0;
		const char *k = line, *v = eq + 1;
		if (!strcmp(k, "pid"))
			p->pid = atoi(v);
		else if (!strcmp(k, "cp"))
			p->cp = atoi(v);
		else if (!strcmp(k, "uid"))
			uid = strtol(v, NULL, 10);
		else if (!strcmp(k, "start_ns"))
			p->start_ns = strtoull(v, NULL, 10);
		else if (!strcmp(k, "proc_start"))
			p->proc_start = strtoull(v, NULL, 10);
		else if (!strcmp(k, "host"))
			snprintf(p->host, sizeof(p->host), "%s", v);
		else if (!strcmp(k, "job"))
			snprintf(p->job, sizeof(p->job), "%s", v);
		else if (!strcmp(k, "rank"))
			snprintf(p->rank, sizeof(p->rank), "%s", v);
		else if (!strcmp(k, "bundle"))
			snprintf(p->bundle, sizeof(p->bundle), "%s", v);
		else if (!strcmp(k, "sock"))
			snprintf(claimed_sock, sizeof(claimed_sock), "%s", v);
	}
	p->uid = (unsigned)st.st_uid;
	/* procs = <dir>/procs */
	snprintf(p->dir, sizeof(p->dir), "%s", procs);
	char *slash = strrchr(p->dir, '/');
	if (slash)
		*slash = 0;
	return p->pid > 0 && p->host[0] && uid == (long)st.st_uid && !strcmp(claimed_sock, p->sock)
		   ? 0
		   : -1;
}

/* <host>.<pid>: a name whose part after the last '.' is all digits. */
static int is_record_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (!dot || dot == name || !dot[1])
		return 0;
	for (const char *s = dot + 1; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The records of one procs directory, which must be trusted (else skipped: -1, why). */
static int scan_procs(const char *procs, struct insp_proc **out, int *n, int *cap, char *why,
		      size_t why_len)
{
	int fd = ncclbpf_path_open_dir(procs, 0, why, why_len);
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_record_name(e->d_name))
			continue;
		struct insp_proc p;
		if (read_proc_record(dirfd(d), procs, e->d_name, &p) != 0)
			continue;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			struct insp_proc *grown = realloc(*out, (size_t)*cap * sizeof(**out));
			if (!grown)
				break;
			*out = grown;
		}
		(*out)[(*n)++] = p;
	}
	closedir(d);
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct insp_proc *x = a, *y = b;
	int c = strcmp(x->job, y->job);
	if (c)
		return c;
	c = strcmp(x->host, y->host);
	if (c)
		return c;
	long rx = strtol(x->rank, NULL, 10), ry = strtol(y->rank, NULL, 10);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->pid - y->pid;
}

int insp_list(const char *dir, struct insp_proc **out, char *why, size_t why_len)
{
	*out = NULL;
	int n = 0, cap = 0;
	/* The directory itself first: the plugin registers only in a trusted one, so records
	 * anywhere else are not its own (and the CLI must not act on what they name). */
	int dfd = ncclbpf_path_open_dir(dir, 0, why, why_len);
	if (dfd < 0) {
		errno = -dfd;
		return -1;
	}
	char path[4200], skip[512];
	snprintf(path, sizeof(path), "%s/procs", dir);
	scan_procs(path, out, &n, &cap, skip, sizeof(skip));
	/* Job directories (ncclbpf run: <dir>/<job>/procs); each checked the same way. */
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
	} else {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "procs"))
				continue;
			snprintf(path, sizeof(path), "%s/%s/procs", dir, e->d_name);
			scan_procs(path, out, &n, &cap, skip, sizeof(skip));
		}
		closedir(d);
	}
	if (n > 1)
		qsort(*out, (size_t)n, sizeof(**out), cmp_proc);
	return n;
}

int insp_stale(const struct insp_proc *p)
{
	return !strcmp(p->host, insp_hostname()) && ncclbpf_rt_proc_gone(p->pid, p->proc_start);
}

int insp_remove_stale(const struct insp_proc *p)
{
	/* Only the record and the socket beside it, in its trusted procs directory, and only
	 * when they are ours: never a path a record names. */
	char procs[sizeof(p->rec_path)], why[512];
	snprintf(procs, sizeof(procs), "%s", p->rec_path);
	char *slash = strrchr(procs, '/');
	if (!slash)
		return -1;
	*slash = 0;
	const char *name = slash + 1;
	int fd = ncclbpf_path_open_dir(procs, 0, why, sizeof(why));
	if (fd < 0)
		return -1;
	/* Read again just before: the live process that now has the pid may have registered
	 * since (its record replaces the stale one, under the same name). */
	struct insp_proc now;
	if (read_proc_record(fd, procs, name, &now) == 0 &&
	    (now.proc_start != p->proc_start || now.start_ns != p->start_ns)) {
		close(fd);
		return -1;
	}
	char sock[NAME_MAX + 8];
	snprintf(sock, sizeof(sock), "%s.sock", name);
	struct stat st;
	int e = 0;
	if (fstatat(fd, sock, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode))
		e = ncclbpf_path_remove_at(fd, sock, why, sizeof(why));
	if (!e && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		e = ncclbpf_path_remove_at(fd, name, why, sizeof(why));
	close(fd);
	return e ? -1 : 0;
}

int insp_find(const char *dir, int pid, struct insp_proc *out, const char *prefix)
{
	struct insp_proc *v;
	char why[1024];
	int n = insp_list(dir, &v, why, sizeof(why));
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", prefix, why);
		return -1;
	}
	int found = 0;
	for (int i = 0; i < n && !found; i++)
		if (v[i].pid == pid && !strcmp(v[i].host, insp_hostname()) && !insp_stale(&v[i])) {
			*out = v[i];
			found = 1;
		}
	free(v);
	if (!found)
		fprintf(stderr,
			"%s: process %d on %s is not registered under %s (not running the plugin, "
			"NCCLBPF_INSPECT=0, or another --dir)\n",
			prefix, pid, insp_hostname(), dir);
	return found ? 0 : -1;
}

int insp_attach(const char *dir, int pid, struct insp_proc *p, struct insp_conn *c,
		const char *prefix)
{
	char dbuf[4096];
	if (insp_find(dir ? dir : insp_default_dir(dbuf, sizeof(dbuf)), pid, p, prefix) != 0)
		return -1;
	if (insp_connect(p, c) != 0) {
		fprintf(stderr, "%s: process %d: %s\n", prefix, pid,
			c->msg[0] ? c->msg : strerror(errno));
		return -1;
	}
	return 0;
}

/* What a connection has read and not handed out yet. */
struct reader {
	size_t len, off;
	char buf[65536];
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The next line (without its newline) into *line (grown as needed, at most MAX_LINE): its
 * length, or -1 with errno (ETIMEDOUT: nothing for IDLE_MS or past deadline_ms; E2BIG: line
 * too long; 0 (EOF): connection closed). */
static ssize_t read_line(struct insp_conn *c, char **line, size_t *cap, uint64_t deadline_ms)
{
	struct reader *r = c->in;
	size_t n = 0;
	for (;;) {
		char *nl = memchr(r->buf + r->off, '\n', r->len - r->off);
		size_t take = nl ? (size_t)(nl - (r->buf + r->off)) : r->len - r->off;
		if (n + take + 1 > MAX_LINE) {
			errno = E2BIG;
			return -1;
		}
		if (n + take + 1 > *cap) {
			size_t ncap = (n + take + 1) * 2 > MAX_LINE ? MAX_LINE : (n + take + 1) * 2;
			char *g = realloc(*line, ncap);
			if (!g) {
				errno = ENOMEM;
				return -1;
			}
			*line = g;
			*cap = ncap;
		}
		memcpy(*line + n, r->buf + r->off, take);
		n += take;
		(*line)[n] = 0;
		r->off += take + (nl ? 1 : 0);
		if (nl)
			return (ssize_t)n;
		r->off = r->len = 0;
		uint64_t now = mono_ms();
		if (now >= deadline_ms) {
			errno = ETIMEDOUT;
			return -1;
		}
		uint64_t wait = deadline_ms - now < IDLE_MS ? deadline_ms - now : IDLE_MS;
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		int k = poll(&pfd, 1, (int)wait);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			errno = k == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		ssize_t got = recv(c->fd, r->buf, sizeof(r->buf), 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			errno = got == 0 ? 0 : errno;
			return -1;
		}
		r->len = (size_t)got;
	}
}

int insp_connect(const struct insp_proc *p, struct insp_conn *c)
{
	c->fd = -1;
	c->in = NULL;
	c->msg[0] = 0;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(p->sock) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, p->sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {.tv_sec = IDLE_MS / 1000};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	/* The server must run as the uid that owns its record (a socket bound there by anyone
	 * else would answer in its name). */
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != p->uid) {
		snprintf(c->msg, sizeof(c->msg), "socket served by uid %u, record of uid %u",
			 (unsigned)cr.uid, p->uid);
		close(fd);
		errno = EACCES;
		return -1;
	}
	c->in = calloc(1, sizeof(struct reader));
	if (!c->in) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	c->fd = fd;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = read_line(c, &line, &cap, mono_ms() + IDLE_MS);
	int ret = 0;
	if (n > 0 && !strncmp(line, "hello ncclbpf-inspect ", 22)) {
		free(line);
		return 0;
	}
	if (n > 0 && !strncmp(line, "error ", 6)) {
		snprintf(c->msg, sizeof(c->msg), "%.200s", line + 6);
		ret = EACCES;
	} else {
		snprintf(c->msg, sizeof(c->msg), "no greeting from the inspection server");
		ret = EPROTO;
	}
	free(line);
	insp_close(c);
	errno = ret;
	return -1;
}

void insp_close(struct insp_conn *c)
{
	free(c->in);
	if (c->fd >= 0)
		close(c->fd);
	c->in = NULL;
	c->fd = -1;
}

/* What would reach the terminal as a control character becomes '?'. */
static char shown(unsigned char ch)
{
	return ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
}

/* Percent-decoding, then shown(). */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		int hi, lo;
		unsigned char ch = (unsigned char)*r;
		if (*r == '%' && (hi = ncclbpf_hex_digit(r[1])) >= 0 &&
		    (lo = ncclbpf_hex_digit(r[2])) >= 0) {
			ch = (unsigned char)(hi * 16 + lo);
			r += 2;
		}
		*w++ = shown(ch);
	}
	*w = 0;
}

static int is_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* The keys a record of each word always carries (the server's inspect_cmds.c and
 * inspect_bundle.c), where the commands print them without a fallback. A record without
 * them did not come from the plugin. */
static const struct {
	const char *word;
	const char *keys[10];
} required[] = {
    {"map",
     {"name", "type", "kind", "key_size", "value_size", "max_entries", "entries", "cpus", "class"}},
    {"elem", {"key"}},
};

static const char *missing_key(const struct insp_rec *r)
{
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (strcmp(r->word, required[i].word))
			continue;
		for (int k = 0; k < 10 && required[i].keys[k]; k++)
			if (!insp_get(r, required[i].keys[k]))
				return required[i].keys[k];
	}
	return NULL;
}

/* Splits a record line in place: 0, -1 (out of memory), or -2 (not a record line). */
static int parse_rec(char *line, struct insp_rec *r)
{
	int cap = 8;
	r->n = 0;
	r->key = malloc((size_t)cap * sizeof(char *));
	r->val = malloc((size_t)cap * sizeof(char *));
	if (!r->key || !r->val)
		return -1;
	char *save = NULL;
	r->word = strtok_r(line, " ", &save);
	if (!r->word || !is_name(r->word))
		return -2;
	for (char *t = strtok_r(NULL, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			return -2;
		*eq = 0;
		if (!is_name(t))
			return -2;
		if (r->n == cap) {
			cap *= 2;
			char **k = realloc(r->key, (size_t)cap * sizeof(char *));
			if (k)
				r->key = k;
			char **v = realloc(r->val, (size_t)cap * sizeof(char *));
			if (v)
				r->val = v;
			if (!k || !v)
				return -1;
		}
		unescape(eq + 1);
		r->key[r->n] = t;
		r->val[r->n] = eq + 1;
		r->n++;
	}
	return 0;
}

int insp_request(struct insp_conn *c, const char *req,
		 void (*cb)(const struct insp_rec *r, void *arg), void *arg, char *err,
		 size_t err_len)
{
	char q[8400];
	int len = snprintf(q, sizeof(q), "%s\n", req);
	if (len <= 0 || len >= (int)sizeof(q)) {
		snprintf(err, err_len, "request too long");
		return -1;
	}
	if (send(c->fd, q, (size_t)len, MSG_NOSIGNAL) != len) {
		snprintf(err, err_len, "cannot send: %s", strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = -1;
	uint64_t deadline = mono_ms() + TOTAL_MS;
	snprintf(err, err_len, "connection closed");
	while ((n = read_line(c, &line, &cap, deadline)) >= 0) {
		if (!strcmp(line, "ok")) {
			ret = 0;
			err[0] = 0;
			break;
		}
		if (!strncmp(line, "error", 5) && (line[5] == ' ' || !line[5])) {
			snprintf(err, err_len, "%s", line[5] ? line + 6 : "error");
			for (char *e = err; *e; e++)
				*e = shown((unsigned char)*e);
			break;
		}
		struct insp_rec r = {0};
		int pe = parse_rec(line, &r);
		const char *miss = pe ? NULL : missing_key(&r);
		if (pe == -2 || miss) {
			snprintf(err, err_len,
				 "malformed answer from the inspection server (%s%s%s)",
				 miss ? r.word : "not a record line",
				 miss ? " record without " : "", miss ? miss : "");
			free(r.key);
			free(r.val);
			break;
		}
		if (pe == 0 && cb)
			cb(&r, arg);
		free(r.key);
		free(r.val);
	}
	if (ret && n < 0 && errno)
		snprintf(err, err_len, "no answer: %s", strerror(errno));
	free(line);
	return ret;
}

int insp_parse_dir(int argc, char **argv, int *i, const char **dir)
{
	if (!strcmp(argv[*i], "--dir")) {
		if (*i + 1 >= argc)
			return -1;
		*dir = argv[++*i];
		return 1;
	}
	if (!strncmp(argv[*i], "--dir=", 6)) {
		*dir = argv[*i] + 6;
		return 1;
	}
	return 0;
}

int insp_parse_pid(const char *text)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	return !errno && end != text && !*end && v > 0 && v <= INT_MAX ? (int)v : -1;
}

static void keep(const struct insp_rec *r, void *arg)
{
	struct insp_recs *rs = arg;
	if (rs->n == rs->cap) {
		int cap = rs->cap ? 2 * rs->cap : 32;
		struct insp_rec *g = realloc(rs->r, (size_t)cap * sizeof(*g));
		if (!g)
			return;
		rs->r = g;
		rs->cap = cap;
	}
	struct insp_rec *d = &rs->r[rs->n];
	d->word = strdup(r->word);
	d->n = r->n;
	d->key = calloc((size_t)r->n + 1, sizeof(char *));
	d->val = calloc((size_t)r->n + 1, sizeof(char *));
	if (!d->word || !d->key || !d->val) {
		free((char *)d->word);
		free(d->key);
		free(d->val);
		return;
	}
	for (int i = 0; i < r->n; i++) {
		d->key[i] = strdup(r->key[i]);
		d->val[i] = strdup(r->val[i]);
		if (!d->key[i] || !d->val[i]) {
			d->n = i; /* what was copied; the rest is dropped */
			free(d->key[i]);
			free(d->val[i]);
			break;
		}
	}
	rs->n++;
}

int insp_collect(struct insp_conn *c, const char *req, struct insp_recs *out, char *err,
		 size_t err_len)
{
	memset(out, 0, sizeof(*out));
	return insp_request(c, req, keep, out, err, err_len);
}

void insp_recs_free(struct insp_recs *rs)
{
	for (int i = 0; i < rs->n; i++) {
		for (int k = 0; k < rs->r[i].n; k++) {
			free(rs->r[i].key[k]);
			free(rs->r[i].val[k]);
		}
		free(rs->r[i].key);
		free(rs->r[i].val);
		free((char *)rs->r[i].word);
	}
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}
