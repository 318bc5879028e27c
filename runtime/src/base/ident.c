/* The process's identity as the job it runs in knows it, read from the environment the job
 * already has (the launcher's variables): host, job id, rank, local rank and GPU. One reading
 * for the live inspection (`ncclbpf ps`, `stat`) and the telemetry's labels, so both name a
 * process the same way. Values are cleaned to rt_clean_token's characters; "-" when unknown. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncclbpf/envvars.h"
#include "ncclbpf/proc_registry.h"
#include "rt_internal.h"

static const char *first_env(const char *const *names)
{
	for (; *names; names++) {
		const char *v = ncclbpf_env_str(*names);
		if (v)
			return v;
	}
	return "-";
}

void rt_clean_token(char *dst, size_t len, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1 < len; i++) {
		char c = src[i];
		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				 (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
				 c == ':' || c == '/' || c == '@'
			     ? c
			     : '_';
	}
	dst[i] = 0;
}

void ncclbpf_rt_host_name(char *buf, size_t len)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	rt_clean_token(buf, len, host);
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '_'; /* part of a file name */
}

unsigned long long ncclbpf_rt_proc_start(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* "pid (comm) state ...": comm may hold spaces and parentheses, so the fields are
	 * counted from the last ')': the state is field 3, the start time field 22. */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

int ncclbpf_rt_proc_gone(int pid, unsigned long long proc_start)
{
	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
		return 1;
	unsigned long long now = proc_start ? ncclbpf_rt_proc_start(pid) : 0;
	return now && now != proc_start;
}

/* The GPU: the device CUDA_VISIBLE_DEVICES leaves the process when it names one, else the
 * local rank's entry there (the usual one-GPU-per-local-rank launch), else "-": without it the
 * device is not known here (the plugin makes no CUDA call, and ranks may share a device). */
static void gpu_of(struct rt_ident *id)
{
	char devs[256];
	snprintf(devs, sizeof(devs), "%s",
		 first_env((const char *const[]){"CUDA_VISIBLE_DEVICES", NULL}));
	long lr = strcmp(id->local_rank, "-") ? strtol(id->local_rank, NULL, 10) : -1;
	const char *pick = NULL;
	if (strcmp(devs, "-")) {
		char *save = NULL, *one = strtok_r(devs, ",", &save), *tok = one;
		int n = 0;
		for (; tok; tok = strtok_r(NULL, ",", &save), n++)
			if (n == lr)
				pick = tok;
		if (n == 1)
			pick = one;
	}
	rt_clean_token(id->gpu, sizeof(id->gpu), pick ? pick : "-");
}

void rt_ident_read(struct rt_ident *id)
{
	static const char *const job[] = {"NCCLBPF_JOB",
					  "SLURM_JOB_ID",
					  "TORCHELASTIC_RUN_ID",
					  "PBS_JOBID",
					  "LSB_JOBID",
					  "FLUX_JOB_ID",
					  "JOB_ID",
					  NULL};
	static const char *const rank[] = {"RANK",     "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					   "PMI_RANK", "SLURM_PROCID",	       NULL};
	static const char *const local[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
					    "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
	ncclbpf_rt_host_name(id->host, sizeof(id->host));
	rt_clean_token(id->job, sizeof(id->job), first_env(job));
	rt_clean_token(id->rank, sizeof(id->rank), first_env(rank));
	rt_clean_token(id->local_rank, sizeof(id->local_rank), first_env(local));
	gpu_of(id);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	id->start_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	id->pid = (int)getpid();
	id->uid = (unsigned)geteuid();
}
