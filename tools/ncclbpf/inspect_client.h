/* Client side of live inspection (ncclbpf ps, stat, map): finding the process records that
 * plugins write under <dir>/procs, talking to their sockets, parsing the answers. The wire
 * protocol is described in runtime/src/inspect/inspect.h. */
#ifndef NCCLBPF_INSPECT_CLIENT_H
#define NCCLBPF_INSPECT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* One record line of an answer: WORD key=value ... (values unescaped). */
struct insp_rec {
	const char *word;
	int n;
	char **key;
	char **val;
};
const char *insp_get(const struct insp_rec *r, const char *key); /* NULL when absent */
uint64_t insp_getu(const struct insp_rec *r, const char *key);	 /* 0 when absent */

/* A process record file <dir>/procs/<host>.<pid>, as the plugin writes it (anything else in
 * procs is skipped). */
struct insp_proc {
	char rec_path[4200];
	char sock[4200]; /* always <rec_path>.sock, where the plugin binds it */
	char host[128];
	char job[128];
	char rank[32];
	char bundle[1024];
	char dir[4200]; /* the directory whose procs/ holds the record (the control plane's D) */
	int pid;
	unsigned uid; /* the record file's owner (a record claiming another uid is skipped) */
	int cp;	      /* the process takes part in the control plane of dir */
	uint64_t start_ns;
	unsigned long long proc_start; /* ncclbpf_rt_proc_start of pid when it registered (0: not
					  recorded, by a plugin older than the field) */
};

/* The directory to search: --dir, else $NCCLBPF_CP_DIR, else /dev/shm/ncclbpf-<uid>. */
const char *insp_default_dir(char *buf, size_t len);
/* Every record in dir/procs and dir/<*>/procs (one level of job directories). dir and each
 * procs directory must be trusted (ncclbpf/trusted_path.h), as the plugin requires of the
 * directories it registers in: an untrusted procs directory is skipped, an untrusted dir
 * refused. *out is malloc'd. Returns the count (0 when none), or -1 with errno and the reason
 * (naming the path) in why. */
int insp_list(const char *dir, struct insp_proc **out, char *why, size_t why_len);
/* 1 when rec belongs to this host and its process is gone: no process has its pid, or the
 * one that has it now started at another time than the one that registered (pids are
 * reused). */
int insp_stale(const struct insp_proc *p);
/* Removes a stale record and its socket: only those two names in the record's own procs
 * directory (trusted), only when they are ours, never a path the record names. 0 or -1. */
int insp_remove_stale(const struct insp_proc *p);
const char *insp_hostname(void);
/* Finds the record of pid on this host; 0 or -1 (message printed, prefix is the command). */
int insp_find(const char *dir, int pid, struct insp_proc *out, const char *prefix);

/* A connection to one process's inspection server. */
struct insp_conn {
	int fd;
	void *in;      /* what was read and not handed out yet */
	char msg[256]; /* why the server refused the connection */
};
/* Connects to the process's socket and reads the server's greeting: 0, or -1 with errno
 * (ECONNREFUSED/ENOENT: nobody listens; EACCES: not ours, by file permissions, refused by the
 * server, or served by another uid than the record's owner, with the reason in c->msg; EPROTO:
 * not an inspection server). Every answer is read with a deadline (10 s without a byte, 60 s
 * per request), lines are bounded, and a record that is not what the plugin sends ends the
 * request with an error instead of reaching the caller. */
int insp_connect(const struct insp_proc *p, struct insp_conn *c);
void insp_close(struct insp_conn *c);
/* insp_find then insp_connect, for the commands that talk to one process: dir NULL means
 * insp_default_dir; its record in *p. 0, or -1 with the reason on stderr after prefix (the
 * command). */
int insp_attach(const char *dir, int pid, struct insp_proc *p, struct insp_conn *c,
		const char *prefix);
/* Sends one request and reads the answer: cb(rec, arg) for every record line (may be NULL).
 * Returns 0 on "ok"; -1 on "error ..." (the message in err) or a broken connection. */
int insp_request(struct insp_conn *c, const char *req,
		 void (*cb)(const struct insp_rec *r, void *arg), void *arg, char *err,
		 size_t err_len);

/* The whole answer kept (deep copies), for commands that print it in another order. */
struct insp_recs {
	int n, cap;
	struct insp_rec *r;
};
int insp_collect(struct insp_conn *c, const char *req, struct insp_recs *out, char *err,
		 size_t err_len);
void insp_recs_free(struct insp_recs *rs);

/* Parses --dir D / --dir=D at argv[*i]; 1 when consumed (i advanced), -1 on a missing value. */
int insp_parse_dir(int argc, char **argv, int *i, const char **dir);
/* A process id given on the command line (the whole text, 1..INT_MAX), or -1. */
int insp_parse_pid(const char *text);
/* The help line of --dir, for the commands that take it. */
#define INSP_DIR_HELP                                                                              \
	"  --dir DIR   where the processes registered (default $NCCLBPF_CP_DIR, else\n"            \
	"              /dev/shm/ncclbpf-$UID; one level of job directories below is searched)\n"

#endif
