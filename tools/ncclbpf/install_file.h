/* Installing a file atomically for the plugins' watchers (ncclbpf reload, replay, tune, gpubench
 * --ab). */
#ifndef NCCLBPF_INSTALL_FILE_H
#define NCCLBPF_INSTALL_FILE_H

#include <stddef.h>

/* Copies from (a regular file) to TO.ncclbpf-PID.tmp beside to, created here and never through
 * a link someone planted there, syncs it, then renames it over to: a watcher sees one complete
 * file or the old one. 0, or -1 with the reason in err (the temporary file removed). */
int install_file(const char *from, const char *to, char *err, size_t err_len);

/* The same for size bytes at buf (ncclbpf tune's output). */
int install_bytes(const void *buf, size_t size, const char *to, char *err, size_t err_len);

#endif
