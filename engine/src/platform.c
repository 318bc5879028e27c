/* Lookups in a host's platform (progtype.h): program types by section and by name, the section
 * list for messages, a prefix type's names, a context field's read bit. */
#include <stdio.h>
#include <string.h>

#include "ebpf/progtype.h"

/* A section that ends in '/' is a prefix: a name follows it. */
static int is_prefix(const char *section)
{
	size_t n = strlen(section);
	return n && section[n - 1] == '/';
}

const struct ebpf_prog_type *ebpf_platform_type_by_section(const struct ebpf_platform *platform,
							   const char *section)
{
	for (uint32_t i = 0; platform && section && i < platform->n_types; i++) {
		const struct ebpf_prog_type *t = &platform->types[i];
		size_t n = strlen(t->section);
		if (is_prefix(t->section) ? !strncmp(section, t->section, n) && section[n]
					  : !strcmp(section, t->section))
			return t;
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
		const struct ebpf_prog_type *t = &platform->types[i];
		const char *const *names = t->names;
		int w;
		if (!is_prefix(t->section) || !names) {
			w = snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "", t->section,
				     is_prefix(t->section) ? "<name>" : "");
			used += w > 0 ? (size_t)w : 0;
			continue;
		}
		for (; *names && used < len; names++) {
			w = snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "", t->section,
				     *names);
			used += w > 0 ? (size_t)w : 0;
		}
	}
}

/* Does s match name (a "=N" name: its text, then a decimal number into *num)? */
static int name_matches(const char *name, const char *s, uint64_t *num)
{
	size_t n = strlen(name);
	if (n < 2 || strcmp(name + n - 2, "=N"))
		return !strcmp(name, s);
	if (strncmp(s, name, n - 1) || !s[n - 1])
		return 0;
	uint64_t v = 0;
	for (const char *d = s + n - 1; *d; d++) {
		if (*d < '0' || *d > '9')
			return 0;
		v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(*d - '0');
	}
	*num = v;
	return 1;
}

int ebpf_prog_type_section_name(const struct ebpf_prog_type *type, const char *section,
				uint64_t *num)
{
	uint64_t scratch;
	num = num ? num : &scratch;
	*num = 0;
	if (!type || !section)
		return -1;
	size_t n = strlen(type->section);
	if (!is_prefix(type->section))
		return strcmp(section, type->section) ? -1 : 0;
	if (strncmp(section, type->section, n) || !section[n])
		return -1;
	for (int i = 0; type->names && type->names[i]; i++)
		if (name_matches(type->names[i], section + n, num))
			return i;
	return type->names ? -1 : 0;
}

uint64_t ebpf_prog_type_field_bit(const struct ebpf_prog_type *type, const char *name)
{
	for (uint32_t i = 0; type && name && i < type->n_fields; i++)
		if (!strcmp(type->fields[i].name, name))
			return 1ull << (i < 63 ? i : 63);
	return 0;
}
