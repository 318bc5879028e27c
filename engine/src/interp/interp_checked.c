/* The interpreter loop instantiated as interp_run_checked (see interp_body.inc). */
#include <errno.h>
#include <string.h>

#include "interp_internal.h"

#define INTERP_NAME    interp_run_checked
#define INTERP_CHECKED 1
#define INTERP_LIMIT   1
#include "interp_body.inc"
