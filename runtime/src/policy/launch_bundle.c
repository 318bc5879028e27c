/* The launch bundle (ncclbpf_rt_launch_bundle, runtime.h): the file NCCLBPF_POLICY names, read
 * once per process through the trusted-path rules, whichever asks first (the env plugin's init
 * or the runtime's first acquire). Both take what they need from these bytes: a file replaced
 * between the two reads can no longer give NCCL one bundle's settings and the hooks another's
 * programs. Kept for the life of the process (the library is never unloaded); at most
 * EBPF_OBJECT_MAX_SIZE bytes. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ncclbpf/envvars.h"
#include "ebpf/object.h"
#include "ncclbpf/trusted_path.h"
#include "policy.h"

static struct {
	pthread_once_t once;
	int err;
	int have_path;
	char path[4096];
	char why[512];
	void *img;
	size_t len;
	struct stat st; /* the file that was read */
} launch = {.once = PTHREAD_ONCE_INIT, .err = -ENOENT};

static void read_launch(void)
{
	const char *p = ncclbpf_env_str("NCCLBPF_POLICY");
	if (!p || !strncmp(p, "native:", 7))
		return; /* nothing to read: err stays -ENOENT, no path */
	snprintf(launch.path, sizeof(launch.path), "%s", p);
	launch.have_path = 1;
	int fd = ncclbpf_path_open_read(p, launch.why, sizeof(launch.why));
	if (fd < 0) {
		launch.err = fd;
		return;
	}
	if (fstat(fd, &launch.st) != 0)
		memset(&launch.st, 0, sizeof(launch.st));
	launch.err = ncclbpf_path_read_fd(fd, p, EBPF_OBJECT_MAX_SIZE, &launch.img, &launch.len,
					  launch.why, sizeof(launch.why));
	close(fd);
}

int ncclbpf_rt_launch_bundle(const char **path, const void **img, size_t *len, char *why,
			     size_t why_len)
{
	pthread_once(&launch.once, read_launch);
	*path = launch.have_path ? launch.path : NULL;
	*img = launch.img;
	*len = launch.len;
	if (launch.err && why && why_len)
		snprintf(why, why_len, "%s",
			 launch.have_path ? launch.why : "NCCLBPF_POLICY names no file");
	return launch.err;
}

int rt_launch_changed(void)
{
	struct stat st;
	if (!launch.have_path || launch.err || stat(launch.path, &st) != 0)
		return 0;
	return st.st_dev != launch.st.st_dev || st.st_ino != launch.st.st_ino ||
	       st.st_size != launch.st.st_size || st.st_mtim.tv_sec != launch.st.st_mtim.tv_sec ||
	       st.st_mtim.tv_nsec != launch.st.st_mtim.tv_nsec;
}
