/* The NCCL settings a policy bundle carries: the text of its ELF section ".ncclbpf.env"
 * (env_settings.h describes the format), read once per process from the object NCCLBPF_POLICY
 * names. */
#ifndef NCCLBPF_ENV_BUNDLE_H
#define NCCLBPF_ENV_BUNDLE_H

#include <stddef.h>

#include "env_settings.h"

#define ENV_BUNDLE_SECTION ".ncclbpf.env"

/* Reads section `name` of the ELF64 little-endian object at path into a malloc'ed buffer.
 * Returns 0 (*out, *len set), -ENOENT when the object has no such section, another negative
 * errno when the file cannot be read or is not a well-formed ELF64 object. */
int env_bundle_read_section(const char *path, const char *name, char **out, size_t *len);

/* Loads the settings of the object at path into set (cleared first); a missing section is
 * an empty set. Returns 0 or a negative errno (then set is empty). */
int env_bundle_load(const char *path, struct env_settings *set);

#endif
