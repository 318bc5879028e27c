/* Lookups in a host's platform (progtype.h): program types by section and by name, the section
 * list for messages, a context field's read bit. */
#include <stdio.h>
#include <string.h>

#include "ncclbpf/progtype.h"

const struct ebpf_prog_type *ebpf_platform_type_by_section(const struct ebpf_platform *platform,
							   const char *section)
{
	for (uint32_t i = 0; platform && section && i < platform->n_types; i++) {
		const struct ebpf_prog_type *t = &platform->types[i];
		size_t n = strlen(t->section);
		if (n && t->section[n - 1] == '/') {
			if (!strncmp(section, t->section, n) && section[n])
				return t;
		} else if (!strcmp(section, t->section)) {
			return t;
		}
	}
	return NULL;
}

const struct ebpf_prog_type *ebpf_platform_type_by_name(const struct ebpf_platform *platform,
							const char *name)
{
	for (uint32_t i = 0; platform && name && i < platform->n_types; i++)
		if (!strcmp(platform->types[i].name, name))
			return &platform->types[i];
	return NULL;
}

void ebpf_platform_sections(const struct ebpf_platform *platform, char *buf, size_t len)
{
	size_t used = 0;
	if (!buf || !len)
		return;
	snprintf(buf, len, "none");
	for (uint32_t i = 0; platform && i < platform->n_types && used < len; i++) {
		const char *s = platform->types[i].section;
		size_t n = strlen(s);
		int w = snprintf(buf + used, len - used, "%s%s%s", i ? ", " : "", s,
				 n && s[n - 1] == '/' ? "<name>" : "");
		used += w > 0 ? (size_t)w : 0;
	}
}

uint64_t ebpf_prog_type_field_bit(const struct ebpf_prog_type *type, const char *name)
{
	for (uint32_t i = 0; type && name && i < type->n_fields; i++)
		if (!strcmp(type->fields[i].name, name))
			return 1ull << (i < 63 ? i : 63);
	return 0;
}
