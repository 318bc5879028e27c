/* Trusted paths: the one place that decides whether a file or directory may be used by this
 * process, shared by the plugin and the `ncclbpf` CLI (libc only).
 *
 * Trust rule. Every directory level of a path, from "/", is opened with openat(O_NOFOLLOW |
 * O_DIRECTORY) and must be owned by this process's effective uid or by root, and writable by
 * neither its group nor others. One exception: a root-owned sticky directory others may write
 * (/tmp, /dev/shm) may be passed through, or hold a file we read or write, because the sticky
 * bit stops others from renaming or removing what we own in it; it is never trusted as a
 * directory whose entries we look up by name (others could have created those names first).
 * A symbolic link is followed only when the directory holding it is trusted and not shared (so
 * only its owner or root could have placed it), at most 40 times, and whatever it points to is
 * checked the same way. Anything else is refused with a one-line reason that names the path
 * ("PATH is owned by uid U, not by uid V or root", "PATH is a FIFO, not a regular file").
 *
 * Files are opened with O_NONBLOCK and checked with fstat before anything is read: a FIFO, a
 * device or a directory gives an error at once instead of blocking the caller. New files are
 * created with O_CREAT | O_EXCL | O_NOFOLLOW (mode 0600). Removal never follows a link and
 * removes only entries owned by this process's effective uid.
 *
 * Every function returns a descriptor or 0 on success, else a negative errno with the reason
 * in why (may be NULL). Descriptors are close-on-exec. */
#ifndef NCCLBPF_TRUSTED_PATH_H
#define NCCLBPF_TRUSTED_PATH_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCLBPF_PATH_CREATE  1u /* open_dir: create missing directories (mode 0700) */
#define NCCLBPF_PATH_PRIVATE 2u /* open_dir: the directory itself has no group/other bits */

/* Opens the directory path, every level checked: O_RDONLY (listable) when readable, else
 * O_PATH (usable as a dirfd only). */
int ncclbpf_path_open_dir(const char *path, unsigned flags, char *why, size_t why_len);

/* What ncclbpf_path_open_dir(path, flags) would do, creating nothing: 0 when it would accept
 * path, with *missing set when a level is not there yet (with NCCLBPF_PATH_CREATE it would
 * create it; without, that is -ENOENT), else the error and reason it would give. For checking
 * settings before a job starts (`ncclbpf env`). */
int ncclbpf_path_probe_dir(const char *path, unsigned flags, int *missing, char *why,
			   size_t why_len);

/* Opens the directory holding path's last component (O_PATH; checked as above, it may be a shared
 * sticky directory) and copies that component into leaf. The component must be a name, not
 * "." or "..". */
int ncclbpf_path_open_parent(const char *path, char *leaf, size_t leaf_len, char *why,
			     size_t why_len);

/* Opens path for reading: a regular file owned by us or root and writable by neither group nor
 * others, in a trusted directory. For policies, inner plugins, anything whose contents decide
 * what the process does. */
int ncclbpf_path_open_read(const char *path, char *why, size_t why_len);

/* Opens a shared library to dlopen: path must be a path (with a '/'), not a name for the
 * loader to search for, and is checked as ncclbpf_path_open_read checks it (the open also
 * keeps dlopen from blocking on a FIFO). */
int ncclbpf_path_open_library(const char *path, char *why, size_t why_len);

/* The same, reading the whole file (at most max bytes: -E2BIG beyond) into *buf (malloc'd,
 * one spare byte NUL-terminated) and its size into *len. */
int ncclbpf_path_read_file(const char *path, size_t max, void **buf, size_t *len, char *why,
			   size_t why_len);
/* The reading part alone, on a descriptor from ncclbpf_path_open_read (path: for messages). */
int ncclbpf_path_read_fd(int fd, const char *path, size_t max, void **buf, size_t *len, char *why,
			 size_t why_len);

/* Opens path for appending (trace, log): an existing regular file of ours, never through a
 * link, or a new one (O_EXCL, mode 0600), in a trusted directory. */
int ncclbpf_path_open_append(const char *path, char *why, size_t why_len);
/* The file part of ncclbpf_path_open_append, for the entry name of a directory dirfd whose levels
 * the caller has checked or does not need to trust (an export directory others read): an
 * existing regular file owned by our effective uid, never through a link, never waiting on a
 * FIFO, or a new one (O_EXCL, mode). shown: the name for messages (NULL: name). */
int ncclbpf_path_append_at(int dirfd, const char *name, const char *shown, mode_t mode, char *why,
			   size_t why_len);
/* What ncclbpf_path_open_append would do, creating and writing nothing: 0 when it would accept
 * path (*missing: the file is not there yet, it would create it), else its error and reason. */
int ncclbpf_path_probe_append(const char *path, int *missing, char *why, size_t why_len);

/* Opens the entry name of an already trusted directory dirfd (AT_FDCWD: name is a path whose
 * directories the caller checked) for reading: not a link, a regular file, without blocking.
 * For records and files of a trusted medium (control plane, live inspection). */
int ncclbpf_path_open_entry(int dirfd, const char *name, char *why, size_t why_len);

/* Removes the entry name of directory dirfd when it is ours: a link is removed itself (never
 * its target), a directory with its contents (each entry the same way, 16 levels at most).
 * -EPERM (nothing of that entry removed) when it is not owned by our effective uid. */
int ncclbpf_path_remove_at(int dirfd, const char *name, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
