/* The NCCL settings a policy bundle carries: the text of its ELF section ".ncclbpf.env"
 * (env_settings.h describes the format), read once per process from the launch bundle (the
 * bytes of the object NCCLBPF_POLICY names, ncclbpf_rt_launch_bundle). */
#ifndef NCCLBPF_ENV_BUNDLE_H
#define NCCLBPF_ENV_BUNDLE_H

#include <stddef.h>

#include "env_settings.h"

#define ENV_BUNDLE_SECTION ".ncclbpf.env"

/* Copies section `name` of the ELF64 little-endian object img[0..size) into a malloc'ed,
 * NUL-terminated buffer. Returns 0 (*out, *len set), -ENOENT when the object has no such
 * section, -ENOEXEC when it is not a well-formed ELF64 object, -ENOMEM. */
int env_bundle_section(const void *img, size_t size, const char *name, char **out, size_t *len);

/* Parses the settings of the object img[0..size) into set (cleared first); a missing section is
 * an empty set. Returns 0 or a negative errno (then set is empty). */
int env_bundle_parse(const void *img, size_t size, struct env_settings *set);

#endif
