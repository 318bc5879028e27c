/* NCCL stand-in for the tools (plugin_host.h). */
#include "plugin_host.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/envvars.h"
#include "self_path.h"

#ifndef NCCLBPF_PLUGIN_NAME
#define NCCLBPF_PLUGIN_NAME "libnccl-ncclbpf.so"
#endif

int plugin_host_echo_info;
int plugin_host_quiet;

const char *plugin_host_default_path(void)
{
	static char path[4096];
	const char *p = ncclbpf_env_str("NCCLBPF_PLUGIN");
	if (p)
		return p;
	if (!path[0])
		self_path(SELF_LIB "/" NCCLBPF_PLUGIN_NAME, path, sizeof(path));
	return path;
}

void *plugin_host_load(const char *path, const char *sym, void **handle)
{
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		fprintf(stderr, "ncclbpf: cannot load plugin %s: %s\n", path, dlerror());
		return NULL;
	}
	void *table = dlsym(*handle, sym);
	if (!table) {
		fprintf(stderr, "ncclbpf: %s exports no %s\n", path, sym);
		dlclose(*handle);
		*handle = NULL;
	}
	return table;
}

int plugin_host_open(struct plugin_host *h, const char *path)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->path, sizeof(h->path), "%s", path);
	h->v5 = plugin_host_load(path, "ncclTunerPlugin_v5", &h->handle);
	if (!h->v5)
		return -1;
	h->v6 = dlsym(h->handle, "ncclTunerPlugin_v6");
	return 0;
}

void plugin_host_close(struct plugin_host *h)
{
	if (h->handle)
		dlclose(h->handle);
	h->handle = NULL;
}

#define LOG_KEEP 64
static char log_lines[LOG_KEEP][512];
static unsigned log_n;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void plugin_host_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
			const char *fmt, ...)
{
	(void)flags;
	(void)file;
	(void)line;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	snprintf(log_lines[log_n % LOG_KEEP], sizeof(log_lines[0]), "%s", buf);
	__atomic_store_n(&log_n, log_n + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&log_lock);
	if (level == NCCL_LOG_WARN && !plugin_host_quiet)
		fprintf(stderr, "NCCL WARN %s\n", buf);
	else if (plugin_host_echo_info)
		fprintf(stderr, "NCCL INFO %s\n", buf);
}

unsigned plugin_host_log_count(void)
{
	return __atomic_load_n(&log_n, __ATOMIC_ACQUIRE);
}

const char *plugin_host_log_line(unsigned i)
{
	static char copy[512];
	pthread_mutex_lock(&log_lock);
	snprintf(copy, sizeof(copy), "%s", i + LOG_KEEP >= log_n ? log_lines[i % LOG_KEEP] : "");
	pthread_mutex_unlock(&log_lock);
	return copy;
}

const char *plugin_host_algo_name(int a)
{
	static const char *const n[] = {
	    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
	return a >= 0 && a < 7 ? n[a] : "none";
}

const char *plugin_host_proto_name(int p)
{
	static const char *const n[] = {"LL", "LL128", "SIMPLE"};
	return p >= 0 && p < 3 ? n[p] : "none";
}

const char *plugin_host_coll_name(int c)
{
	static const char *const n[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
					"AllReduce"};
	return c >= 0 && c < 5 ? n[c] : "Other";
}

const char *plugin_host_bytes(unsigned long long b, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v == (double)(unsigned long long)v)
		snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}
