/* Atomic file installation (install_file.h). */
#include "ebpf/file.h"
#include "install_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The temporary file beside to, created here: O_EXCL (with O_NOFOLLOW) never writes through a
 * file or symbolic link someone planted under that predictable name in a shared directory. */
static int open_tmp(const char *to, char *tmp, size_t len, char *err, size_t err_len)
{
	if (snprintf(tmp, len, "%s.ncclbpf-%d.tmp", to, (int)getpid()) >= (int)len) {
		snprintf(err, err_len, "%s: path too long", to);
		return -1;
	}
	int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
	return out;
}

/* Writes all size bytes (a write may take fewer): 0, or the errno that stopped it. */
static int write_all(int fd, const void *buf, size_t size)
{
	const char *p = buf;
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/* Syncs and closes out, then renames tmp over to; e: the errno writing it already failed with
 * (0: none). */
static int commit(int out, const char *tmp, const char *to, int e, const char *what, char *err,
		  size_t err_len)
{
	if (!e && fsync(out) != 0)
		e = errno;
	if (close(out) != 0 && !e)
		e = errno;
	if (!e && rename(tmp, to) != 0)
		e = errno;
	if (e) {
		snprintf(err, err_len, "cannot install %s at %s: %s", what, to, strerror(e));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int install_file(const char *from, const char *to, char *err, size_t err_len)
{
	char tmp[4200];
	int in = ebpf_open_regular(from, err, err_len);
	if (in < 0)
		return -1;
	int out = open_tmp(to, tmp, sizeof(tmp), err, err_len);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int e = 0;
	while (!e && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0)
			e = errno == EINTR ? 0 : errno;
		else
			e = write_all(out, buf, (size_t)n);
	}
	close(in);
	return commit(out, tmp, to, e, from, err, err_len);
}

int install_bytes(const void *buf, size_t size, const char *to, char *err, size_t err_len)
{
	char tmp[4200];
	int out = open_tmp(to, tmp, sizeof(tmp), err, err_len);
	if (out < 0)
		return -1;
	return commit(out, tmp, to, write_all(out, buf, size), "the new file", err, err_len);
}
