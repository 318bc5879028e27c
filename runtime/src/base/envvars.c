/* The environment variables (ncclbpf/envvars.h): the one table, and its readers. The only
 * file of the runtime, the adapters and the tools that calls getenv. */
#include "ncclbpf/envvars.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define P	       NCCLBPF_ENV_PATH
#define T	       NCCLBPF_ENV_TEXT
#define B	       NCCLBPF_ENV_BOOL
#define U	       NCCLBPF_ENV_UINT
#define E	       NCCLBPF_ENV_ENUM
#define H	       NCCLBPF_ENV_HEX64
#define PATH_MAX_LEN   4095
#define LAUNCHER_JOB   "job name in the process record when NCCLBPF_JOB is unset (the first set wins)"
#define LAUNCHER_RANK  "rank in the process record (the first set wins)"
#define LAUNCHER_LOCAL "local rank in the process record (the first set wins)"
#define NCCL_FORCED    "`ncclbpf-gpubench` says when one of these forces NCCL's choice"

static const struct ncclbpf_env_var vars[] = {
    /* --- the plugin --- */
    {"NCCLBPF_POLICY", P, NCCLBPF_ENV_PLUGIN, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "the policy bundle (one BPF ELF object); unset, missing or rejected means NCCL's own "
     "tuning plus one WARN line (unset and the library only NCCL's net plugin: INFO lines "
     "only). A regular file in directories only you or root can write (docs/security.md)"},
    {"NCCLBPF_ENGINE", E, NCCLBPF_ENV_PLUGIN, 0, 0, "jit|interp", 0, "jit",
     "execution engine (the interpreter where there is no JIT)"},
    {"NCCLBPF_WATCH", B, NCCLBPF_ENV_PLUGIN, 0, 1, NULL, 1, "1",
     "0: do not watch the bundle for hot reload (off anyway with NCCLBPF_CP_DIR)"},
    {"NCCLBPF_TRACE", P, NCCLBPF_ENV_PLUGIN, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "record every tuner call (inputs incl. cost table, decision NCCL got), every profiler "
     "event the plugin tracks and every net plugin hook event, appended to this file (a template: "
     "%p process id, %h host name, "
     "%% a %; created mode 0600, never through a symbolic link)"},
    {"NCCLBPF_DEBUG", B, NCCLBPF_ENV_PLUGIN, 0, 1, NULL, 0, "0", "1: lifecycle messages on stderr"},
    {"NCCLBPF_MAX_MAP_BYTES", NCCLBPF_ENV_BYTES, NCCLBPF_ENV_PLUGIN, 1u << 20, 1ull << 40, NULL,
     1u << 30, "1G",
     "memory all maps of one bundle may declare; a bundle over it, or over the other fixed "
     "limits, is refused before anything is allocated or verified (docs/security.md, "
     "\"Limits\"). The instances of per-communicator maps, all communicators together, are "
     "held to it too"},
    {"NCCLBPF_EPOCH_MEMBARRIER", B, NCCLBPF_ENV_PLUGIN, 0, 1, NULL, 1, "1",
     "0: epoch readers use a full barrier instead of relying on `membarrier(2)` (chosen "
     "automatically where the kernel lacks it; costs a few ns per hook call; for diagnosing a "
     "host)"},
    /* --- live inspection --- */
    {"NCCLBPF_INSPECT", B, NCCLBPF_ENV_INSPECT, 0, 1, NULL, 1, "1",
     "0: no live inspection (`ncclbpf ps`, `stat`, `map`; docs/operating.md)"},
    {"NCCLBPF_INSPECT_INTERVAL_US", U, NCCLBPF_ENV_INSPECT, 0, 1000000, NULL, 1000, "1000",
     "the inspection server answers at most one request per N µs (docs/operating.md, "
     "\"Cost\")"},
    {"NCCLBPF_JOB", T, NCCLBPF_ENV_INSPECT, 0, 127, NULL, 0, "unset",
     "job name in the process record (`ncclbpf run` sets it)"},
    /* --- the control plane --- */
    {"NCCLBPF_CP_DIR", P, NCCLBPF_ENV_CP, 0, 3583, NULL, 0, "unset",
     "the control-plane directory: turns the control plane on (docs/control-plane.md) and is "
     "where processes register for inspection (else `/dev/shm/ncclbpf-<uid>`). Every level must "
     "be yours or root's and writable by no one else, else both are off with a WARN"},
    {"NCCLBPF_CP_POLL_MS", U, NCCLBPF_ENV_CP, 1, 10000, NULL, 5, "5",
     "control thread poll interval in ms"},
    {"NCCLBPF_CP_LEAD_CALLS", U, NCCLBPF_ENV_CP, 1, 1u << 30, NULL, 0, "adaptive",
     "fence lead in tuner calls (default: max(64, calls the communicator made in the last "
     "500 ms))"},
    {"NCCLBPF_CP_WAIT_MS", U, NCCLBPF_ENV_CP, 1, 3600000, NULL, 2000, "2000",
     "longest a tuner call waits at a fence for a decision it does not know yet; one more "
     "such wait if the decision can be neither read nor created, then the member gives up "
     "(docs/control-plane.md)"},
    {"NCCLBPF_CP_LOG", P, NCCLBPF_ENV_CP, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "decision log: one line per activation (comm, member, seq, g, hash), appended (created "
     "mode 0600, never through a symbolic link)"},
    {"NCCLBPF_CP_REJECT_HASH", H, NCCLBPF_ENV_CP, 0, 0, NULL, 0, "unset",
     "refuse proposals whose hash is this (16 hex digits): a local deny-list"},
    /* --- the net plugin --- */
    {"NCCLBPF_NET_IFNAME", T, NCCLBPF_ENV_NET, 0, 255, NULL, 0, "NCCL_SOCKET_IFNAME",
     "interfaces, NCCL's syntax: comma-separated name prefixes, `^` excludes, `=` exact "
     "(`^=eth0,lo`); unset everywhere: `ib*`, else all but `docker*`, `lo*`, `virbr*`, else "
     "`docker*`, else loopback"},
    {"NCCLBPF_NET_NSOCKS", U, NCCLBPF_ENV_NET, 1, 16, NULL, 4, "4",
     "sockets carrying payload per connection: 1, one socket for everything; N > 1, a control "
     "socket plus N data sockets"},
    {"NCCLBPF_NET_NTHREADS", U, NCCLBPF_ENV_NET, 1, 16, NULL, 0, "NSOCKS",
     "helper threads per connection moving data-socket chunks (at most one per data socket)"},
    {"NCCLBPF_NET_MIN_CHUNK", U, NCCLBPF_ENV_NET, 4096, 1u << 30, NULL, 65536, "65536",
     "a message of at least this many bytes is cut into min(N, size / MIN_CHUNK) page-aligned "
     "chunks, one per data socket"},
    {"NCCLBPF_NET_MAXRECVS", U, NCCLBPF_ENV_NET, 1, 32, NULL, 8, "8",
     "receives NCCL may group into one `irecv` (`maxRecvs`)"},
    {"NCCLBPF_NET_INNER", P, NCCLBPF_ENV_NET, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "delegate to this net plugin (a path: a regular file in directories only you or root can "
     "write) instead of our transport (docs/net-plugin.md)"},
    {"NCCLBPF_NET_DEFER", B, NCCLBPF_ENV_NET, 0, 1, NULL, 1, "1",
     "0: run `net/complete` programs inline on NCCL's proxy thread instead of queueing them for "
     "the drain thread"},
    {"NCCLBPF_NET_DRAIN", B, NCCLBPF_ENV_NET, 0, 1, NULL, 1, "1",
     "0: no drain thread; queued completion programs run when a queue fills, at map reads, "
     "reloads and connection closes"},
    {"NCCLBPF_NET_TIME_EVERY", U, NCCLBPF_ENV_NET, 1, 1u << 20, NULL, 0, "the program's",
     "sampled timing, over the program's own choice (`net/complete`: every request; "
     "`net/complete/time_every=N`: one in N): stamp every Nth post per connection when only a "
     "completion's `duration_ns` needs it (1 = all); `ncclbpf stat` shows the stride in effect"},
    {"NCCLBPF_NET_HELLO_MS", U, NCCLBPF_ENV_NET, 10, 600000, NULL, 5000, "5000",
     "how long an accepted socket may take to become part of a complete connection (its hello, "
     "and its connection's other sockets), in ms; then it is closed (docs/net-plugin.md, \"What "
     "the transport trusts\")"},
    {"NCCLBPF_NET_TSC", E, NCCLBPF_ENV_NET, 0, 0, "0|1", -1, "auto",
     "time request durations from the TSC (1) or CLOCK_MONOTONIC (0); default: the TSC where "
     "the kernel's clocksource is `tsc`; either way calibrated against CLOCK_MONOTONIC at "
     "start-up (`time_ns` is always CLOCK_MONOTONIC)"},
    /* --- telemetry --- */
    {"NCCLBPF_TELEMETRY", E, NCCLBPF_ENV_TELEMETRY, 0, 0, "0|1", -1, "auto",
     "keep the built-in collective tables; default: on when an export below is set, else off "
     "(off costs nothing: NCCL emits no profiler events without a profiler program)"},
    {"NCCLBPF_PROM_DIR", P, NCCLBPF_ENV_TELEMETRY, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "write a node_exporter textfile `DIR/ncclbpf_<host>_<pid>.prom` (one per process), replaced "
     "atomically, removed when the process's last communicator is gone"},
    {"NCCLBPF_PROM_INTERVAL_MS", U, NCCLBPF_ENV_TELEMETRY, 10, 3600000, NULL, 15000, "15000",
     "how often the textfile is rewritten, in ms"},
    {"NCCLBPF_PROM_PORT", U, NCCLBPF_ENV_TELEMETRY, 0, 65535, NULL, 0, "unset",
     "serve `GET /metrics` on `127.0.0.1:P+LOCAL_RANK` (one port per process of a node)"},
    {"NCCLBPF_PROM_MAX_BYTES", NCCLBPF_ENV_BYTES, NCCLBPF_ENV_TELEMETRY, 65536, 1u << 30, NULL,
     16u << 20, "16M",
     "largest Prometheus text; series beyond it are left out and counted in "
     "`ncclbpf_exporter_truncated_total`"},
    {"NCCLBPF_JSONL_DIR", P, NCCLBPF_ENV_TELEMETRY, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "append one JSON object per collective to `DIR/ncclbpf_<host>_<pid>.jsonl`"},
    {"NCCLBPF_JSONL_EVERY", U, NCCLBPF_ENV_TELEMETRY, 1, 1u << 30, NULL, 1, "1",
     "write one collective in N per communicator"},
    {"NCCLBPF_JSONL_MIN_BYTES", U, NCCLBPF_ENV_TELEMETRY, 0, 1ull << 50, NULL, 0, "0",
     "leave out collectives smaller than N bytes (nccl-tests' size); they do not count for "
     "`EVERY` either"},
    /* --- the tools --- */
    {"NCCLBPF_PLUGIN", P, NCCLBPF_ENV_TOOLS, 0, PATH_MAX_LEN, NULL, 0, "the built one",
     "the plugin library `ncclbpf replay`, `bench` and `tune` load"},
    {"NCCLBPF_TUNE_TEMPLATE", P, NCCLBPF_ENV_TOOLS, 0, PATH_MAX_LEN, NULL, 0,
     "../policies/tuned_table.o", "`ncclbpf tune`'s template bundle (default: next to the binary)"},
    {"GPUBENCH_TRACE_DIR", P, NCCLBPF_ENV_TOOLS, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "`ncclbpf-gpubench`: record each rank's decisions to DIR/trace.rankN"},
    /* --- set elsewhere, read here --- */
    {"NCCL_SOCKET_IFNAME", T, NCCLBPF_ENV_ELSEWHERE, 0, 255, NULL, 0, "unset",
     "NCCL's interface selection: the net plugin's when NCCLBPF_NET_IFNAME is unset"},
    {"NCCL_SOCKET_FAMILY", E, NCCLBPF_ENV_ELSEWHERE, 0, 0, "AF_INET|AF_INET6", -1, "both",
     "restricts the net plugin's address family, as NCCL's own"},
    {"NCCL_TUNER_PLUGIN", T, NCCLBPF_ENV_ELSEWHERE, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "whether you chose these plugins yourself decides what the plugin's log lines say"},
    {"NCCL_PROFILER_PLUGIN", T, NCCLBPF_ENV_ELSEWHERE, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "whether you chose these plugins yourself decides what the plugin's log lines say"},
    {"NCCL_ALGO", T, NCCLBPF_ENV_ELSEWHERE, 0, 255, NULL, 0, "unset", NCCL_FORCED},
    {"NCCL_PROTO", T, NCCLBPF_ENV_ELSEWHERE, 0, 255, NULL, 0, "unset", NCCL_FORCED},
    {"NCCL_MIN_NCHANNELS", T, NCCLBPF_ENV_ELSEWHERE, 0, 255, NULL, 0, "unset", NCCL_FORCED},
    {"NCCL_MAX_NCHANNELS", T, NCCLBPF_ENV_ELSEWHERE, 0, 255, NULL, 0, "unset", NCCL_FORCED},
    {"SLURM_JOB_ID", T, NCCLBPF_ENV_ELSEWHERE, 0, 127, NULL, 0, "unset", LAUNCHER_JOB},
    {"TORCHELASTIC_RUN_ID", T, NCCLBPF_ENV_ELSEWHERE, 0, 127, NULL, 0, "unset", LAUNCHER_JOB},
    {"PBS_JOBID", T, NCCLBPF_ENV_ELSEWHERE, 0, 127, NULL, 0, "unset", LAUNCHER_JOB},
    {"LSB_JOBID", T, NCCLBPF_ENV_ELSEWHERE, 0, 127, NULL, 0, "unset", LAUNCHER_JOB},
    {"FLUX_JOB_ID", T, NCCLBPF_ENV_ELSEWHERE, 0, 127, NULL, 0, "unset", LAUNCHER_JOB},
    {"JOB_ID", T, NCCLBPF_ENV_ELSEWHERE, 0, 127, NULL, 0, "unset", LAUNCHER_JOB},
    {"RANK", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_RANK},
    {"OMPI_COMM_WORLD_RANK", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_RANK},
    {"PMIX_RANK", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_RANK},
    {"PMI_RANK", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_RANK},
    {"SLURM_PROCID", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_RANK},
    {"CUDA_VISIBLE_DEVICES", T, NCCLBPF_ENV_ELSEWHERE, 0, PATH_MAX_LEN, NULL, 0, "unset",
     "the GPU label of the telemetry and the process record: the one device it leaves this "
     "process, else the local rank's entry"},
    {"LOCAL_RANK", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_LOCAL},
    {"OMPI_COMM_WORLD_LOCAL_RANK", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset",
     LAUNCHER_LOCAL},
    {"MPI_LOCALRANKID", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_LOCAL},
    {"SLURM_LOCALID", T, NCCLBPF_ENV_ELSEWHERE, 0, 15, NULL, 0, "unset", LAUNCHER_LOCAL},
};

#define N_VARS (sizeof(vars) / sizeof(vars[0]))
static unsigned char warned[N_VARS]; /* one WARN per variable and process */

/* The path settings the plugin opens when it starts, and how (`ncclbpf env` checks them so). */
static const struct {
	const char *name;
	enum ncclbpf_env_use use;
} uses[] = {
    {"NCCLBPF_POLICY", NCCLBPF_ENV_USE_BUNDLE},	    /* policy/launch_bundle.c */
    {"NCCLBPF_TRACE", NCCLBPF_ENV_USE_TEMPLATE},    /* policy/trace.c */
    {"NCCLBPF_CP_DIR", NCCLBPF_ENV_USE_DIR},	    /* cp/cp_state.c */
    {"NCCLBPF_CP_LOG", NCCLBPF_ENV_USE_APPEND},	    /* cp/cp_state.c */
    {"NCCLBPF_NET_INNER", NCCLBPF_ENV_USE_LIBRARY}, /* adapters/nccl/src/net_inner.c */
    {"NCCLBPF_PROM_DIR", NCCLBPF_ENV_USE_EXPORT},   /* telem/telem_export.c */
    {"NCCLBPF_JSONL_DIR", NCCLBPF_ENV_USE_EXPORT},  /* telem/telem_export.c */
};

enum ncclbpf_env_use ncclbpf_env_use(const struct ncclbpf_env_var *v)
{
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++)
		if (!strcmp(uses[i].name, v->name))
			return uses[i].use;
	return NCCLBPF_ENV_USE_NONE;
}

const struct ncclbpf_env_var *ncclbpf_env_table(size_t *n)
{
	*n = N_VARS;
	return vars;
}

const struct ncclbpf_env_var *ncclbpf_env_find(const char *name)
{
	for (size_t i = 0; i < N_VARS; i++)
		if (!strcmp(vars[i].name, name))
			return &vars[i];
	return NULL;
}

const char *ncclbpf_env_raw(const char *name)
{
	return getenv(name);
}

/* value as the WARN shows it: cut short, control characters as '?'. */
static void shown_value(const char *value, char *out, size_t len)
{
	size_t i = 0;
	for (; value[i] && i + 1 < len && i < 64; i++)
		out[i] = (unsigned char)value[i] < 0x20 || value[i] == 0x7f ? '?' : value[i];
	out[i] = 0;
	if (value[i] && i + 4 < len)
		memcpy(out + i, "...", 4);
}

/* Parses value under v's rule into *out (BOOL, UINT, HEX64: the number; ENUM: the index). */
static int parse(const struct ncclbpf_env_var *v, const char *value, uint64_t *out)
{
	size_t len = strlen(value);
	char *end;
	switch (v->type) {
	case NCCLBPF_ENV_PATH:
	case NCCLBPF_ENV_TEXT:
		*out = 0;
		return len <= v->max ? 0 : -1;
	case NCCLBPF_ENV_BOOL:
		*out = value[0] == '1';
		return (!strcmp(value, "0") || !strcmp(value, "1")) ? 0 : -1;
	case NCCLBPF_ENV_UINT:
		if (value[0] < '0' || value[0] > '9')
			return -1;
		errno = 0;
		*out = strtoull(value, &end, 10);
		return !errno && !*end && *out >= v->min && *out <= v->max ? 0 : -1;
	case NCCLBPF_ENV_ENUM: {
		uint64_t i = 0;
		for (const char *s = v->values; *s; i++) {
			size_t k = strcspn(s, "|");
			if (k == len && !strncmp(s, value, k)) {
				*out = i;
				return 0;
			}
			s += k + (s[k] == '|');
		}
		return -1;
	}
	case NCCLBPF_ENV_HEX64:
		if (len < 1 || len > 16 || strspn(value, "0123456789abcdefABCDEF") != len)
			return -1;
		*out = strtoull(value, NULL, 16);
		return 0;
	case NCCLBPF_ENV_BYTES: {
		if (value[0] < '0' || value[0] > '9')
			return -1;
		errno = 0;
		uint64_t n = strtoull(value, &end, 10);
		const char *units = "KMGT", *u = *end ? strchr(units, *end) : NULL;
		unsigned shift = u ? 10u * (unsigned)(u - units + 1) : 0;
		if (errno || (*end && (!u || end[1])) || n > (UINT64_MAX >> shift))
			return -1;
		*out = n << shift;
		return *out >= v->min && *out <= v->max ? 0 : -1;
	}
	}
	return -1;
}

/* What v accepts and what applies instead, for the WARN. */
static void accepted(const struct ncclbpf_env_var *v, char *out, size_t len)
{
	switch (v->type) {
	case NCCLBPF_ENV_PATH:
	case NCCLBPF_ENV_TEXT:
		snprintf(out, len, "at most %llu bytes); unset", (unsigned long long)v->max);
		return;
	case NCCLBPF_ENV_BOOL:
		snprintf(out, len, "0 or 1); using %lld", (long long)v->dflt);
		return;
	case NCCLBPF_ENV_UINT:
		snprintf(out, len, "%llu..%llu); using %s", (unsigned long long)v->min,
			 (unsigned long long)v->max, v->shown);
		return;
	case NCCLBPF_ENV_ENUM: {
		size_t k = (size_t)snprintf(out, len, "one of ");
		for (const char *s = v->values; *s && k < len;) {
			size_t w = strcspn(s, "|");
			k += (size_t)snprintf(out + k, len - k, "%.*s%s", (int)w, s,
					      s[w] == '|' ? ", " : "");
			s += w + (s[w] == '|');
		}
		if (k < len)
			snprintf(out + k, len - k, "); using %s", v->shown);
		return;
	}
	case NCCLBPF_ENV_HEX64:
		snprintf(out, len, "1 to 16 hex digits); unset");
		return;
	case NCCLBPF_ENV_BYTES:
		snprintf(out, len, "%llu..%llu bytes, or with a K, M, G or T suffix); using %s",
			 (unsigned long long)v->min, (unsigned long long)v->max, v->shown);
		return;
	}
}

int ncclbpf_env_check(const struct ncclbpf_env_var *v, const char *value, char *msg, size_t msg_len)
{
	uint64_t x;
	if (!value || !*value || parse(v, value, &x) == 0)
		return 0;
	char val[80], acc[200];
	shown_value(value, val, sizeof(val));
	accepted(v, acc, sizeof(acc));
	snprintf(msg, msg_len, "%s=%s ignored (accepted: %s", v->name, val, acc);
	return -1;
}

/* The accepted value of name (1, *x), unset (0), or refused (-1, its WARN said so). */
static int lookup(const char *name, const struct ncclbpf_env_var **vp, const char **raw,
		  uint64_t *x)
{
	const struct ncclbpf_env_var *v = ncclbpf_env_find(name);
	*vp = v;
	*raw = NULL;
	if (!v) {
		/* A reader asking for a name outside the table is a bug; a test keeps it out. */
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: %s is not in the variable table; ignored", name);
		return -1;
	}
	const char *value = getenv(name);
	if (!value || !*value)
		return 0;
	if (parse(v, value, x) == 0) {
		*raw = value;
		return 1;
	}
	size_t i = (size_t)(v - vars);
	if (!__atomic_exchange_n(&warned[i], 1, __ATOMIC_RELAXED)) {
		char msg[512];
		ncclbpf_env_check(v, value, msg, sizeof(msg));
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: %s", msg);
	}
	return -1;
}

const char *ncclbpf_env_str(const char *name)
{
	const struct ncclbpf_env_var *v;
	const char *raw;
	uint64_t x;
	return lookup(name, &v, &raw, &x) == 1 ? raw : NULL;
}

/* The accepted value of a typed variable, else the table's default (no_entry: name is not in the
 * table). Every accepted number fits: the table's maxima are below 2^63. */
static int64_t value_or_default(const char *name, int64_t no_entry)
{
	const struct ncclbpf_env_var *v;
	const char *raw;
	uint64_t x;
	int r = lookup(name, &v, &raw, &x);
	return r == 1 ? (int64_t)x : v ? v->dflt : no_entry;
}

int ncclbpf_env_bool(const char *name)
{
	return (int)value_or_default(name, 0);
}

uint64_t ncclbpf_env_uint(const char *name)
{
	return (uint64_t)value_or_default(name, 0);
}

int ncclbpf_env_enum(const char *name)
{
	return (int)value_or_default(name, -1);
}

int ncclbpf_env_hex64(const char *name, uint64_t *out)
{
	const struct ncclbpf_env_var *v;
	const char *raw;
	uint64_t x;
	if (lookup(name, &v, &raw, &x) != 1)
		return 0;
	*out = x;
	return 1;
}

unsigned ncclbpf_env_check_all(void)
{
	unsigned bad = 0;
	for (size_t i = 0; i < N_VARS; i++) {
		const struct ncclbpf_env_var *v;
		const char *raw;
		uint64_t x;
		bad += lookup(vars[i].name, &v, &raw, &x) < 0;
	}
	return bad;
}
