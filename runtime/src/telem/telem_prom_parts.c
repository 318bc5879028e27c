/* The parts of the Prometheus text every family shares, built-in (telem_prom.c) or exported
 * from a policy's maps (telem_maps.c): a family's head lines and the labels of every series. */
#include "telem_internal.h"

void telem_prom_family(struct tbuf *b, const char *name, const char *type, const char *help)
{
	tb_printf(b, "# HELP %s %s", name, help);
	tb_eol(b);
	tb_printf(b, "# TYPE %s %s", name, type);
	tb_eol(b);
}

void telem_prom_base_labels(struct tbuf *b)
{
	const struct telem_config *c = &telem_cfg;
	tb_printf(b,
		  "job_id=\"%s\",node=\"%s\",rank=\"%s\",local_rank=\"%s\",gpu=\"%s\",pid=\"%d\"",
		  c->id.job, c->id.host, c->id.rank, c->id.local_rank, c->id.gpu, c->id.pid);
}
