/* Native twin of policies/table_tuner.c (native_tuner.h): the first row whose max_bytes covers
 * the message names the algorithm, protocol and channels; an unavailable cell leaves the whole
 * decision to NCCL, as the policy's outputs would be refused. */
#include "native_tuner.h"
#include "table_tuner_rows.h"

/* Not const: like the policy's .data map, an operator could change it at run time. */
static struct table_tuner_row table[TABLE_TUNER_ROWS] = TABLE_TUNER_ROWS_INIT;

static void decide(const struct native_comm *c, ncclFunc_t coll, size_t n_bytes, float *t, int na,
		   int np, int *n_channels)
{
	(void)c;
	(void)coll;
	for (int i = 0; i < TABLE_TUNER_ROWS; i++) {
		if (n_bytes > table[i].max_bytes)
			continue;
		if (native_pick(t, na, np, table[i].algorithm, table[i].protocol) &&
		    table[i].n_channels > 0 && table[i].n_channels <= NCCL_MAX_CHANNELS)
			*n_channels = table[i].n_channels;
		return;
	}
}
