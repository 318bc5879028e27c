/* The launch bundle's settings section (env_bundle.h). The section is found by the engine's
 * ebpf_elf_find_section (every offset and size checked against the image, which is untrusted),
 * not by its loader: the env plugin runs before any communicator exists and must not start the
 * runtime (it only takes the launch bundle's bytes from it). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/elf.h"
#include "env_bundle.h"

int env_bundle_section(const void *img, size_t size, const char *name, char **out, size_t *len)
{
	uint64_t off, l;
	uint32_t type;
	int rc = ebpf_elf_find_section(img, size, name, &off, &l, &type, NULL, 0);
	if (rc)
		return rc;
	*out = malloc(l + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, (const uint8_t *)img + off, l);
	(*out)[l] = 0;
	*len = l;
	return 0;
}

int env_bundle_parse(const void *img, size_t size, struct env_settings *set)
{
	char *text;
	size_t len;
	memset(set, 0, sizeof(*set));
	int rc = env_bundle_section(img, size, ENV_BUNDLE_SECTION, &text, &len);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	env_settings_parse(text, len, set);
	free(text);
	return 0;
}
