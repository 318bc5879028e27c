/* Trusted paths (ncclbpf/trusted_path.h): resolving a path one checked directory at a time,
 * opening files without blocking, removing only what is ours. */
#define _GNU_SOURCE
#include "ncclbpf/trusted_path.h"

#include "ebpf/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40 /* as the kernel's own limit */
#define MAX_DEPTH 16 /* directory levels a removal descends */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* Levels are walked with O_PATH: passing through needs search permission only, as for the
 * kernel's own lookup (a root-owned 0711 level stays passable). */
#define WALK_FLAGS   (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define APPEND_FLAGS (O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
#define AT_LEN	     (PATH_MAX + NAME_MAX + 2) /* a path shown in messages */

/* Paths in messages may be cut short; every buffer a path is resolved in is checked. */
#ifndef __clang__ /* GCC's warning; clang has none of that name */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static int fail(char *why, size_t n, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t n, int err, const char *fmt, ...)
{
	if (why && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return -err;
}

static const char *writers(mode_t m)
{
	if ((m & S_IWGRP) && (m & S_IWOTH))
		return "its group and others";
	return (m & S_IWGRP) ? "its group" : "others";
}

/* Where a walk stands: a checked directory, how it was named, what is left to resolve. */
/* walk(): a missing directory level CREATE would make ends the walk (w->missing) instead of
 * being made: what ncclbpf_path_probe_dir checks. Not a public flag. */
#define WALK_PROBE 0x100u

struct walk {
	int fd;
	int missing; /* WALK_PROBE: a level is not there */
	int shared;  /* a root-owned sticky directory others may write (/tmp, /dev/shm) */
	int links;   /* symbolic links followed so far */
	char at[AT_LEN];
	char rest[2 * PATH_MAX];
};

/* at + "/" + name, for messages (truncated if it must be). */
static const char *joined(const struct walk *w, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", w->at, strcmp(w->at, "/") ? "/" : "", name);
	return buf;
}

/* The directory just reached. last: the one the caller will look names up in, which must not
 * be shared. */
static int check_dir(struct walk *w, int last, unsigned flags, char *why, size_t n)
{
	struct stat st;
	if (fstat(w->fd, &st) != 0)
		return fail(why, n, errno, "%s: %s", w->at, strerror(errno));
	unsigned me = (unsigned)geteuid();
	if (st.st_uid != me && st.st_uid != 0)
		return fail(why, n, EPERM, "%s is owned by uid %u, not by uid %u or root", w->at,
			    (unsigned)st.st_uid, me);
	w->shared = 0;
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		if (last || !(st.st_mode & S_ISVTX) || st.st_uid != 0)
			return fail(why, n, EPERM, "%s is writable by %s (mode %04o)", w->at,
				    writers(st.st_mode), (unsigned)(st.st_mode & 07777));
		w->shared = 1;
	}
	if (last && (flags & NCCLBPF_PATH_PRIVATE) && (st.st_mode & 077))
		return fail(why, n, EPERM,
			    "%s is open to its group or others (mode %04o, want 0700)", w->at,
			    (unsigned)(st.st_mode & 07777));
	return 0;
}

static int start_at_root(struct walk *w, char *why, size_t n)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = open("/", WALK_FLAGS);
	snprintf(w->at, sizeof(w->at), "/");
	if (w->fd < 0)
		return fail(why, n, errno, "/: %s", strerror(errno));
	return check_dir(w, 0, 0, why, n);
}

/* The next component of w->rest into comp (1), or 0 when none is left; *more: others follow. */
static int next_comp(struct walk *w, char *comp, size_t len, int *more)
{
	const char *s = w->rest;
	while (*s == '/')
		s++;
	if (!*s)
		return 0;
	size_t k = strcspn(s, "/");
	if (k >= len)
		return -ENAMETOOLONG;
	memcpy(comp, s, k);
	comp[k] = 0;
	s += k;
	while (*s == '/')
		s++;
	*more = *s != 0;
	memmove(w->rest, s, strlen(s) + 1);
	return 1;
}

/* comp in w->fd is a symbolic link: its target replaces it in what is left to resolve. Only a
 * directory no one else can write may hold a link we follow. */
static int follow_link(struct walk *w, const char *comp, char *why, size_t n)
{
	char name[AT_LEN], target[PATH_MAX], rest[sizeof(w->rest)];
	joined(w, comp, name, sizeof(name));
	if (w->shared)
		return fail(why, n, EPERM, "%s is a symbolic link in a directory others can write",
			    name);
	if (++w->links > MAX_LINKS)
		return fail(why, n, ELOOP, "%s: too many levels of symbolic links", name);
	ssize_t k = readlinkat(w->fd, comp, target, sizeof(target) - 1);
	if (k <= 0)
		return fail(why, n, k < 0 ? errno : ENOENT, "%s: unreadable symbolic link", name);
	target[k] = 0;
	if (snprintf(rest, sizeof(rest), "%s/%s", target, w->rest) >= (int)sizeof(rest))
		return fail(why, n, ENAMETOOLONG, "%s: path too long", name);
	memcpy(w->rest, rest, sizeof(rest));
	return target[0] == '/' ? start_at_root(w, why, n) : 0;
}

static int is_link(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* Resolves path into w, every directory level opened and checked. leaf != NULL: stop before
 * the last component and copy it there (follow_leaf: a link there is followed, under the same
 * rule as any other). Else path names the directory to open (checked as the last one). */
static int walk(struct walk *w, const char *path, unsigned flags, char *leaf, size_t leaf_len,
		int follow_leaf, char *why, size_t n)
{
	w->fd = -1;
	w->links = 0;
	w->missing = 0;
	if (!path || !*path)
		return fail(why, n, EINVAL, "empty path");
	int len;
	if (path[0] == '/') {
		len = snprintf(w->rest, sizeof(w->rest), "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return fail(why, n, errno, "%s: current directory: %s", path,
				    strerror(errno));
		len = snprintf(w->rest, sizeof(w->rest), "%s/%s", cwd, path);
	}
	if (len >= (int)sizeof(w->rest))
		return fail(why, n, ENAMETOOLONG, "%.200s...: path too long", path);
	int e = start_at_root(w, why, n);
	char comp[NAME_MAX + 1], name[AT_LEN];
	while (!e) {
		int more = 0, got = next_comp(w, comp, sizeof(comp), &more);
		if (got < 0) {
			e = fail(why, n, ENAMETOOLONG, "%s: a name in it is too long", path);
			break;
		}
		if (!got) {
			if (leaf)
				e = fail(why, n, EISDIR, "%s names a directory, not a file", path);
			break;
		}
		if (leaf && !more) {
			if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
				e = fail(why, n, EISDIR, "%s names a directory, not a file", path);
			} else if (follow_leaf && !w->shared && is_link(w->fd, comp)) {
				e = follow_link(w, comp, why, n);
				continue;
			} else if (snprintf(leaf, leaf_len, "%s", comp) >= (int)leaf_len) {
				e = fail(why, n, ENAMETOOLONG, "%s: name too long", path);
			}
			break;
		}
		if (!strcmp(comp, "."))
			continue;
		joined(w, comp, name, sizeof(name));
		int fd = openat(w->fd, comp, WALK_FLAGS);
		if (fd < 0 && errno == ENOENT && (flags & WALK_PROBE)) {
			w->missing = 1; /* created from here on, each level ours and 0700 */
			break;
		}
		if (fd < 0 && errno == ENOENT && (flags & NCCLBPF_PATH_CREATE)) {
			if (mkdirat(w->fd, comp, 0700) != 0 && errno != EEXIST) {
				e = fail(why, n, errno, "cannot create %s: %s", name,
					 strerror(errno));
				break;
			}
			fd = openat(w->fd, comp, WALK_FLAGS);
		}
		if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			if (is_link(w->fd, comp))
				e = follow_link(w, comp, why, n);
			else
				e = fail(why, n, ENOTDIR, "%s is not a directory", name);
			continue;
		}
		if (fd < 0) {
			e = fail(why, n, errno, "%s: %s", name, strerror(errno));
			break;
		}
		close(w->fd);
		w->fd = fd;
		snprintf(w->at, sizeof(w->at), "%s", name);
		e = check_dir(w, 0, flags, why, n);
	}
	if (!e && !leaf && !w->missing)
		e = check_dir(w, 1, flags, why, n);
	if (e && w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	return e;
}

int ncclbpf_path_open_dir(const char *path, unsigned flags, char *why, size_t why_len)
{
	struct walk w;
	int e = walk(&w, path, flags, NULL, 0, 0, why, why_len);
	if (e)
		return e;
	/* readable, for listing, where it is (the O_PATH descriptor serves as a dirfd anyway) */
	int fd = openat(w.fd, ".", DIR_FLAGS);
	if (fd < 0)
		return w.fd;
	close(w.fd);
	return fd;
}

int ncclbpf_path_probe_dir(const char *path, unsigned flags, int *missing, char *why,
			   size_t why_len)
{
	struct walk w;
	*missing = 0;
	int e = walk(&w, path, flags | WALK_PROBE, NULL, 0, 0, why, why_len);
	if (e)
		return e;
	close(w.fd);
	*missing = w.missing;
	if (w.missing && !(flags & NCCLBPF_PATH_CREATE))
		return fail(why, why_len, ENOENT, "%s: %s", path, strerror(ENOENT));
	return 0;
}

int ncclbpf_path_open_parent(const char *path, char *leaf, size_t leaf_len, char *why,
			     size_t why_len)
{
	struct walk w;
	int e = walk(&w, path, 0, leaf, leaf_len, 0, why, why_len);
	return e ? e : w.fd;
}

/* An open() of name in a checked directory failed: why, precisely. */
static int open_failed(int err, const char *path, char *why, size_t n)
{
	if (err == ELOOP)
		return fail(why, n, ELOOP, "%s is a symbolic link (not followed here)", path);
	if (err == ENXIO) /* O_NONBLOCK write-open of a FIFO nobody reads */
		return fail(why, n, ENXIO, "%s is a FIFO, not a regular file", path);
	return fail(why, n, err, "%s: %s", path, strerror(err));
}

/* fd must be a regular file; trusted: owned by us or root, not writable by group/others;
 * mine: owned by us. Closes fd when it is refused. */
static int check_file(int fd, const char *path, int trusted, int mine, char *why, size_t n)
{
	struct stat st;
	int e = 0;
	unsigned me = (unsigned)geteuid();
	if (fstat(fd, &st) != 0)
		e = fail(why, n, errno, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		e = fail(why, n, S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
			 "%s is %s, not a regular file", path, ebpf_file_kind(st.st_mode));
	else if ((trusted && st.st_uid != me && st.st_uid != 0) || (mine && st.st_uid != me))
		e = fail(why, n, EPERM, "%s is owned by uid %u, not by uid %u%s", path,
			 (unsigned)st.st_uid, me, mine ? "" : " or root");
	else if (trusted && (st.st_mode & (S_IWGRP | S_IWOTH)))
		e = fail(why, n, EPERM, "%s is writable by %s (mode %04o)", path,
			 writers(st.st_mode), (unsigned)(st.st_mode & 07777));
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

int ncclbpf_path_open_read(const char *path, char *why, size_t why_len)
{
	struct walk w;
	char leaf[NAME_MAX + 1];
	int e = walk(&w, path, 0, leaf, sizeof(leaf), 1, why, why_len);
	if (e)
		return e;
	int fd = openat(w.fd, leaf, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	int err = errno;
	close(w.fd);
	if (fd < 0)
		return open_failed(err, path, why, why_len);
	return check_file(fd, path, 1, 0, why, why_len);
}

int ncclbpf_path_open_library(const char *path, char *why, size_t why_len)
{
	if (!path || !strchr(path, '/'))
		return fail(why, why_len, EINVAL, "%s is not a path (give the library's path)",
			    path ? path : "(null)");
	return ncclbpf_path_open_read(path, why, why_len);
}

int ncclbpf_path_read_fd(int fd, const char *path, size_t max, void **buf, size_t *len, char *why,
			 size_t why_len)
{
	*buf = NULL;
	*len = 0;
	size_t cap = 0, got = 0;
	char *b = NULL;
	int e = 0;
	if (max > SIZE_MAX / 4)
		max = SIZE_MAX / 4;
	for (;;) {
		if (got > max) {
			e = fail(why, why_len, E2BIG, "%s is larger than %zu bytes", path, max);
			break;
		}
		if (got == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			ncap = ncap > max + 1 ? max + 1 : ncap; /* one byte past max tells */
			char *nb = realloc(b, ncap + 1);
			if (!nb) {
				e = fail(why, why_len, ENOMEM, "%s: out of memory", path);
				break;
			}
			b = nb;
			cap = ncap;
		}
		ssize_t k = read(fd, b + got, cap - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			e = fail(why, why_len, errno, "%s: cannot read: %s", path, strerror(errno));
			break;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	if (e) {
		free(b);
		return e;
	}
	if (!b && !(b = malloc(1)))
		return fail(why, why_len, ENOMEM, "%s: out of memory", path);
	b[got] = 0;
	*buf = b;
	*len = got;
	return 0;
}

int ncclbpf_path_read_file(const char *path, size_t max, void **buf, size_t *len, char *why,
			   size_t why_len)
{
	*buf = NULL;
	*len = 0;
	int fd = ncclbpf_path_open_read(path, why, why_len);
	if (fd < 0)
		return fd;
	int e = ncclbpf_path_read_fd(fd, path, max, buf, len, why, why_len);
	close(fd);
	return e;
}

/* The file part of append: an existing regular file of ours, never through a link, never waiting
 * on a FIFO, or (create) a new one, O_EXCL. Without create a missing file is -ENOENT. */
static int append_at(int dirfd, const char *name, const char *shown, int create, mode_t mode,
		     char *why, size_t why_len)
{
	int fd = -1, err = 0;
	for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
		fd = openat(dirfd, name, APPEND_FLAGS);
		if (fd < 0 && errno == ENOENT && create)
			fd = openat(dirfd, name, APPEND_FLAGS | O_CREAT | O_EXCL, mode);
		err = errno;
		if (fd < 0 && err != EEXIST) /* EEXIST: created meanwhile, open that one */
			break;
	}
	if (fd < 0)
		return open_failed(err, shown, why, why_len);
	fd = check_file(fd, shown, 0, 1, why, why_len);
	if (fd >= 0)
		fcntl(fd, F_SETFL, O_APPEND); /* blocking writes from here on */
	return fd;
}

int ncclbpf_path_append_at(int dirfd, const char *name, const char *shown, mode_t mode, char *why,
			   size_t why_len)
{
	return append_at(dirfd, name, shown ? shown : name, 1, mode, why, why_len);
}

int ncclbpf_path_open_append(const char *path, char *why, size_t why_len)
{
	struct walk w;
	char leaf[NAME_MAX + 1];
	int e = walk(&w, path, 0, leaf, sizeof(leaf), 0, why, why_len);
	if (e)
		return e;
	int fd = ncclbpf_path_append_at(w.fd, leaf, path, 0600, why, why_len);
	close(w.fd);
	return fd;
}

int ncclbpf_path_probe_append(const char *path, int *missing, char *why, size_t why_len)
{
	struct walk w;
	char leaf[NAME_MAX + 1];
	*missing = 0;
	int e = walk(&w, path, 0, leaf, sizeof(leaf), 0, why, why_len);
	if (e)
		return e;
	/* open_append's open without its creation: nothing is written, nothing truncated */
	int fd = append_at(w.fd, leaf, path, 0, 0, why, why_len);
	close(w.fd);
	if (fd == -ENOENT) {
		*missing = 1; /* what open_append would create */
		return 0;
	}
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int ncclbpf_path_open_entry(int dirfd, const char *name, char *why, size_t why_len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return open_failed(errno, name, why, why_len);
	return check_file(fd, name, 0, 0, why, why_len);
}

static int remove_at(int parent, const char *name, const char *shown, int depth, char *why,
		     size_t n)
{
	struct stat st;
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : fail(why, n, errno, "%s: %s", shown, strerror(errno));
	unsigned me = (unsigned)geteuid();
	if (st.st_uid != me)
		return fail(why, n, EPERM, "%s is owned by uid %u, not by uid %u: left in place",
			    shown, (unsigned)st.st_uid, me);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent, name, 0) != 0 && errno != ENOENT)
			return fail(why, n, errno, "cannot remove %s: %s", shown, strerror(errno));
		return 0;
	}
	if (depth >= MAX_DEPTH)
		return fail(why, n, ELOOP, "%s: more than %d directory levels", shown, MAX_DEPTH);
	int fd = openat(parent, name, DIR_FLAGS);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
		int e = fd < 0 ? errno : EAGAIN;
		if (fd >= 0)
			close(fd);
		return e == ENOENT ? 0 : fail(why, n, e, "%s changed while being removed", shown);
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return fail(why, n, errno, "%s: %s", shown, strerror(errno));
	}
	int first = 0;
	char sub[PATH_MAX];
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", shown, de->d_name);
		int e = remove_at(dirfd(d), de->d_name, sub, depth + 1, first ? NULL : why, n);
		if (e && !first)
			first = e;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT && !first)
		first = fail(why, n, errno, "cannot remove %s: %s", shown, strerror(errno));
	return first;
}

int ncclbpf_path_remove_at(int dirfd, const char *name, char *why, size_t why_len)
{
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
		return fail(why, why_len, EINVAL, "'%s' is not a directory entry's name", name);
	return remove_at(dirfd, name, name, 0, why, why_len);
}
