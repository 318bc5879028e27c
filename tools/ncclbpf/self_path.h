/* Files the tools use, found relative to the running executable, never through a path baked in
 * at build time: with the executable in <prefix>/bin, the plugin is <prefix>/lib/..., shipped
 * policies and traces <prefix>/share/ncclbpf/... The build tree is laid out the same way
 * (build/bin, build/lib, build/share/ncclbpf), so a build and an installation behave alike. */
#ifndef NCCLBPF_SELF_PATH_H
#define NCCLBPF_SELF_PATH_H

#include <stddef.h>

/* Where shipped files live, relative to the executable's folder. */
#define SELF_LIB   "../lib"
#define SELF_SHARE "../share/ncclbpf"

/* Writes "<folder of this executable>/<rel>" into out. Returns 0, or -1 when the executable's
 * path is unknown or the result does not fit (out then holds rel itself). */
int self_path(const char *rel, char *out, size_t len);

#endif
