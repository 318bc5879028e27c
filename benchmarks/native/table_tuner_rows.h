/* The rows of policies/table_tuner.c, for its two native twins (native_table_tuner.c and
 * table_tuner() in ../tuner_native_policies.c): size -> algorithm, protocol, channels; the first
 * row whose max_bytes covers the message wins, 0 channels leave NCCL's count. */
#ifndef NCCLBPF_TABLE_TUNER_ROWS_H
#define NCCLBPF_TABLE_TUNER_ROWS_H

#include <stdint.h>

#define TABLE_TUNER_ROWS 6
struct table_tuner_row {
	uint64_t max_bytes;
	int32_t algorithm, protocol, n_channels; /* NCCL's ids (0 TREE, 1 RING; 0 LL, 1 LL128,
						    2 SIMPLE) */
	uint32_t _pad;
};
#define TABLE_TUNER_ROWS_INIT                                                                      \
	{                                                                                          \
		{4096, 0, 0, 2, 0}, {65536, 1, 0, 4, 0}, {1 << 20, 1, 1, 8, 0},                    \
		    {16 << 20, 1, 2, 16, 0}, {256 << 20, 1, 2, 0, 0}, {0, 0, 0, 0, 0},             \
	}

#endif
