/* Client side of live inspection: process records, connections, answers (inspect_client.h). */
#define _GNU_SOURCE
#include "inspect_client.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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
	const char *v = getenv("NCCLBPF_CP_DIR");
	if (v && *v)
		snprintf(buf, len, "%s", v);
	else
		snprintf(buf, len, "/dev/shm/ncclbpf-%u", (unsigned)geteuid());
	return buf;
}

const char *insp_hostname(void)
{
	/* Cleaned as the runtime cleans it (inspect_server.c), so the two compare equal. */
	static char host[65];
	if (host[0])
		return host;
	char raw[256] = "";
	if (gethostname(raw, sizeof(raw) - 1) != 0 || !raw[0])
		snprintf(raw, sizeof(raw), "localhost");
	size_t i = 0;
	for (; raw[i] && i + 1 < sizeof(host); i++) {
		char c = raw[i];
		host[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
				  c == ':' || c == '@'
			      ? c
			      : '_';
	}
	host[i] = 0;
	return host;
}

static int read_proc_record(const char *path, struct insp_proc *p)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	memset(p, 0, sizeof(*p));
	snprintf(p->rec_path, sizeof(p->rec_path), "%s", path);
	char line[4400];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
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
			p->uid = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(k, "start_ns"))
			p->start_ns = strtoull(v, NULL, 10);
		else if (!strcmp(k, "host"))
			snprintf(p->host, sizeof(p->host), "%s", v);
		else if (!strcmp(k, "job"))
			snprintf(p->job, sizeof(p->job), "%s", v);
		else if (!strcmp(k, "rank"))
			snprintf(p->rank, sizeof(p->rank), "%s", v);
		else if (!strcmp(k, "bundle"))
			snprintf(p->bundle, sizeof(p->bundle), "%s", v);
		else if (!strcmp(k, "sock"))
			snprintf(p->sock, sizeof(p->sock), "%s", v);
	}
	fclose(f);
	/* path = <dir>/procs/<name> */
	snprintf(p->dir, sizeof(p->dir), "%s", path);
	for (int cut = 0; cut < 2; cut++) {
		char *slash = strrchr(p->dir, '/');
		if (slash)
			*slash = 0;
	}
	return p->pid > 0 && p->sock[0] ? 0 : -1;
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

static int scan_procs(const char *procs, struct insp_proc **out, int *n, int *cap)
{
	DIR *d = opendir(procs);
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_record_name(e->d_name))
			continue;
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", procs, e->d_name);
		struct insp_proc p;
		if (read_proc_record(path, &p) != 0)
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

int insp_list(const char *dir, struct insp_proc **out)
{
	*out = NULL;
	int n = 0, cap = 0;
	char path[4200];
	snprintf(path, sizeof(path), "%s/procs", dir);
	int found = scan_procs(path, out, &n, &cap) == 0;
	/* Job directories (ncclbpf run: <dir>/<job>/procs). */
	DIR *d = opendir(dir);
	if (d) {
		found = 1;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "procs"))
				continue;
			snprintf(path, sizeof(path), "%s/%s/procs", dir, e->d_name);
			scan_procs(path, out, &n, &cap);
		}
		closedir(d);
	}
	if (!found)
		return -1;
	if (n > 1)
		qsort(*out, (size_t)n, sizeof(**out), cmp_proc);
	return n;
}

int insp_stale(const struct insp_proc *p)
{
	return !strcmp(p->host, insp_hostname()) && kill(p->pid, 0) != 0 && errno == ESRCH;
}

int insp_find(const char *dir, int pid, struct insp_proc *out, const char *prefix)
{
	struct insp_proc *v;
	int n = insp_list(dir, &v);
	if (n < 0) {
		fprintf(stderr, "%s: no process registered under %s (%s)\n", prefix, dir,
			strerror(errno));
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
	struct timeval tv = {.tv_sec = 10};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	int fd2 = dup(fd);
	FILE *in = fd2 >= 0 ? fdopen(fd2, "r") : NULL;
	if (!in) {
		if (fd2 >= 0)
			close(fd2);
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	c->fd = fd;
	c->in = in;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, in);
	int ret = 0;
	if (n > 0 && !strncmp(line, "hello ncclbpf-inspect ", 22)) {
		free(line);
		return 0;
	}
	if (n > 0 && !strncmp(line, "error ", 6)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(c->msg, sizeof(c->msg), "%s", line + 6);
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
	if (c->in)
		fclose(c->in);
	if (c->fd >= 0)
		close(c->fd);
	c->in = NULL;
	c->fd = -1;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		int hi, lo;
		if (*r == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0) {
			*w++ = (char)(hi * 16 + lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* Splits a record line in place. Returns 0 or -1 (out of memory). */
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
	if (!r->word)
		r->word = "";
	for (char *t = strtok_r(NULL, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			continue;
		*eq = 0;
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
	snprintf(err, err_len, "connection closed");
	while ((n = getline(&line, &cap, (FILE *)c->in)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (!strcmp(line, "ok")) {
			ret = 0;
			err[0] = 0;
			break;
		}
		if (!strncmp(line, "error", 5) && (line[5] == ' ' || !line[5])) {
			snprintf(err, err_len, "%s", line[5] ? line + 6 : "error");
			break;
		}
		struct insp_rec r = {0};
		if (parse_rec(line, &r) == 0 && cb)
			cb(&r, arg);
		free(r.key);
		free(r.val);
	}
	if (ret && n < 0 && ferror((FILE *)c->in))
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
