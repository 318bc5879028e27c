/* CUDA-free parts of ncclbpf-gpubench (bench_util.h). */
#define _GNU_SOURCE
#include "bench_util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncclbpf/envvars.h"

const char *const gb_op_names[GB_NOPS] = {"allreduce", "allgather", "reducescatter", "broadcast"};
const int gb_op_coll[GB_NOPS] = {4, 2, 3, 0}; /* ncclFuncAllReduce, AllGather, ReduceScatter,
						 Broadcast */

/* ncclDataType_t numbers are NCCL's ABI (nccl.h): int8 0, uint8 1, int32 2, uint32 3, int64 4,
 * uint64 5, float16 6, float32 7, float64 8, bfloat16 9. */
static const struct gb_type types[] = {
    {"int8", 0, 1, GB_SIGNED},	   {"uint8", 1, 1, GB_UNSIGNED}, {"int32", 2, 4, GB_SIGNED},
    {"uint32", 3, 4, GB_UNSIGNED}, {"int64", 4, 8, GB_SIGNED},	 {"uint64", 5, 8, GB_UNSIGNED},
    {"half", 6, 2, GB_HALF},	   {"float", 7, 4, GB_FLOAT},	 {"double", 8, 8, GB_DOUBLE},
    {"bfloat16", 9, 2, GB_BF16},   {"float16", 6, 2, GB_HALF},	 {"float32", 7, 4, GB_FLOAT},
    {"float64", 8, 8, GB_DOUBLE},  {"bf16", 9, 2, GB_BF16},	 {"int", 2, 4, GB_SIGNED},
};

const struct gb_type *gb_type_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(types[i].name, name))
			return &types[i];
	return NULL;
}

/* Our names (as ncclbpf tune reads them) and NCCL's environment spellings. */
static const char *const algo_names[] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const algo_env[] = {"Tree",	   "Ring", "CollnetDirect", "CollnetChain", "NVLS",
				       "NVLSTree", "PAT"};
static const char *const proto_names[] = {"ll", "ll128", "simple"};
static const char *const proto_env[] = {"LL", "LL128", "Simple"};
#define N_ALGOS	 7
#define N_PROTOS 3

const char *gb_algo_name(int id)
{
	return id >= 0 && id < N_ALGOS ? algo_names[id] : "-";
}

const char *gb_proto_name(int id)
{
	return id >= 0 && id < N_PROTOS ? proto_names[id] : "-";
}

static int lookup_ci(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcasecmp(names[i], s))
			return i;
	return -1;
}

int gb_parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (~0ull >> shift))
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

void gb_usage(FILE *out)
{
	fprintf(out,
		"usage: ncclbpf-gpubench [-n RANKS] [-o "
		"allreduce,allgather,reducescatter,broadcast|all]\n"
		"         [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS] [-w WARMUP] [-r REPS]\n"
		"         [-d TYPE] [--in-place] [--no-check] [--csv FILE] [--timeout SEC]\n"
		"         [--algo ALGO] [--proto PROTO] [--channels N]\n"
		"         [--plugin LIB] [--policy BUNDLE] [--no-plugin] [--target-ms MS]\n"
		"         [--hold SEC] [--split]\n"
		"  Ranks are processes on GPU rank %% nGPUs with distinct NCCL_HOSTIDs.\n"
		"  -r: each size is timed REPS times (ITERS operations each): mean, min, max.\n"
		"  --target-ms: per size, fewer iterations (at least 2) where ITERS x REPS would\n"
		"  take longer than MS (timed on the last warm-up operation; needs -w >= 1).\n"
		"  -d: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 (default "
		"float)\n"
		"  --algo tree|ring|pat|collnet_direct|collnet_chain|nvls|nvls_tree, --proto\n"
		"  ll|ll128|simple, --channels N: forced through NCCL_ALGO, NCCL_PROTO,\n"
		"  NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=N in the ranks' environment.\n"
		"  --plugin sets NCCL_TUNER_PLUGIN, --policy NCCLBPF_POLICY, --no-plugin\n"
		"  NCCL_TUNER_PLUGIN=none. GPUBENCH_TRACE_DIR=dir records each rank's tuner calls\n"
		"  (NCCLBPF_TRACE) as dir/trace.rankN; rows then show what NCCL used.\n"
		"  --csv: one line per collective and size (ncclbpf tune reads it).\n"
		"  --timeout: kill all ranks after SEC seconds (exit 3); a failed rank ends all.\n"
		"  --hold: after the last size, each rank prints its pid and waits SEC seconds\n"
		"  before destroying its communicator (read its policy maps live meanwhile:\n"
		"  ncclbpf map dump PID MAP).\n"
		"  --split: each rank also joins a second communicator (ncclCommSplit by rank\n"
		"  parity, needs -n >= 4 and even); every size runs on both, interleaved; rows\n"
		"  and #wrong cover both, the decisions shown are the first's.\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

#define ERR(...)                                                                                   \
	do {                                                                                       \
		snprintf(err, err_len, __VA_ARGS__);                                               \
		return -1;                                                                         \
	} while (0)

int gb_parse_args(int argc, char **argv, struct gb_opts *o, char *err, size_t err_len)
{
	memset(o, 0, sizeof *o);
	o->nranks = 2;
	o->min_bytes = 8;
	o->max_bytes = 64 << 20;
	o->factor = 2;
	o->iters = 20;
	o->warmup = 5;
	o->reps = 1;
	o->check = 1;
	o->type = gb_type_by_name("float");
	o->algo = o->proto = -1;
	o->ops[GB_ALLREDUCE] = 1;
	enum {
		O_NOCHECK = 256,
		O_PLUGIN,
		O_POLICY,
		O_NOPLUGIN,
		O_INPLACE,
		O_CSV,
		O_TIMEOUT,
		O_ALGO,
		O_PROTO,
		O_CHANNELS,
		O_TARGET,
		O_HOLD,
		O_AB,
		O_SPLIT
	};
	static const struct option lo[] = {{"no-check", no_argument, 0, O_NOCHECK},
					   {"plugin", required_argument, 0, O_PLUGIN},
					   {"policy", required_argument, 0, O_POLICY},
					   {"no-plugin", no_argument, 0, O_NOPLUGIN},
					   {"in-place", no_argument, 0, O_INPLACE},
					   {"csv", required_argument, 0, O_CSV},
					   {"timeout", required_argument, 0, O_TIMEOUT},
					   {"algo", required_argument, 0, O_ALGO},
					   {"proto", required_argument, 0, O_PROTO},
					   {"channels", required_argument, 0, O_CHANNELS},
					   {"target-ms", required_argument, 0, O_TARGET},
					   {"hold", required_argument, 0, O_HOLD},
					   {"ab", required_argument, 0, O_AB},
					   {"split", no_argument, 0, O_SPLIT},
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	int c, v;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:o:b:e:f:i:w:r:d:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_int(optarg, 1, GB_MAX_RANKS, &o->nranks))
				ERR("-n: ranks must be 1..%d, not '%s'", GB_MAX_RANKS, optarg);
			break;
		case 'o': {
			char buf[256];
			memset(o->ops, 0, sizeof o->ops);
			snprintf(buf, sizeof buf, "%s", optarg);
			for (char *save, *t = strtok_r(buf, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				int found = 0;
				for (int i = 0; i < GB_NOPS; i++)
					if (!strcmp(t, "all") || !strcmp(t, gb_op_names[i]))
						o->ops[i] = found = 1;
				if (!found)
					ERR("-o: unknown collective '%s'", t);
			}
			break;
		}
		case 'b':
			if (gb_parse_size(optarg, &o->min_bytes))
				ERR("-b: bad size '%s'", optarg);
			break;
		case 'e':
			if (gb_parse_size(optarg, &o->max_bytes))
				ERR("-e: bad size '%s'", optarg);
			break;
		case 'f':
			if (parse_int(optarg, 2, 1024, &v))
				ERR("-f: factor must be 2..1024, not '%s'", optarg);
			o->factor = (unsigned)v;
			break;
		case 'i':
			if (parse_int(optarg, 1, 1000000, &o->iters))
				ERR("-i: iterations must be 1..1000000, not '%s'", optarg);
			break;
		case 'w':
			if (parse_int(optarg, 0, 1000000, &o->warmup))
				ERR("-w: warm-up must be 0..1000000, not '%s'", optarg);
			break;
		case 'r':
			if (parse_int(optarg, 1, 1000, &o->reps))
				ERR("-r: repetitions must be 1..1000, not '%s'", optarg);
			break;
		case 'd':
			if (!(o->type = gb_type_by_name(optarg)))
				ERR("-d: unknown data type '%s'", optarg);
			break;
		case O_NOCHECK:
			o->check = 0;
			break;
		case O_PLUGIN:
			o->plugin = optarg;
			break;
		case O_POLICY:
			o->policy = optarg;
			break;
		case O_NOPLUGIN:
			o->no_plugin = 1;
			break;
		case O_INPLACE:
			o->in_place = 1;
			break;
		case O_CSV:
			o->csv = optarg;
			break;
		case O_TIMEOUT:
			if (parse_int(optarg, 0, 86400, &o->timeout_s))
				ERR("--timeout: seconds must be 0..86400, not '%s'", optarg);
			break;
		case O_ALGO:
			if ((o->algo = lookup_ci(algo_names, N_ALGOS, optarg)) < 0)
				ERR("--algo: unknown algorithm '%s'", optarg);
			break;
		case O_PROTO:
			if ((o->proto = lookup_ci(proto_names, N_PROTOS, optarg)) < 0)
				ERR("--proto: unknown protocol '%s'", optarg);
			break;
		case O_CHANNELS:
			if (parse_int(optarg, 1, 64, &o->channels))
				ERR("--channels: must be 1..64, not '%s'", optarg);
			break;
		case O_TARGET:
			if (parse_int(optarg, 1, 3600000, &o->target_ms))
				ERR("--target-ms: must be 1..3600000, not '%s'", optarg);
			break;
		case O_HOLD:
			if (parse_int(optarg, 1, 3600, &o->hold_s))
				ERR("--hold: seconds must be 1..3600, not '%s'", optarg);
			break;
		case O_AB: {
			const char *comma = strchr(optarg, ',');
			size_t nb = comma ? (size_t)(comma - optarg) : 0;
			if (!comma || !nb || !comma[1] || strchr(comma + 1, ',') ||
			    nb >= sizeof o->ab_base || strlen(comma + 1) >= sizeof o->ab_test)
				ERR("--ab: need BASE,TEST (two bundle paths), not '%s'", optarg);
			memcpy(o->ab_base, optarg, nb);
			o->ab_base[nb] = 0;
			snprintf(o->ab_test, sizeof o->ab_test, "%s", comma + 1);
			break;
		}
		case O_SPLIT:
			o->split = 1;
			break;
		case 'h':
			return 1;
		default:
			ERR("unknown option or missing argument: '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		ERR("unexpected argument '%s'", argv[optind]);
	if (o->min_bytes < 1 || o->max_bytes < o->min_bytes)
		ERR("sizes: need 1 <= MIN (-b) <= MAX (-e)");
	if (o->target_ms > 0 && o->warmup < 1)
		ERR("--target-ms needs at least one warm-up operation (-w)");
	if (o->no_plugin && (o->plugin || o->policy))
		ERR("--no-plugin excludes --plugin and --policy");
	if (o->ab_base[0] && (o->policy || o->no_plugin || o->target_ms > 0 || o->warmup < 1))
		ERR("--ab excludes --policy, --no-plugin and --target-ms, and needs -w >= 1");
	if (o->split && (o->nranks < 4 || o->nranks % 2 || o->ab_base[0] || o->target_ms > 0))
		ERR("--split needs an even -n >= 4 and excludes --ab and --target-ms");
	static const char *const env_names[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS",
						"NCCL_MAX_NCHANNELS"};
	int forced[4] = {o->algo >= 0, o->proto >= 0, o->channels > 0, o->channels > 0};
	for (int i = 0; i < 4; i++)
		if (!forced[i] && ncclbpf_env_str(env_names[i]))
			o->env_forced = 1;
	return 0;
}

int gb_forced_env(const struct gb_opts *o, const char *names[4], char values[4][32])
{
	int n = 0;
	if (o->algo >= 0) {
		names[n] = "NCCL_ALGO";
		snprintf(values[n++], 32, "%s", algo_env[o->algo]);
	}
	if (o->proto >= 0) {
		names[n] = "NCCL_PROTO";
		snprintf(values[n++], 32, "%s", proto_env[o->proto]);
	}
	if (o->channels > 0) {
		names[n] = "NCCL_MIN_NCHANNELS";
		snprintf(values[n++], 32, "%d", o->channels);
		names[n] = "NCCL_MAX_NCHANNELS";
		snprintf(values[n++], 32, "%d", o->channels);
	}
	return n;
}

const char *gb_config_label(const struct gb_opts *o, char *buf, size_t len)
{
	char forced[64] = "default", pol[300] = "";
	if (o->algo >= 0 || o->proto >= 0 || o->channels > 0) {
		char ch[16] = "-";
		if (o->channels > 0)
			snprintf(ch, sizeof ch, "%d", o->channels);
		snprintf(forced, sizeof forced, "%s/%s/%s", gb_algo_name(o->algo),
			 gb_proto_name(o->proto), ch);
	}
	if (o->policy) {
		const char *base = strrchr(o->policy, '/');
		snprintf(pol, sizeof pol, "policy:%s", base ? base + 1 : o->policy);
	}
	/* A policy run is labelled by its policy (plus what was forced under it); ',' would
	 * break the CSV, so it becomes ';'. */
	if (pol[0] && strcmp(forced, "default"))
		snprintf(buf, len, "%s%s+%s", o->env_forced ? "env:" : "", pol, forced);
	else
		snprintf(buf, len, "%s%s", o->env_forced ? "env:" : "", pol[0] ? pol : forced);
	for (char *p = buf; *p; p++)
		if (*p == ',' || *p == '\n' || *p == '\r')
			*p = ';';
	return buf;
}

void gb_counts(enum gb_op op, size_t bytes, int nranks, size_t type_size, size_t *send,
	       size_t *recv, size_t *size)
{
	size_t n = (size_t)nranks, elems = bytes / type_size;
	int split = op == GB_ALLGATHER || op == GB_REDUCESCATTER;
	if (split)
		elems = elems / n * n;
	if (elems == 0)
		elems = split ? n : 1;
	*size = elems * type_size;
	*send = op == GB_REDUCESCATTER ? elems : split ? elems / n : elems;
	*recv = op == GB_ALLGATHER ? elems : split ? elems / n : elems;
}

double gb_bus_factor(enum gb_op op, int n)
{
	switch (op) {
	case GB_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case GB_ALLGATHER:
	case GB_REDUCESCATTER:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

int gb_adapt_iters(double op_us, int target_ms, int reps, int max_iters)
{
	if (target_ms <= 0 || !(op_us > 0) || reps < 1)
		return max_iters;
	double n = (double)target_ms * 1000.0 / (op_us * reps);
	int lo = max_iters < 2 ? max_iters : 2;
	if (n >= max_iters)
		return max_iters;
	return n < lo ? lo : (int)n;
}

size_t gb_next_size(size_t bytes, unsigned factor, size_t max)
{
	if (bytes > max / factor)
		return 0;
	return bytes * factor;
}

int gb_input_value(int rank, size_t i)
{
	return 1 + rank % 4 + (int)(i % 4);
}

static double wrap(const struct gb_type *t, long long v)
{
	if (t->kind == GB_SIGNED && t->size == 1)
		return (double)(int8_t)(uint8_t)v;
	if (t->kind == GB_UNSIGNED && t->size == 1)
		return (double)(uint8_t)v;
	return (double)v; /* sums of 64 ranks x 7 fit every wider type exactly */
}

double gb_expected(enum gb_op op, const struct gb_type *t, int rank, int nranks, size_t i,
		   size_t recv)
{
	long long sum = 0;
	switch (op) {
	case GB_ALLREDUCE:
		for (int r = 0; r < nranks; r++)
			sum += gb_input_value(r, i);
		return wrap(t, sum);
	case GB_ALLGATHER: {
		size_t per = recv / (size_t)nranks;
		return wrap(t, gb_input_value((int)(i / per), i % per));
	}
	case GB_REDUCESCATTER:
		for (int r = 0; r < nranks; r++)
			sum += gb_input_value(r, (size_t)rank * recv + i);
		return wrap(t, sum);
	default:
		return wrap(t, gb_input_value(0, i));
	}
}

static uint32_t float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float bits_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Exact for the integers we store (normal halves); truncates otherwise. */
static uint16_t half_from(double v)
{
	uint32_t b = float_bits((float)v);
	uint32_t sign = (b >> 16) & 0x8000;
	int exp = (int)((b >> 23) & 0xff) - 127 + 15;
	if ((b & 0x7fffffff) == 0 || exp <= 0)
		return (uint16_t)sign;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	return (uint16_t)(sign | (uint32_t)exp << 10 | ((b >> 13) & 0x3ff));
}

static double half_to(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	if (exp == 0) {
		float f = (float)mant * (1.0f / 16777216.0f); /* subnormal: mant * 2^-24 */
		return sign ? -f : f;
	}
	if (exp == 31)
		return bits_float(sign | 0x7f800000u | mant << 13);
	return bits_float(sign | (exp - 15 + 127) << 23 | mant << 13);
}

void gb_store(const struct gb_type *t, void *buf, size_t i, double v)
{
	uint8_t *p = (uint8_t *)buf + i * t->size;
	switch (t->kind) {
	case GB_SIGNED:
	case GB_UNSIGNED: {
		long long x = (long long)v;
		memcpy(p, &x, t->size); /* little-endian: the low bytes */
		break;
	}
	case GB_HALF: {
		uint16_t h = half_from(v);
		memcpy(p, &h, 2);
		break;
	}
	case GB_BF16: {
		uint16_t h = (uint16_t)(float_bits((float)v) >> 16);
		memcpy(p, &h, 2);
		break;
	}
	case GB_FLOAT: {
		float f = (float)v;
		memcpy(p, &f, 4);
		break;
	}
	case GB_DOUBLE:
		memcpy(p, &v, 8);
		break;
	}
}

double gb_load(const struct gb_type *t, const void *buf, size_t i)
{
	const uint8_t *p = (const uint8_t *)buf + i * t->size;
	switch (t->kind) {
	case GB_SIGNED: {
		int64_t x = 0;
		memcpy(&x, p, t->size);
		if (t->size < 8) /* sign-extend */
			x = (int64_t)((uint64_t)x << (64 - 8 * t->size)) >> (64 - 8 * t->size);
		return (double)x;
	}
	case GB_UNSIGNED: {
		uint64_t x = 0;
		memcpy(&x, p, t->size);
		return (double)x;
	}
	case GB_HALF: {
		uint16_t h;
		memcpy(&h, p, 2);
		return half_to(h);
	}
	case GB_BF16: {
		uint16_t h;
		memcpy(&h, p, 2);
		return bits_float((uint32_t)h << 16);
	}
	case GB_FLOAT: {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	default: {
		double d;
		memcpy(&d, p, 8);
		return d;
	}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_sorted(const double *v, int n)
{
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void gb_ab_stats(const double *base, const double *test, int n, struct gb_ab *out)
{
	memset(out, 0, sizeof *out);
	if (n <= 0 || n > 1000)
		return;
	double b[1000], t[1000], r[1000];
	for (int i = 0; i < n; i++) {
		b[i] = base[i];
		t[i] = test[i];
		r[i] = base[i] > 0 ? test[i] / base[i] : 0;
	}
	qsort(b, (size_t)n, sizeof *b, cmp_double);
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	qsort(r, (size_t)n, sizeof *r, cmp_double);
	out->n = n;
	out->base_us = median_sorted(b, n);
	out->test_us = median_sorted(t, n);
	out->ratio = median_sorted(r, n);
	out->q1 = r[(n - 1) / 4];
	out->q3 = r[n - 1 - (n - 1) / 4];
	/* The median lies between the k-th smallest and k-th largest ratio with probability
	 * about 95 % for k = n/2 - 0.98 sqrt(n) (normal approximation of the binomial). */
	double root = 1;
	for (int i = 0; i < 60; i++)
		root = 0.5 * (root + n / root);
	int k = (int)(n / 2.0 - 0.98 * root);
	if (k < 1)
		k = 1;
	out->ci_lo = r[k - 1];
	out->ci_hi = r[n - k];
}

void gb_print_ab(FILE *f, const struct gb_opts *o, const struct gb_row *r)
{
	fprintf(f,
		"# ab %zu B: base %.2f us, test %.2f us (medians of %d blocks of %d ops); "
		"test/base %.4f (median of paired ratios; 95 %% CI %.4f..%.4f; q1..q3 "
		"%.4f..%.4f) base=%s test=%s\n",
		r->size, r->ab.base_us, r->ab.test_us, r->ab.n, r->iters ? r->iters : o->iters,
		r->ab.ratio, r->ab.ci_lo, r->ab.ci_hi, r->ab.q1, r->ab.q3, o->ab_base, o->ab_test);
}

void gb_stats_of(const double *v, int n, struct gb_stats *s)
{
	memset(s, 0, sizeof *s);
	if (n <= 0)
		return;
	s->min = s->max = v[0];
	double sum = 0;
	for (int i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] < s->min)
			s->min = v[i];
		if (v[i] > s->max)
			s->max = v[i];
	}
	s->mean = sum / n;
	if (n > 1) {
		double ss = 0;
		for (int i = 0; i < n; i++)
			ss += (v[i] - s->mean) * (v[i] - s->mean);
		double var = ss / (n - 1);
		/* Newton's square root: keeps this file free of libm. */
		double x = var > 1 ? var : 1;
		for (int k = 0; k < 100 && var > 0; k++)
			x = 0.5 * (x + var / x);
		s->sd = var > 0 ? x : 0;
	}
}

void gb_decision_reset(struct gb_decision *d)
{
	memset(d, 0, sizeof *d);
	d->algo = d->proto = -1;
}

/* Integer value of " key=" in line, or 0 when absent. */
static int field(const char *line, const char *key, long *out)
{
	char pat[16];
	snprintf(pat, sizeof pat, " %s=", key);
	const char *p = strstr(line, pat);
	if (!p)
		return 0;
	char *end;
	*out = strtol(p + strlen(pat), &end, 10);
	return end != p + strlen(pat);
}

int gb_decision_add_line(struct gb_decision *d, const char *line, long pid)
{
	long algo, proto, ch, cpid;
	if (strncmp(line, "call ", 5))
		return 0;
	if (pid > 0 && (!field(line, "c", &cpid) || cpid != pid))
		return 0;
	if (!field(line, "algo", &algo) || !field(line, "proto", &proto) || !field(line, "ch", &ch))
		return 0;
	if (d->calls == 0) {
		d->algo = (int)algo;
		d->proto = (int)proto;
		d->ch = (int)ch;
	} else {
		d->algo_mixed |= d->algo != algo;
		d->proto_mixed |= d->proto != proto;
		d->ch_mixed |= d->ch != ch;
	}
	d->calls++;
	return 1;
}

void gb_decision_strings(const struct gb_decision *d, const struct gb_opts *o, char algo[16],
			 char proto[16], char ch[16])
{
	int traced = d->calls > 0;
	if (traced && d->algo_mixed)
		snprintf(algo, 16, "mixed");
	else
		snprintf(algo, 16, "%s", gb_algo_name(traced && d->algo >= 0 ? d->algo : o->algo));
	if (traced && d->proto_mixed)
		snprintf(proto, 16, "mixed");
	else
		snprintf(proto, 16, "%s",
			 gb_proto_name(traced && d->proto >= 0 ? d->proto : o->proto));
	if (traced && d->ch_mixed)
		snprintf(ch, 16, "mixed");
	else if (traced && d->ch > 0)
		snprintf(ch, 16, "%d", d->ch);
	else if (o->channels > 0)
		snprintf(ch, 16, "%d", o->channels);
	else
		snprintf(ch, 16, "-");
}

void gb_print_header(FILE *f, const struct gb_opts *o, enum gb_op op, int ngpus)
{
	char label[400];
	fprintf(
	    f, "# %s, %d ranks%s on %d GPU(s), %s, sum, %s, %d iters x %d reps (+%d warm-up), %s\n",
	    gb_op_names[op], o->nranks,
	    o->split ? " (and each in a half by rank parity, interleaved)" : "", ngpus,
	    o->type->name, o->in_place ? "in-place" : "out-of-place", o->iters, o->reps, o->warmup,
	    o->no_plugin ? "no tuner plugin" : (o->policy ? o->policy : "default tuner"));
	fprintf(f, "# config %s\n", gb_config_label(o, label, sizeof label));
	fprintf(f, "%12s %12s %8s %10s %10s %10s %9s %9s %9s %9s %8s  %-6s %-6s %5s\n", "size(B)",
		"count", "type", "time(us)", "t_min", "t_max", "algbw", "busbw", "bb_min", "bb_max",
		"#wrong", "algo", "proto", "ch");
}

/* GB/s from bytes and microseconds. */
static double gbs(size_t bytes, double us)
{
	return us > 0 ? (double)bytes / us / 1e3 : 0;
}

void gb_print_row(FILE *f, const struct gb_opts *o, const struct gb_row *r)
{
	double bf = gb_bus_factor(r->op, o->nranks);
	fprintf(
	    f,
	    "%12zu %12zu %8s %10.2f %10.2f %10.2f %9.3f %9.3f %9.3f %9.3f %8llu  %-6s %-6s %5s\n",
	    r->size, r->count, o->type->name, r->time_us.mean, r->time_us.min, r->time_us.max,
	    gbs(r->size, r->time_us.mean), gbs(r->size, r->time_us.mean) * bf,
	    gbs(r->size, r->time_us.max) * bf, gbs(r->size, r->time_us.min) * bf, r->wrong, r->algo,
	    r->proto, r->ch);
}

const char gb_csv_header[] =
    "coll,bytes,count,type,ranks,inplace,config,iters,reps,time_us_mean,time_us_min,"
    "time_us_max,time_us_sd,algbw_gbs,busbw_gbs,busbw_min_gbs,busbw_max_gbs,algo,proto,"
    "channels,wrong";

void gb_print_csv_row(FILE *f, const struct gb_opts *o, const struct gb_row *r)
{
	char label[400];
	double bf = gb_bus_factor(r->op, o->nranks);
	fprintf(
	    f,
	    "%s,%zu,%zu,%s,%d,%d,%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f,%s,%s,%s,%llu\n",
	    gb_op_names[r->op], r->size, r->count, o->type->name, o->nranks, o->in_place,
	    gb_config_label(o, label, sizeof label), r->iters > 0 ? r->iters : o->iters, o->reps,
	    r->time_us.mean, r->time_us.min, r->time_us.max, r->time_us.sd,
	    gbs(r->size, r->time_us.mean), gbs(r->size, r->time_us.mean) * bf,
	    gbs(r->size, r->time_us.max) * bf, gbs(r->size, r->time_us.min) * bf, r->algo, r->proto,
	    r->ch, r->wrong);
}
