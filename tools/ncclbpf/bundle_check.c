/* bundle_check.h */
#include "bundle_check.h"

#include <stdlib.h>

int bundle_check(const char *path, struct ncclbpf_reload_report *r)
{
	/* This process's runtime must neither watch the file nor record a trace; the
	 * environment is the command's own, set again by a command that loads the plugin. */
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_TRACE");
	*r = (struct ncclbpf_reload_report){.sz = sizeof(*r)};
	int e = ncclbpf_rt_reload(path, r);
	if (!e)
		ncclbpf_rt_unload();
	return e;
}
