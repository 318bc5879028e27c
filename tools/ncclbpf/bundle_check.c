/* bundle_check.h */
#include "bundle_check.h"
#include "ncclbpf/envvars.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The variables the check must not see; set back afterwards, so that a command that goes on to
 * start other programs (run) hands them the environment it was given. */
static const char *const hidden[] = {"NCCLBPF_WATCH", "NCCLBPF_POLICY", "NCCLBPF_TRACE"};
#define N_HIDDEN (sizeof(hidden) / sizeof(hidden[0]))

int bundle_check(const char *path, struct ncclbpf_reload_report *r)
{
	char *saved[N_HIDDEN];

	for (size_t i = 0; i < N_HIDDEN; i++) {
		const char *v = ncclbpf_env_raw(hidden[i]);
		saved[i] = v ? strdup(v) : NULL;
		if (v && !saved[i]) {
			while (i-- > 0)
				free(saved[i]);
			*r = (struct ncclbpf_reload_report){.sz = sizeof(*r)};
			strcpy(r->msg, "out of memory");
			return -ENOMEM;
		}
	}
	/* This process's runtime must neither watch the file nor record a trace. */
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_TRACE");
	*r = (struct ncclbpf_reload_report){.sz = sizeof(*r)};
	int e = ncclbpf_rt_reload(path, r);
	if (!e)
		ncclbpf_rt_unload();
	for (size_t i = 0; i < N_HIDDEN; i++) {
		if (saved[i])
			setenv(hidden[i], saved[i], 1);
		else
			unsetenv(hidden[i]);
		free(saved[i]);
	}
	return e;
}
