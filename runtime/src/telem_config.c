/* Telemetry configuration: the one place the telemetry reads its settings (at the
 * runtime's first acquire). docs/deploying.md, "Telemetry", describes every variable. A value
 * that is not accepted is ignored (the default applies) and named in one WARN. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "telem_internal.h"

struct telem_config telem_cfg;

static void note(const char *name, const char *v, const char *accepted)
{
	size_t n = strlen(telem_cfg.warnings);
	snprintf(telem_cfg.warnings + n, sizeof(telem_cfg.warnings) - n, "%s%s=%.40s (%s)",
		 n ? ", " : "", name, v, accepted);
}

/* An unsigned decimal in lo..hi, else dflt (and a note when set). */
static uint64_t num(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-' || x < lo || x > hi) {
		char acc[64];
		snprintf(acc, sizeof(acc), "accepted: %llu..%llu", (unsigned long long)lo,
			 (unsigned long long)hi);
		note(name, v, acc);
		return dflt;
	}
	return x;
}

static void str(const char *name, char *dst, size_t len)
{
	const char *v = getenv(name);
	dst[0] = 0;
	if (!v || !*v)
		return;
	if (strlen(v) >= len) {
		note(name, v, "too long");
		return;
	}
	memcpy(dst, v, strlen(v) + 1);
}

void telem_config_read(void)
{
	struct telem_config *c = &telem_cfg;
	memset(c, 0, sizeof(*c));
	str("NCCLBPF_PROM_DIR", c->prom_dir, sizeof(c->prom_dir));
	c->prom_interval_ms = num("NCCLBPF_PROM_INTERVAL_MS", 10, 3600000, 15000);
	c->prom_port = (uint32_t)num("NCCLBPF_PROM_PORT", 0, 65535, 0);
	c->max_bytes = num("NCCLBPF_PROM_MAX_BYTES", 65536, 1ull << 30, 16ull << 20);
	str("NCCLBPF_JSONL_DIR", c->jsonl_dir, sizeof(c->jsonl_dir));
	c->jsonl_every = num("NCCLBPF_JSONL_EVERY", 1, 1ull << 30, 1);
	c->jsonl_min_bytes = num("NCCLBPF_JSONL_MIN_BYTES", 0, 1ull << 50, 0);
	int exports = c->prom_dir[0] || c->prom_port || c->jsonl_dir[0];
	c->enabled = (int)num("NCCLBPF_TELEMETRY", 0, 1, exports);
	rt_ident_read(&c->id);
	if (c->warnings[0])
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf telemetry: ignored %s; defaults apply",
		       c->warnings);
}

uint32_t telem_config_port(void)
{
	if (!telem_cfg.prom_port)
		return 0;
	long lr = strtol(telem_cfg.id.local_rank, NULL, 10); /* "-": 0 */
	uint64_t p = telem_cfg.prom_port + (uint64_t)(lr > 0 ? lr : 0);
	return p <= 65535 ? (uint32_t)p : 0;
}
