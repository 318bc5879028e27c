/* NCCL logger bridge for the net plugin (net_log.h). */
#include "net_log.h"

#include <stdarg.h>
#include <stdio.h>

static ncclDebugLogger_t logger;

void net_log_set(ncclDebugLogger_t fn)
{
	if (fn)
		__atomic_store_n(&logger, fn, __ATOMIC_RELEASE);
}

static void emit(int warn, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	ncclDebugLogger_t fn = __atomic_load_n(&logger, __ATOMIC_ACQUIRE);
	if (fn)
		fn(warn ? NCCL_LOG_WARN : NCCL_LOG_INFO, warn ? NCCL_ALL : NCCL_NET | NCCL_INIT,
		   __FILE__, __LINE__, "%s", buf);
	else if (warn)
		fprintf(stderr, "NCCLbpf NET WARN %s\n", buf);
}

void net_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(1, fmt, ap);
	va_end(ap);
}

void net_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(0, fmt, ap);
	va_end(ap);
}
