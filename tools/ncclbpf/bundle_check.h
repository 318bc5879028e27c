/* A bundle checked the way the plugin loads it (parse, limits, verify, load, JIT in this
 * process's own copy of the runtime), without touching anything outside this process. Used by
 * the commands that must refuse a bundle that would not load before they do anything else
 * (reload --check, replay, bench, run). The environment is left as it was. */
#ifndef NCCLBPF_BUNDLE_CHECK_H
#define NCCLBPF_BUNDLE_CHECK_H

#include "ncclbpf/runtime.h"

/* Loads path and unloads it again: 0, or -errno with the reason in r->msg. */
int bundle_check(const char *path, struct ncclbpf_reload_report *r);

#endif
