/* The control plane's medium: a directory of small key=value records, each written to a temp
 * name in the same directory and then renamed (replaceable records) or linked (write-once
 * records) into place, so that a reader sees a whole record or none. Shared by the members
 * (cp_member.c, cp_thread.c) and the controller (cp_controller.c). */
#ifndef NCCLBPF_CP_DIR_H
#define NCCLBPF_CP_DIR_H

#include <stddef.h>
#include <stdint.h>

#define CP_PATH 4096

/* D is at most CP_PATH - 512 bytes (checked where it is read) and every name below it is short,
 * so composed paths fit their buffers; GCC cannot see that through the sizes of the buffers. A
 * truncated path would only name a file that does not exist, which every reader handles. */
#ifndef __clang__ /* GCC's warning; clang has none of that name */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* mkdir -p (mode 0700), every level trusted (ncclbpf/trusted_path.h). 0 or -errno. */
int cp_mkdirs(const char *path);
/* Replaces dir/name with buf (temp file + rename). 0 or -errno. */
int cp_write(const char *dir, const char *name, const void *buf, size_t len);
/* Creates dir/name with buf unless it exists (temp file + link): 0, -EEXIST, or -errno. */
int cp_create_once(const char *dir, const char *name, const void *buf, size_t len);
/* Reads a whole file of fewer than max bytes (-E2BIG otherwise), NUL-terminated; *out to be
 * freed. 0 or -errno. A link, a FIFO or anything but a regular file is refused without
 * blocking. */
int cp_read(const char *path, char **out, size_t *len, size_t max);
/* Removes a directory tree: only our own entries, never through a link, in a trusted parent
 * (best effort: 0 or the first -errno). */
int cp_rmtree(const char *path);

/* Value of the first "key=" line of a record into out (NUL-terminated); 0 or -ENOENT. */
int cp_kv(const char *rec, const char *key, char *out, size_t outlen);
/* The same for the n-th occurrence (0-based). */
int cp_kv_nth(const char *rec, const char *key, unsigned n, char *out, size_t outlen);
int cp_kv_u64(const char *rec, const char *key, uint64_t *v);

/* Names in dir (skipping names starting with '.'), sorted; *names freed with cp_names_free. */
int cp_list(const char *dir, char ***names, size_t *n);
void cp_names_free(char **names, size_t n);

const char *cp_hostname(void);
uint64_t cp_realtime_ns(void);
void cp_sleep_ms(unsigned ms);

#endif
