/* The sections a policy may use come from one table, the NCCL platform's program types
 * (runtime/platform/nccl_platform.c), net's each by name. Checked against that table, not a list
 * written here: the loader's unknown-section message and the runtime's unserved-section message
 * name every section of it, spelled as a program writes it (net/connect, ...,
 * net/complete/time_every=N), and the runtime serves each of them and nothing else.
 *   test_sections BAD_SECTION.o (a program in SEC("xdp")) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ncclbpf/nccl_platform.h"
#include "ebpf/object.h"
#include "ncclbpf/runtime.h"

/* Is item one of the ", "-separated items of the list inside msg (after "(" or "known: ")? */
static int lists(const char *msg, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = strstr(msg, item); p; p = strstr(p + 1, item)) {
		int starts = p > msg && (p[-1] == '(' || p[-1] == ' ');
		int ends = p[n] == ',' || p[n] == ';' || p[n] == ')';
		if (starts && ends)
			return 1;
	}
	return 0;
}

/* Calls f on every section the platform has, spelled as a program writes it, and on that
 * section with a number in place of a "=N" (what a program really uses). */
static int each_section(void (*f)(const char *spelled, const char *used, void *arg), void *arg)
{
	const struct ebpf_platform *pf = ncclbpf_platform();
	int n = 0;
	for (uint32_t i = 0; i < pf->n_types; i++) {
		const struct ebpf_prog_type *t = &pf->types[i];
		const char *const *names = t->names;
		for (int k = 0; !k || (names && names[k]); k++) {
			char spelled[128], used[128];
			snprintf(spelled, sizeof(spelled), "%s%s", t->section,
				 names ? names[k] : "");
			snprintf(used, sizeof(used), "%s", spelled);
			size_t len = strlen(used);
			if (len > 2 && !strcmp(used + len - 2, "=N"))
				snprintf(used + len - 1, sizeof(used) - len + 1, "8");
			f(spelled, used, arg);
			n++;
			if (!names)
				break;
		}
	}
	return n;
}

static void in_message(const char *spelled, const char *used, void *arg)
{
	(void)used;
	CHECKF(lists(arg, spelled), "'%s' not listed in: %s", spelled, (const char *)arg);
}

static void served(const char *spelled, const char *used, void *arg)
{
	(void)arg;
	uint32_t every = 0;
	char why[1024] = "";
	CHECKF(ncclbpf_rt_section_served(used, &every, why, sizeof(why)) == 0,
	       "SEC(\"%s\") (listed as %s) is not served: %s", used, spelled, why);
	CHECKF(!strcmp(used, spelled) || every == 8, "SEC(\"%s\"): time_every %u", used, every);
}

/* The number of ", "-separated items in the list of msg that starts after start. */
static int items(const char *msg, const char *start)
{
	const char *p = strstr(msg, start);
	if (!p)
		return -1;
	int n = 1;
	for (p += strlen(start); *p && *p != ';' && *p != ')'; p++)
		n += p[0] == ',' && p[1] == ' ';
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s BAD_SECTION.o\n", argv[0]);
		return 2;
	}
	/* The loader's message for a section that is no program type. */
	char err[1024] = "";
	struct ebpf_object *obj = ncclbpf_object_open_file(argv[1], NULL, err, sizeof(err));
	CHECK(obj == NULL);
	ebpf_object__close(obj);
	CHECKF(strstr(err, "section 'xdp': unknown program type (known: "), "%s", err);
	int n = each_section(in_message, err);
	CHECKF(items(err, "(known: ") == n, "%d sections in the table, listed: %s", n, err);

	/* The runtime's message for a net name no hook serves, and one for N out of range. */
	static const char *const unserved[] = {
	    "net/complte", "net/complete/time_every=0", "net/complete/time_every=1048577",
	    "net/complete/time_every=", "net/complete/time_every=8x"};
	for (size_t i = 0; i < sizeof(unserved) / sizeof(unserved[0]); i++) {
		char why[1024] = "", want[128];
		CHECKF(ncclbpf_rt_section_served(unserved[i], NULL, why, sizeof(why)) != 0,
		       "SEC(\"%s\") is served", unserved[i]);
		snprintf(want, sizeof(want), "no hook serves SEC(\"%s\") (", unserved[i]);
		CHECKF(strstr(why, want), "%s", why);
		each_section(in_message, why);
		CHECKF(items(why, want) == n, "%d sections in the table, listed: %s", n, why);
	}
	/* Every section of the table is served: no section is listed that fails to load. */
	each_section(served, NULL);
	return check_summary("test_sections");
}
