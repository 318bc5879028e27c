/* Opening a file someone named (a policy object, a trace, a sweep) without surprises: a FIFO
 * with no writer, a directory or a device is refused with a message that says what it is,
 * instead of blocking forever or failing with a misleading errno. Owner: engine/src/file.c.
 * (The plugin's own reads go through runtime/src/base/trusted_path.c, which also checks who
 * owns the file and every directory above it.) */
#ifndef EBPF_FILE_H
#define EBPF_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "a FIFO", "a directory", "a socket", ...: what a file of mode m is, for messages. */
const char *ebpf_file_kind(mode_t m);

/* Opens path for reading if it is a regular file; never blocks (the open is non-blocking, so a
 * FIFO nobody writes is seen and refused, not waited on). Returns the descriptor (close-on-exec),
 * or -errno with err = "PATH: cannot open: REASON" or "PATH is a FIFO, not a regular file". */
int ebpf_open_regular(const char *path, char *err, size_t err_len);

/* The same as a stdio stream ("r"); NULL with errno and err on failure. */
FILE *ebpf_fopen_regular(const char *path, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
