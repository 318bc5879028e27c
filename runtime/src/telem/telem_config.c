/* Telemetry configuration: the one place the telemetry reads its settings (at the
 * runtime's first acquire), through the one table of variables (ncclbpf/envvars.h): a value
 * that is not accepted is ignored (the default applies) and named in one WARN there. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncclbpf/envvars.h"
#include "telem_internal.h"

struct telem_config telem_cfg;

/* A path setting: the table's value, "" when unset or refused (its WARN said so). The table's
 * limit (4095 bytes) fits the buffer. */
static void str(const char *name, char *dst, size_t len)
{
	const char *v = ncclbpf_env_str(name);
	snprintf(dst, len, "%s", v ? v : "");
}

void telem_config_read(void)
{
	struct telem_config *c = &telem_cfg;
	memset(c, 0, sizeof(*c));
	str("NCCLBPF_PROM_DIR", c->prom_dir, sizeof(c->prom_dir));
	c->prom_interval_ms = ncclbpf_env_uint("NCCLBPF_PROM_INTERVAL_MS");
	c->prom_port = (uint32_t)ncclbpf_env_uint("NCCLBPF_PROM_PORT");
	c->max_bytes = ncclbpf_env_uint("NCCLBPF_PROM_MAX_BYTES");
	str("NCCLBPF_JSONL_DIR", c->jsonl_dir, sizeof(c->jsonl_dir));
	c->jsonl_every = ncclbpf_env_uint("NCCLBPF_JSONL_EVERY");
	c->jsonl_min_bytes = ncclbpf_env_uint("NCCLBPF_JSONL_MIN_BYTES");
	int exports = c->prom_dir[0] || c->prom_port || c->jsonl_dir[0];
	int on = ncclbpf_env_enum("NCCLBPF_TELEMETRY"); /* -1: unset (auto) */
	c->enabled = on >= 0 ? on : exports;
	rt_ident_read(&c->id);
}

uint32_t telem_config_port(void)
{
	if (!telem_cfg.prom_port)
		return 0;
	long lr = strtol(telem_cfg.id.local_rank, NULL, 10); /* "-": 0 */
	uint64_t p = telem_cfg.prom_port + (uint64_t)(lr > 0 ? lr : 0);
	return p <= 65535 ? (uint32_t)p : 0;
}
