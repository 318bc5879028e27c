/* The control plane's directory medium (cp_dir.h). */
#include "cp_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ncclbpf/control.h"
#include "ncclbpf/trusted_path.h"

int cp_mkdirs(const char *path)
{
	int fd = ncclbpf_path_open_dir(path, NCCLBPF_PATH_CREATE, NULL, 0);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* A temp name unique across processes and threads of all hosts sharing the directory. */
static int write_tmp(const char *dir, const char *name, const void *buf, size_t len, char *tmp,
		     size_t tmplen)
{
	static _Atomic unsigned long counter;
	snprintf(tmp, tmplen, "%s/.tmp.%s.%s.%d.%lu", dir, name, cp_hostname(), (int)getpid(),
		 ++counter);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	const char *p = buf;
	size_t left = len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;
			close(fd);
			unlink(tmp);
			return e;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) != 0) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
}

/* Writes buf to a temp name and puts it in place as dir/name: rename() replaces what is there;
 * link() fails with EEXIST when the name exists, so of several writers exactly one wins. */
static int put_in_place(const char *dir, const char *name, const void *buf, size_t len, int replace)
{
	char tmp[CP_PATH + 256], dst[CP_PATH + 256];
	int e = write_tmp(dir, name, buf, len, tmp, sizeof(tmp));
	if (e)
		return e;
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	if ((replace ? rename(tmp, dst) : link(tmp, dst)) != 0)
		e = -errno;
	if (e || !replace)
		unlink(tmp);
	return e;
}

int cp_write(const char *dir, const char *name, const void *buf, size_t len)
{
	return put_in_place(dir, name, buf, len, 1);
}

int cp_create_once(const char *dir, const char *name, const void *buf, size_t len)
{
	return put_in_place(dir, name, buf, len, 0);
}

int cp_read(const char *path, char **out, size_t *len, size_t max)
{
	*out = NULL;
	if (len)
		*len = 0;
	int fd = ncclbpf_path_open_entry(AT_FDCWD, path, NULL, 0);
	if (fd < 0)
		return fd;
	void *buf;
	size_t n;
	int e = ncclbpf_path_read_fd(fd, path, max ? max - 1 : 0, &buf, &n, NULL, 0);
	close(fd);
	if (e)
		return e;
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int cp_rmtree(const char *path)
{
	char leaf[NAME_MAX + 1];
	int dfd = ncclbpf_path_open_parent(path, leaf, sizeof(leaf), NULL, 0);
	if (dfd < 0)
		return dfd;
	int e = ncclbpf_path_remove_at(dfd, leaf, NULL, 0);
	close(dfd);
	return e;
}

int cp_kv_nth(const char *rec, const char *key, unsigned n, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	for (const char *p = rec; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		if (ll > kl && !strncmp(p, key, kl) && p[kl] == '=' && n-- == 0) {
			size_t vl = ll - kl - 1;
			if (vl >= outlen)
				return -E2BIG;
			memcpy(out, p + kl + 1, vl);
			out[vl] = 0;
			return 0;
		}
		p = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int cp_kv(const char *rec, const char *key, char *out, size_t outlen)
{
	return cp_kv_nth(rec, key, 0, out, outlen);
}

int cp_kv_u64(const char *rec, const char *key, uint64_t *v)
{
	char buf[32], *end;
	if (cp_kv(rec, key, buf, sizeof(buf)))
		return -ENOENT;
	errno = 0;
	unsigned long long x = strtoull(buf, &end, 0);
	if (errno || end == buf || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cp_list(const char *dir, char ***names, size_t *n)
{
	*names = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	size_t cap = 0;
	struct dirent *de;
	int e = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nn = realloc(*names, cap * sizeof(*nn));
			if (!nn) {
				e = -ENOMEM;
				break;
			}
			*names = nn;
		}
		if (!((*names)[*n] = strdup(de->d_name))) {
			e = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	if (e) {
		cp_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return e;
	}
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_names);
	return 0;
}

void cp_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static char host_name[256];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

/* Hostnames name members and temp files; dots would make <host>.<pid> ambiguous, so the short
 * name is used. */
static void host_init(void)
{
	if (gethostname(host_name, sizeof(host_name) - 1) != 0 || !host_name[0])
		snprintf(host_name, sizeof(host_name), "localhost");
	host_name[sizeof(host_name) - 1] = 0;
	char *dot = strchr(host_name, '.');
	if (dot)
		*dot = 0;
	for (char *p = host_name; *p; p++)
		if (*p == '/')
			*p = '_';
}

const char *cp_hostname(void)
{
	pthread_once(&host_once, host_init);
	return host_name;
}

uint64_t cp_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cp_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
