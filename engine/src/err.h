/* The engine's one error formatter. Errors are a negative errno returned plus one line written
 * into a buffer the caller supplies (docs/architecture.md, Conventions); every engine file
 * writes that line through these, a NULL buffer or zero length meaning "no message wanted". */
#ifndef EBPF_ENGINE_ERR_H
#define EBPF_ENGINE_ERR_H

#include <stdarg.h>
#include <stddef.h>

__attribute__((format(printf, 3, 4))) void ebpf_errf(char *err, size_t err_len, const char *fmt,
						     ...);
__attribute__((format(printf, 3, 0))) void ebpf_verrf(char *err, size_t err_len, const char *fmt,
						      va_list ap);

#endif
