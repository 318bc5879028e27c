/* The engine's one error formatter (err.h). */
#include "err.h"

#include <stdio.h>

void ebpf_verrf(char *err, size_t err_len, const char *fmt, va_list ap)
{
	if (err && err_len)
		vsnprintf(err, err_len, fmt, ap);
}

void ebpf_errf(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ebpf_verrf(err, err_len, fmt, ap);
	va_end(ap);
}
