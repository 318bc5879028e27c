/* Opening a file someone named, refusing what is not a regular file (ebpf/file.h). */
#include "ebpf/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

const char *ebpf_file_kind(mode_t m)
{
	if (S_ISREG(m))
		return "a regular file";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "a file of an unknown kind";
}

int ebpf_open_regular(const char *path, char *err, size_t err_len)
{
	struct stat st;
	int fd, e;

	if (!path) {
		ebpf_errf(err, err_len, "(null): cannot open: %s", strerror(EINVAL));
		return -EINVAL;
	}
	/* O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer; O_NOCTTY: a
	 * terminal named here must not become the process's controlling terminal. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		ebpf_errf(err, err_len, "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		ebpf_errf(err, err_len, "%s: cannot open: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		ebpf_errf(err, err_len, "%s is %s, not a regular file", path,
			  ebpf_file_kind(st.st_mode));
		close(fd);
		return -e;
	}
	/* Reads of a regular file never block; clear the flag anyway so that the descriptor
	 * behaves as a plain open's would wherever it goes. */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

FILE *ebpf_fopen_regular(const char *path, char *err, size_t err_len)
{
	int fd = ebpf_open_regular(path, err, err_len);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		int e = errno;
		ebpf_errf(err, err_len, "%s: cannot open: %s", path, strerror(e));
		close(fd);
		errno = e;
	}
	return f;
}
