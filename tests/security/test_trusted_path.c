/* The trusted-path rules (runtime/include/ncclbpf/trusted_path.h) on real directories:
 * private, group- or world-writable levels, /tmp as a passage and as a directory, links in
 * trusted and in shared directories, FIFOs and directories where a file is expected (refused
 * at once, never a hang), files created without following links, removal that never leaves
 * the tree it was given; the probes `ncclbpf env` uses give the open's verdict and create
 * nothing.
 *
 * usage: test_trusted_path local     everything this user can set up
 *        test_trusted_path foreign   entries of other uids (root only: chown, setuid; else 77) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ncclbpf/trusted_path.h"

static char T[64]; /* a private directory of this test */
static char why[1024];

static const char *at(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", T, name);
	return buf[k];
}

static void put_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		perror(path);
	close(fd);
	chmod(path, mode);
}

/* -errno of an open: the descriptor is closed when it succeeded. */
static int opened(int fd)
{
	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_dirs(void)
{
	CHECKF(opened(ncclbpf_path_open_dir(T, NCCLBPF_PATH_PRIVATE, why, sizeof(why))) == 0,
	       "private directory: %s", why);
	chmod(T, 0755);
	int e = opened(ncclbpf_path_open_dir(T, NCCLBPF_PATH_PRIVATE, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, T) && strstr(why, "mode 0755"), "0755 as private: %s",
	       why);
	CHECKF(opened(ncclbpf_path_open_dir(T, 0, why, sizeof(why))) == 0, "0755: %s", why);
	chmod(T, 0775);
	e = opened(ncclbpf_path_open_dir(T, 0, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "writable by its group (mode 0775)"), "0775: %s", why);
	/* a level below a group-writable one is refused too */
	mkdir(at("below"), 0700);
	e = opened(ncclbpf_path_open_dir(at("below"), 0, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "writable by its group") && !strstr(why, "below"),
	       "under 0775: %s", why);
	chmod(T, 0700);

	/* /tmp: a passage (T is in it), never a directory to look names up in */
	e = opened(ncclbpf_path_open_dir("/tmp", 0, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "/tmp is writable by its group and others (mode 1777)"),
	       "/tmp: %s", why);

	/* creating levels: mode 0700, each checked */
	const char *deep = at("a/b/c");
	CHECKF(opened(ncclbpf_path_open_dir(deep, NCCLBPF_PATH_CREATE | NCCLBPF_PATH_PRIVATE, why,
					    sizeof(why))) == 0,
	       "create %s: %s", deep, why);
	struct stat st;
	CHECK(stat(deep, &st) == 0 && (st.st_mode & 07777) == 0700);

	put_file(at("plain"), "x", 0600);
	e = opened(ncclbpf_path_open_dir(at("plain/sub"), NCCLBPF_PATH_CREATE, why, sizeof(why)));
	CHECKF(e == -ENOTDIR && strstr(why, "plain is not a directory"), "file as a level: %s",
	       why);

	/* a link to a directory inside a trusted directory is followed; one in /tmp is not */
	symlink(at("a"), at("alink"));
	CHECKF(opened(ncclbpf_path_open_dir(at("alink/b"), 0, why, sizeof(why))) == 0,
	       "link in a trusted directory: %s", why);
	char tmp_link[128];
	snprintf(tmp_link, sizeof(tmp_link), "/tmp/tp-dirlink-%d", (int)getpid());
	unlink(tmp_link);
	symlink(T, tmp_link);
	e = opened(ncclbpf_path_open_dir(tmp_link, NCCLBPF_PATH_CREATE, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "symbolic link in a directory others can write"),
	       "link in /tmp: %s", why);
	unlink(tmp_link);

	/* a loop of links ends */
	symlink("l2", at("l1"));
	symlink("l1", at("l2"));
	e = opened(ncclbpf_path_open_dir(at("l1"), 0, why, sizeof(why)));
	CHECKF(e == -ELOOP && strstr(why, "too many levels"), "link loop: %s", why);
}

static void test_files(void)
{
	put_file(at("p.o"), "policy bytes", 0644);
	void *buf;
	size_t len;
	int e = ncclbpf_path_read_file(at("p.o"), 1 << 20, &buf, &len, why, sizeof(why));
	CHECKF(e == 0 && len == 12 && !memcmp(buf, "policy bytes", 12), "read: %s", why);
	if (!e)
		free(buf);
	e = ncclbpf_path_read_file(at("p.o"), 5, &buf, &len, why, sizeof(why));
	CHECKF(e == -E2BIG && strstr(why, "larger than 5 bytes"), "over max: %s", why);
	chmod(at("p.o"), 0666);
	e = opened(ncclbpf_path_open_read(at("p.o"), why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "writable by its group and others"), "0666: %s", why);
	chmod(at("p.o"), 0644);

	/* relative to the current directory */
	char cwd[512];
	if (getcwd(cwd, sizeof(cwd)) && chdir(T) == 0) {
		CHECKF(opened(ncclbpf_path_open_read("p.o", why, sizeof(why))) == 0, "relative: %s",
		       why);
		CHECKF(opened(ncclbpf_path_open_read("./a/../p.o", why, sizeof(why))) == 0,
		       "dot-dot: %s", why);
		if (chdir(cwd) != 0)
			perror(cwd);
	}

	/* a FIFO or a directory: refused at once, not a hang */
	mkfifo(at("fifo"), 0600);
	double t0 = now_s();
	e = opened(ncclbpf_path_open_read(at("fifo"), why, sizeof(why)));
	CHECKF(e < 0 && strstr(why, "is a FIFO, not a regular file"), "FIFO read: %s", why);
	e = ncclbpf_path_read_file(at("fifo"), 100, &buf, &len, why, sizeof(why));
	CHECKF(e < 0 && strstr(why, "is a FIFO"), "FIFO read_file: %s", why);
	e = opened(ncclbpf_path_open_append(at("fifo"), why, sizeof(why)));
	CHECKF(e < 0 && strstr(why, "is a FIFO"), "FIFO append: %s", why);
	CHECKF(now_s() - t0 < 5, "FIFO took %.1f s", now_s() - t0);
	e = opened(ncclbpf_path_open_read(T, why, sizeof(why)));
	CHECKF(e == -EISDIR && strstr(why, "is a directory, not a regular file"), "dir: %s", why);
	e = opened(ncclbpf_path_open_read("/", why, sizeof(why)));
	CHECKF(e == -EISDIR && strstr(why, "names a directory"), "/: %s", why);

	/* links: followed for reading inside a trusted directory, never for writing */
	symlink("p.o", at("plink"));
	CHECKF(opened(ncclbpf_path_open_read(at("plink"), why, sizeof(why))) == 0,
	       "read through a trusted link: %s", why);
	e = opened(ncclbpf_path_open_append(at("plink"), why, sizeof(why)));
	CHECKF(e == -ELOOP && strstr(why, "symbolic link"), "append through a link: %s", why);
	char tmp_link[128];
	snprintf(tmp_link, sizeof(tmp_link), "/tmp/tp-filelink-%d", (int)getpid());
	unlink(tmp_link);
	symlink(at("p.o"), tmp_link);
	e = opened(ncclbpf_path_open_read(tmp_link, why, sizeof(why)));
	CHECKF(e == -ELOOP && strstr(why, "symbolic link"), "read through /tmp link: %s", why);
	e = opened(ncclbpf_path_open_append(tmp_link, why, sizeof(why)));
	CHECKF(e == -ELOOP, "append through /tmp link: %s", why);
	struct stat st;
	CHECK(stat(at("p.o"), &st) == 0 && st.st_size == 12); /* untouched */
	unlink(tmp_link);

	/* append: created private, then appended to */
	int fd = ncclbpf_path_open_append(at("trace"), why, sizeof(why));
	CHECKF(fd >= 0, "create: %s", why);
	if (fd >= 0) {
		CHECK(write(fd, "one\n", 4) == 4);
		close(fd);
	}
	fd = ncclbpf_path_open_append(at("trace"), why, sizeof(why));
	if (fd >= 0) {
		CHECK(write(fd, "two\n", 4) == 4);
		close(fd);
	}
	CHECK(stat(at("trace"), &st) == 0 && st.st_size == 8 && (st.st_mode & 07777) == 0600);

	/* entries of a trusted directory */
	int dfd = ncclbpf_path_open_dir(T, 0, why, sizeof(why));
	CHECKF(opened(ncclbpf_path_open_entry(dfd, "p.o", why, sizeof(why))) == 0, "entry: %s",
	       why);
	e = opened(ncclbpf_path_open_entry(dfd, "plink", why, sizeof(why)));
	CHECKF(e == -ELOOP, "entry link: %s", why);
	e = opened(ncclbpf_path_open_entry(dfd, "fifo", why, sizeof(why)));
	CHECKF(e < 0 && strstr(why, "is a FIFO"), "entry FIFO: %s", why);
	close(dfd);
}

static void test_remove(void)
{
	/* outside: what a planted link points to */
	char outside[128];
	snprintf(outside, sizeof(outside), "%s-outside", T);
	mkdir(outside, 0700);
	char keep[200];
	snprintf(keep, sizeof(keep), "%s/keep", outside);
	put_file(keep, "k", 0600);
	mkdir(at("tree"), 0700);
	mkdir(at("tree/sub"), 0700);
	put_file(at("tree/sub/f"), "f", 0600);
	symlink(outside, at("tree/link"));
	symlink(outside, at("tree/sub/link"));
	int dfd = ncclbpf_path_open_dir(T, 0, why, sizeof(why));
	int e = ncclbpf_path_remove_at(dfd, "tree", why, sizeof(why));
	struct stat st;
	CHECKF(e == 0 && lstat(at("tree"), &st) != 0, "tree: %d %s", e, why);
	CHECKF(stat(keep, &st) == 0, "a link's target was emptied");
	/* the entry itself a link: removed, its target kept */
	symlink(outside, at("toplink"));
	e = ncclbpf_path_remove_at(dfd, "toplink", why, sizeof(why));
	CHECK(e == 0 && lstat(at("toplink"), &st) != 0 && stat(keep, &st) == 0);
	CHECK(ncclbpf_path_remove_at(dfd, "..", why, sizeof(why)) == -EINVAL);
	CHECK(ncclbpf_path_remove_at(dfd, "a/b", why, sizeof(why)) == -EINVAL);
	close(dfd);
	unlink(keep);
	rmdir(outside);
}

/* Runs fn as uid in a child: its CHECK failures become the exit status. */
static int as_uid(unsigned uid, void (*fn)(void))
{
	pid_t c = fork();
	if (c == 0) {
		if (setgid(uid) != 0 || setuid(uid) != 0)
			_exit(100);
		fn();
		_exit(check_failures ? 1 : 0);
	}
	int st = 0;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static void foreign_as_nobody(void)
{
	/* root's directories are trusted (T is root's, 0711 for this part), another user's
	 * are not */
	CHECKF(opened(ncclbpf_path_open_dir(at("rootdir"), 0, why, sizeof(why))) == 0,
	       "root-owned level: %s", why);
	int e = opened(ncclbpf_path_open_dir(at("other"), 0, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "owned by uid 65533, not by uid 65534 or root"),
	       "other user's: %s", why);
	CHECKF(opened(ncclbpf_path_open_dir(at("mine"), NCCLBPF_PATH_PRIVATE, why, sizeof(why))) ==
		   0,
	       "own: %s", why);
}

static void test_foreign(void)
{
	mkdir(at("other"), 0700);
	chown(at("other"), 65533, 65533);
	int e = opened(ncclbpf_path_open_dir(at("other"), 0, why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "owned by uid 65533, not by uid 0 or root"), "root: %s",
	       why);
	put_file(at("theirs.o"), "x", 0644);
	chown(at("theirs.o"), 65533, 65533);
	e = opened(ncclbpf_path_open_read(at("theirs.o"), why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "owned by uid 65533"), "their policy: %s", why);
	e = opened(ncclbpf_path_open_append(at("theirs.o"), why, sizeof(why)));
	CHECKF(e == -EPERM && strstr(why, "owned by uid 65533, not by uid 0"), "their log: %s",
	       why);
	int dfd = ncclbpf_path_open_dir(T, 0, why, sizeof(why));
	e = ncclbpf_path_remove_at(dfd, "theirs.o", why, sizeof(why));
	struct stat st;
	CHECKF(e == -EPERM && strstr(why, "left in place") && stat(at("theirs.o"), &st) == 0,
	       "removed another uid's file: %s", why);
	close(dfd);

	mkdir(at("rootdir"), 0755);
	mkdir(at("mine"), 0700);
	chown(at("mine"), 65534, 65534);
	chmod(T, 0711);
	CHECKF(as_uid(65534, foreign_as_nobody) == 0, "checks as uid 65534 failed");
	chmod(T, 0700);
}

/* The probes answer what open_dir(CREATE) and open_append would, creating and writing nothing. */
static void test_probes(void)
{
	struct stat st;
	int missing = -1;
	mkdir(at("pr"), 0700);
	int e = ncclbpf_path_probe_dir(at("pr"), NCCLBPF_PATH_CREATE, &missing, why, sizeof(why));
	CHECKF(e == 0 && missing == 0, "probe an existing directory: %d %s", e, why);
	e = ncclbpf_path_probe_dir(at("pr/x/y"), NCCLBPF_PATH_CREATE, &missing, why, sizeof(why));
	CHECKF(e == 0 && missing == 1, "probe missing levels: %d %s", e, why);
	CHECK(stat(at("pr/x"), &st) != 0 && errno == ENOENT); /* nothing created */
	e = ncclbpf_path_probe_dir(at("pr/x"), 0, &missing, why, sizeof(why));
	CHECKF(e == -ENOENT && missing == 1, "missing without CREATE: %d %s", e, why);
	chmod(at("pr"), 0770);
	e = ncclbpf_path_probe_dir(at("pr/x"), NCCLBPF_PATH_CREATE, &missing, why, sizeof(why));
	CHECKF(e == -EPERM && strstr(why, "writable by its group (mode 0770)"),
	       "missing under a group-writable level: %s", why);
	e = ncclbpf_path_probe_dir(at("pr"), NCCLBPF_PATH_CREATE, &missing, why, sizeof(why));
	CHECKF(e == -EPERM && strstr(why, "writable by its group"), "group-writable: %s", why);
	chmod(at("pr"), 0700);
	/* /tmp: passed through to a missing level (it would be created, ours), never the answer */
	char in_tmp[128];
	snprintf(in_tmp, sizeof(in_tmp), "/tmp/tp-probe-%d/cp", (int)getpid());
	e = ncclbpf_path_probe_dir(in_tmp, NCCLBPF_PATH_CREATE, &missing, why, sizeof(why));
	CHECKF(e == 0 && missing == 1, "missing below /tmp: %d %s", e, why);
	e = ncclbpf_path_probe_dir("/tmp", NCCLBPF_PATH_CREATE, &missing, why, sizeof(why));
	CHECKF(e == -EPERM && strstr(why, "/tmp is writable"), "/tmp itself: %s", why);

	e = ncclbpf_path_probe_append(at("pr/log"), &missing, why, sizeof(why));
	CHECKF(e == 0 && missing == 1, "probe a new log: %d %s", e, why);
	CHECK(stat(at("pr/log"), &st) != 0 && errno == ENOENT);
	put_file(at("pr/log"), "kept", 0600);
	e = ncclbpf_path_probe_append(at("pr/log"), &missing, why, sizeof(why));
	CHECKF(e == 0 && missing == 0, "probe an existing log: %d %s", e, why);
	CHECK(stat(at("pr/log"), &st) == 0 && st.st_size == 4);
	mkfifo(at("pr/fifo"), 0600);
	double t0 = now_s();
	e = ncclbpf_path_probe_append(at("pr/fifo"), &missing, why, sizeof(why));
	CHECKF(e < 0 && strstr(why, "is a FIFO"), "probe a FIFO: %s", why);
	CHECKF(now_s() - t0 < 5, "FIFO took %.1f s", now_s() - t0);
	symlink("log", at("pr/llink"));
	e = ncclbpf_path_probe_append(at("pr/llink"), &missing, why, sizeof(why));
	CHECKF(e == -ELOOP, "probe a link: %s", why);
	e = ncclbpf_path_probe_append(at("pr/none/log"), &missing, why, sizeof(why));
	CHECKF(e == -ENOENT, "probe a log in a missing directory: %d %s", e, why);

	/* a library: a path, not a name the loader would search for */
	e = opened(ncclbpf_path_open_library("libnccl-net.so", why, sizeof(why)));
	CHECKF(e == -EINVAL && strstr(why, "libnccl-net.so is not a path"), "bare name: %s", why);
	e = opened(ncclbpf_path_open_library(at("pr/log"), why, sizeof(why)));
	CHECKF(e == 0, "library path: %s", why);
}

int main(int argc, char **argv)
{
	int foreign = argc > 1 && !strcmp(argv[1], "foreign");
	if (foreign && geteuid() != 0) {
		printf("SKIP: entries of other uids need root (chown, setuid)\n");
		return 77;
	}
	snprintf(T, sizeof(T), "/tmp/tp-test-XXXXXX");
	if (!mkdtemp(T)) {
		perror("mkdtemp");
		return 1;
	}
	if (foreign) {
		test_foreign();
	} else {
		test_dirs();
		test_files();
		test_probes();
		test_remove();
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", T);
	return check_summary(foreign ? "test_trusted_path foreign" : "test_trusted_path local");
}
