/* The control plane's directory medium (runtime/src/cp/cp_dir.c): cp_write replaces a record,
 * cp_create_once creates it only where it does not exist (-EEXIST, the first record kept), and
 * neither leaves its temp file behind. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cp_dir.h"

static char dir[64];

/* The record's bytes, or "" where it cannot be read. */
static const char *record(const char *name)
{
	static char buf[64];
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return buf;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* How many temp files (.tmp.*, cp_dir.c's write_tmp) the directory holds. */
static size_t temp_files(void)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "%s/.tmp.*", dir);
	glob_t g;
	size_t n = glob(pat, GLOB_PERIOD, NULL, &g) == 0 ? g.gl_pathc : 0;
	globfree(&g);
	return n;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ncclbpf-cp-dir-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	CHECK(cp_write(dir, "member", "a", 1) == 0);
	CHECK(!strcmp(record("member"), "a"));
	CHECK(cp_write(dir, "member", "bb", 2) == 0); /* replaces */
	CHECK(!strcmp(record("member"), "bb"));

	CHECK(cp_create_once(dir, "decision", "first", 5) == 0);
	CHECK(cp_create_once(dir, "decision", "second", 6) == -EEXIST); /* the first one wins */
	CHECK(!strcmp(record("decision"), "first"));
	CHECK(temp_files() == 0); /* no temp file left by either path */

	CHECK(cp_write("/nonexistent-ncclbpf-dir", "x", "x", 1) < 0);
	CHECK(cp_create_once("/nonexistent-ncclbpf-dir", "x", "x", 1) < 0);

	char path[128];
	snprintf(path, sizeof(path), "%s/member", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/decision", dir);
	unlink(path);
	rmdir(dir);
	return check_summary("test_cp_dir");
}
