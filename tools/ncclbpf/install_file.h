/* Installing a file atomically for the plugins' watchers (ncclbpf reload, gpubench --ab). */
#ifndef NCCLBPF_INSTALL_FILE_H
#define NCCLBPF_INSTALL_FILE_H

#include <stddef.h>

/* Copies from to TO.ncclbpf-PID.tmp beside to, syncs it, then renames it over to: a watcher
 * sees one complete file or the old one. 0, or -1 with the reason in err (the temporary file
 * removed). */
int install_file(const char *from, const char *to, char *err, size_t err_len);

#endif
