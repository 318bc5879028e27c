/* Bundle-supplied NCCL settings: the known-parameter table accepts good values, rejects unknown
 * names and bad values with their line, keeps the good lines, and records enforcement. */
#include <string.h>

#include "check.h"
#include "env_settings.h"

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

int main(void)
{
	static struct env_settings set;
	char err[160];

	/* Validation, one parameter at a time. */
	CHECK(env_setting_validate("NCCL_MAX_NCHANNELS", "16", err, sizeof(err)) == 0);
	CHECK(env_setting_validate("NCCL_MAX_NCHANNELS", "65", err, sizeof(err)) == -1);
	CHECK(strstr(err, "outside [1, 64]") != NULL);
	CHECK(env_setting_validate("NCCL_MAX_NCHANNELS", "8x", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_MAX_NCHANNELS", "", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_NTHREADS", "256", err, sizeof(err)) == 0);
	CHECK(env_setting_validate("NCCL_NTHREADS", "100", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_PROTO", "Simple", err, sizeof(err)) == 0);
	CHECK(env_setting_validate("NCCL_PROTO", "", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_DEBUG", "INFO", err, sizeof(err)) == 0);
	CHECK(env_setting_validate("NCCL_DEBUG", "LOUD", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_MAXNCHANNELS", "4", err, sizeof(err)) == -1);
	CHECK(strstr(err, "unknown NCCL parameter 'NCCL_MAXNCHANNELS'") != NULL);
	CHECK(env_setting_validate("NCCL_ENV_PLUGIN", "x", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_TUNER_PLUGIN", "x", err, sizeof(err)) == -1);
	CHECK(env_setting_validate("NCCL_PROFILER_PLUGIN", "ncclbpf", err, sizeof(err)) == -1);
	/* The net plugin: the bundle may ask for ours ("ncclbpf"), never name another library. */
	CHECK(env_setting_validate("NCCL_NET_PLUGIN", "ncclbpf", err, sizeof(err)) == 0);
	CHECK(env_setting_validate("NCCL_NET_PLUGIN", "/opt/x/libnccl-net.so", err, sizeof(err)) ==
	      -1);
	CHECK(env_setting_validate("NCCL_NET_PLUGIN", "", err, sizeof(err)) == -1);

	/* A bundle with good and bad lines: bad ones reported by line and dropped. */
	const char text[] = "# settings shipped with the policy\n"
			    "NCCL_PROTO=Simple\n"
			    "\n"
			    "  !NCCL_MAX_NCHANNELS=8  \r\n"
			    "NCCL_BOGUS=1\n"
			    "NCCL_NTHREADS=100\n"
			    "no equals sign\n"
			    "NCCL_PROTO=LL\n"
			    "NCCL_LAUNCH_MODE=GROUP";
	CHECK_EQ_U64(env_settings_parse(text, sizeof(text) - 1, &set), 4);
	CHECK_EQ_U64(set.n, 3);
	CHECK(starts(set.first_error, "line 5: unknown NCCL parameter 'NCCL_BOGUS'"));
	const struct env_setting *s = env_settings_find(&set, "NCCL_PROTO");
	CHECK(s && strcmp(s->value, "Simple") == 0 && !s->enforced && s->line == 2);
	s = env_settings_find(&set, "NCCL_MAX_NCHANNELS");
	CHECK(s && strcmp(s->value, "8") == 0 && s->enforced && s->line == 4);
	s = env_settings_find(&set, "NCCL_LAUNCH_MODE");
	CHECK(s && strcmp(s->value, "GROUP") == 0 && s->line == 9);
	CHECK(env_settings_find(&set, "NCCL_NTHREADS") == NULL);
	CHECK(env_settings_find(&set, "NCCL_BOGUS") == NULL);

	/* A NUL (the C string in an object section) ends the text; an empty text is no error. */
	const char with_nul[] = "NCCL_P2P_DISABLE=1\0NCCL_BOGUS=2\n";
	CHECK_EQ_U64(env_settings_parse(with_nul, sizeof(with_nul) - 1, &set), 0);
	CHECK_EQ_U64(set.n, 1);
	CHECK_EQ_U64(env_settings_parse("", 0, &set), 0);
	CHECK_EQ_U64(set.n, 0);
	CHECK(set.first_error[0] == 0);

	/* Over-long values and names are refused, not truncated. */
	char big[400];
	memset(big, 'a', sizeof(big));
	memcpy(big, "NCCL_ALGO=", 10);
	CHECK_EQ_U64(env_settings_parse(big, sizeof(big), &set), 1);
	CHECK_EQ_U64(set.n, 0);
	return check_summary("test_env_settings");
}
