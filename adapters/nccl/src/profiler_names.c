/* String -> id tables for profiler descriptors (profiler_names.h). Names as NCCL 2.27-2.30
 * print them: ncclFuncToString, ncclAlgoToString, ncclProtoToString, ncclDatatypeToString. */
#include "profiler_names.h"

#include <string.h>

struct name_id {
	const char *name;
	int32_t id;
};

static int32_t lookup(const struct name_id *t, size_t n, const char *s, int32_t dflt)
{
	if (!s)
		return dflt;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, s))
			return t[i].id;
	return dflt;
}

#define N(t) (sizeof(t) / sizeof(t[0]))

uint32_t prof_func_id(const char *s)
{
	/* Most frequent first: the table is scanned per collective. */
	static const struct name_id t[] = {
	    {"AllReduce", 4}, {"AllGather", 2}, {"ReduceScatter", 3}, {"Broadcast", 0},
	    {"Reduce", 1},    {"SendRecv", 5},	{"Send", 6},	      {"Recv", 7},
	    {"AlltoAll", 8},  {"Scatter", 9},	{"Gather", 10},	      {"AllGatherV", 11},
	};
	return (uint32_t)lookup(t, N(t), s, -1);
}

int32_t prof_algo_id(const char *s)
{
	static const struct name_id t[] = {
	    {"RING", 1},	   {"TREE", 0}, {"NVLS", 4},	      {"NVLS_TREE", 5},
	    {"COLLNET_DIRECT", 2}, {"PAT", 6},	{"COLLNET_CHAIN", 3},
	};
	return lookup(t, N(t), s, -1);
}

int32_t prof_proto_id(const char *s)
{
	static const struct name_id t[] = {{"SIMPLE", 2}, {"LL", 0}, {"LL128", 1}};
	return lookup(t, N(t), s, -1);
}

uint32_t prof_type_size(const char *s)
{
	static const struct name_id t[] = {
	    {"ncclFloat32", 4},
	    {"ncclBfloat16", 2},
	    {"ncclFloat16", 2},
	    {"ncclFloat64", 8},
	    {"ncclInt32", 4},
	    {"ncclInt8", 1},
	    {"ncclUint32", 4},
	    {"ncclInt64", 8},
	    {"ncclUint64", 8},
	    {"ncclFloat8e4m3", 1},
	    {"ncclFloat8e5m2", 1},
	    {"Unknown", 1}, /* ncclUint8: ncclDatatypeToString has no case for it */
	};
	return (uint32_t)lookup(t, N(t), s, 0);
}
