/* The environment-variable table (runtime/include/ncclbpf/envvars.h): every type's rule, the
 * WARN a refused value gives (naming the variable and what it accepts, once per process), the
 * defaults readers fall back to, and the table's ranges against the limits the net plugin
 * compiles in. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ncclbpf/envvars.h"
#include "ncclbpf/runtime.h"
#include "net_tcp_internal.h"

static int warns;
static char last[1024];

static void logger(int level, const char *msg)
{
	if (level != NCCLBPF_LOG_WARN)
		return;
	warns++;
	snprintf(last, sizeof(last), "%s", msg);
}

/* The WARNs before a read, and after it: the read gave got, and warned with warn_text (NULL: no
 * WARN). */
static void expect(const char *name, const char *value, long long got, long long want,
		   int warns_before, const char *warn_text)
{
	CHECKF(got == want, "%s=%s read as %lld, want %lld", name, value, got, want);
	if (warn_text)
		CHECKF(warns == warns_before + 1 && strstr(last, warn_text),
		       "%s=%s: %d WARN(s), last: %s", name, value, warns - warns_before, last);
	else
		CHECKF(warns == warns_before, "%s=%s: unexpected WARN %s", name, value, last);
	unsetenv(name);
}

/* Sets name=value, reads it with expr and checks what came back and what was said. */
#define READ(name, value, expr, want, warn_text)                                                   \
	do {                                                                                       \
		setenv(name, value, 1);                                                            \
		int before_ = warns;                                                               \
		expect(name, value, (long long)(expr), (long long)(want), before_, warn_text);     \
	} while (0)

static void test_readers(void)
{
	/* accepted values */
	READ("NCCLBPF_WATCH", "0", ncclbpf_env_bool("NCCLBPF_WATCH"), 0, NULL);
	READ("NCCLBPF_ENGINE", "interp", ncclbpf_env_enum("NCCLBPF_ENGINE"), 1, NULL);
	READ("NCCLBPF_CP_POLL_MS", "10000", ncclbpf_env_uint("NCCLBPF_CP_POLL_MS"), 10000, NULL);
	uint64_t h = 0;
	READ("NCCLBPF_CP_REJECT_HASH", "00ffAB", ncclbpf_env_hex64("NCCLBPF_CP_REJECT_HASH", &h), 1,
	     NULL);
	CHECK(h == 0xffab);
	READ("NCCLBPF_NET_TSC", "0", ncclbpf_env_enum("NCCLBPF_NET_TSC"), 0, NULL);

	/* refused: the default, and a WARN naming the variable and what it accepts */
	READ("NCCLBPF_WATCH", "yes", ncclbpf_env_bool("NCCLBPF_WATCH"), 1,
	     "NCCLBPF_WATCH=yes ignored (accepted: 0 or 1); using 1");
	READ("NCCLBPF_ENGINE", "garbage", ncclbpf_env_enum("NCCLBPF_ENGINE"), 0,
	     "NCCLBPF_ENGINE=garbage ignored (accepted: one of jit, interp); using jit");
	READ("NCCLBPF_CP_REJECT_HASH", "zz", ncclbpf_env_hex64("NCCLBPF_CP_REJECT_HASH", &h), 0,
	     "NCCLBPF_CP_REJECT_HASH=zz ignored (accepted: 1 to 16 hex digits); unset");
	READ("NCCLBPF_INSPECT_INTERVAL_US", "600000000",
	     ncclbpf_env_uint("NCCLBPF_INSPECT_INTERVAL_US"), 1000,
	     "NCCLBPF_INSPECT_INTERVAL_US=600000000 ignored (accepted: 0..1000000); using 1000");
	READ("NCCLBPF_CP_WAIT_MS", "0", ncclbpf_env_uint("NCCLBPF_CP_WAIT_MS"), 2000,
	     "NCCLBPF_CP_WAIT_MS=0 ignored (accepted: 1..3600000); using 2000");
	READ("NCCLBPF_NET_NSOCKS", "-1", ncclbpf_env_uint("NCCLBPF_NET_NSOCKS"), 4,
	     "NCCLBPF_NET_NSOCKS=-1 ignored");
	READ("NCCLBPF_NET_MIN_CHUNK", "64k", ncclbpf_env_uint("NCCLBPF_NET_MIN_CHUNK"), 65536,
	     "NCCLBPF_NET_MIN_CHUNK=64k ignored (accepted: 4096..1073741824)");
	READ("NCCLBPF_NET_TIME_EVERY", "99999999999999999999999",
	     ncclbpf_env_uint("NCCLBPF_NET_TIME_EVERY"), 0, "NCCLBPF_NET_TIME_EVERY=");
	READ("NCCLBPF_NET_TSC", "2", ncclbpf_env_enum("NCCLBPF_NET_TSC"), -1,
	     "NCCLBPF_NET_TSC=2 ignored (accepted: one of 0, 1); using auto");
	READ("NCCL_SOCKET_FAMILY", "AF_UNIX", ncclbpf_env_enum("NCCL_SOCKET_FAMILY"), -1,
	     "NCCL_SOCKET_FAMILY=AF_UNIX ignored");
	/* a control character in a value never reaches the log as such */
	READ("NCCLBPF_DEBUG", "\033[2J", ncclbpf_env_bool("NCCLBPF_DEBUG"), 0,
	     "NCCLBPF_DEBUG=?[2J ignored");

	/* one WARN per variable and process */
	setenv("NCCLBPF_DEBUG", "on", 1);
	int w0 = warns;
	for (int i = 0; i < 3; i++)
		ncclbpf_env_bool("NCCLBPF_DEBUG");
	CHECKF(warns == w0, "a second WARN for NCCLBPF_DEBUG: %s", last);
	unsetenv("NCCLBPF_DEBUG");

	/* too long for its rule: treated as unset */
	char big[5000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	READ("NCCLBPF_TRACE", big, ncclbpf_env_str("NCCLBPF_TRACE") != NULL, 0,
	     "accepted: at most 4095 bytes");
	/* unset and empty are the same */
	READ("NCCLBPF_POLICY", "", ncclbpf_env_str("NCCLBPF_POLICY") != NULL, 0, NULL);
	/* a name outside the table is refused (a reader's bug) */
	int w1 = warns;
	CHECK(ncclbpf_env_str("NCCLBPF_NOT_A_VARIABLE") == NULL && warns == w1 + 1 &&
	      strstr(last, "not in the variable table"));

	/* the sweep the runtime runs at its first acquire: one WARN per refused variable */
	setenv("NCCLBPF_NET_DRAIN", "off", 1);
	setenv("NCCLBPF_CP_LEAD_CALLS", "0", 1);
	setenv("NCCLBPF_ENGINE", "jit", 1);
	w0 = warns;
	CHECK(ncclbpf_env_check_all() == 2);
	CHECKF(warns == w0 + 2, "%d WARNs", warns - w0);
	unsetenv("NCCLBPF_NET_DRAIN");
	unsetenv("NCCLBPF_CP_LEAD_CALLS");
	unsetenv("NCCLBPF_ENGINE");
}

/* Sizes (a type the table offers for byte counts): suffixes, range, overflow. */
static void test_bytes(void)
{
	const struct ncclbpf_env_var v = {"X_BYTES",
					  NCCLBPF_ENV_BYTES,
					  NCCLBPF_ENV_PLUGIN,
					  1u << 20,
					  1ull << 40,
					  NULL,
					  1u << 30,
					  "1G",
					  "test"};
	char msg[512];
	static const char *const ok[] = {"1048576", "1M", "1024K", "3G", "1T"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECKF(ncclbpf_env_check(&v, ok[i], msg, sizeof(msg)) == 0, "%s: %s", ok[i], msg);
	static const char *const bad[] = {
	    "1048575", "2T", "1MB", "M", "-1M", "1.5G", "99999999999999999999T"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(ncclbpf_env_check(&v, bad[i], msg, sizeof(msg)) != 0 &&
			   strstr(msg, "X_BYTES=") && strstr(msg, "K, M, G or T suffix); using 1G"),
		       "%s accepted (%s)", bad[i], msg);
}

static void test_table(void)
{
	size_t n;
	const struct ncclbpf_env_var *t = ncclbpf_env_table(&n);
	CHECK(n > 20);
	char msg[512];
	for (size_t i = 0; i < n; i++) {
		CHECKF(t[i].doc && t[i].doc[0] && t[i].shown && t[i].shown[0], "%s", t[i].name);
		CHECKF(ncclbpf_env_find(t[i].name) == &t[i], "%s appears twice", t[i].name);
		CHECKF(t[i].type != NCCLBPF_ENV_ENUM || (t[i].values && t[i].values[0]), "%s",
		       t[i].name);
		CHECKF(t[i].type != NCCLBPF_ENV_UINT || t[i].min <= t[i].max, "%s", t[i].name);
		/* a numeric default is itself accepted (0 may mean "unset: someone else decides")
		 */
		if (t[i].type == NCCLBPF_ENV_UINT && t[i].dflt) {
			char d[32];
			snprintf(d, sizeof(d), "%lld", (long long)t[i].dflt);
			CHECKF(ncclbpf_env_check(&t[i], d, msg, sizeof(msg)) == 0, "%s: %s",
			       t[i].name, msg);
		}
	}
	/* the net plugin's ranges are its compiled-in limits */
	CHECK(ncclbpf_env_find("NCCLBPF_NET_NSOCKS")->max == TCP_MAX_SOCKS - 1);
	CHECK(ncclbpf_env_find("NCCLBPF_NET_NTHREADS")->max == TCP_MAX_THREADS);
	CHECK(ncclbpf_env_find("NCCLBPF_NET_MAXRECVS")->max == TCP_MAX_SUBS);
}

int main(void)
{
	ncclbpf_rt_set_logger(logger);
	test_readers();
	test_bytes();
	test_table();
	return check_summary("test_envvars");
}
