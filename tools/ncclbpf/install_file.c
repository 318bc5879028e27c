/* Atomic file installation (install_file.h). */
#include "ebpf/file.h"
#include "install_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int install_file(const char *from, const char *to, char *err, size_t err_len)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.ncclbpf-%d.tmp", to, (int)getpid());
	int in = ebpf_open_regular(from, err, err_len);
	if (in < 0) {
		return -1;
	}
	int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int bad = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			bad = 1;
	if (n < 0 || fsync(out) != 0)
		bad = 1;
	close(in);
	if (close(out) != 0)
		bad = 1;
	if (!bad && rename(tmp, to) != 0)
		bad = 1;
	if (bad) {
		snprintf(err, err_len, "cannot install %s at %s: %s", from, to, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
