/* The control plane: a change of policy (a new bundle, or new contents for a map) becomes active
 * on every rank of a communicator at the same tuner call sequence number, or on none.
 * Protocol and file layout: docs/control-plane.md. No daemon: the shared medium is a directory D
 * (NCCLBPF_CP_DIR); every process running the plugin has one control thread that polls it, and
 * a controller (`ncclbpf reload --job`, `ncclbpf map update`, or these library calls) proposes a
 * change, collects the members' acknowledgements and fences, and writes a write-once decision.
 *
 * Member side (inside the plugin; runtime.h's ncclbpf_comm__tick and ncclbpf_rt_run_*_comm):
 *   NCCLBPF_CP_DIR=D          control plane on (off: process-wide policy and file-watch reload)
 *   NCCLBPF_CP_POLL_MS=5      control thread poll interval
 *   NCCLBPF_CP_LEAD_CALLS=N   fence lead in calls (default max(64, calls in the last 500 ms))
 *   NCCLBPF_CP_WAIT_MS=2000   longest a call waits at a fence for an unknown decision
 *   NCCLBPF_CP_LOG=FILE       decision log: one line per activation (comm, member, seq, g, hash)
 *   NCCLBPF_CP_REJECT_HASH=H  refuse proposals whose hash is H (a local deny-list; tests use it
 *                             to reject a bundle on one rank only)
 *
 * Controller side (this header's functions; libncclbpf_cp.a, no plugin needed). */
#ifndef NCCLBPF_CONTROL_H
#define NCCLBPF_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ncclbpf_cp_opts {
	size_t sz;
	int timeout_ms;	     /* wait for acks (default 10000) */
	int done_timeout_ms; /* wait for members to reach the activation point (0: default 5000;
			      * negative: return once decided) */
	int poll_ms;	     /* how often the controller looks (default 2) */
	const char *comm;    /* only this communicator (16 hex digits); NULL: all of D */
	int keep; /* leave the reload directories in place (default: removed when done) */
	/* Called at each step (1: proposal written, 2: an ack seen, 3: decision written, 4: done
	 * files collected); tests use it to kill the controller at a chosen step. */
	void (*step)(int step, void *arg);
	void *step_arg;
};

enum ncclbpf_cp_member_state {
	NCCLBPF_CP_NO_ACK = 0, /* never acknowledged (dead, stalled, or joined late) */
	NCCLBPF_CP_PENDING,    /* committed, activation point not reached yet */
	NCCLBPF_CP_ACTIVE,     /* active at seq S with generation g */
	NCCLBPF_CP_ABORTED,    /* the reload was aborted; the member kept its version */
	NCCLBPF_CP_FAILED,     /* the member could not prepare (msg says why) */
};

/* The longest reason a member gives for refusing a reload (a verifier message with its source
 * line and register state runs to 300 characters): reasons are carried whole from the member
 * to its log, its ack, the decision and the report. The size of ncclbpf_reload_report.msg. */
#define NCCLBPF_CP_MSG 512

struct ncclbpf_cp_member_report {
	char member[128]; /* <host>.<pid>.<serial> */
	int state;	  /* enum ncclbpf_cp_member_state */
	uint64_t seq;	  /* activation seq (ACTIVE), or the member's seq when it acked */
	uint64_t fence;
	uint64_t g;
	char msg[NCCLBPF_CP_MSG];
};

struct ncclbpf_cp_comm_report {
	char comm[17];
	char reload[128];		     /* R */
	int committed;			     /* 1 commit, 0 abort */
	uint64_t seq;			     /* S when committed */
	char decision[NCCLBPF_CP_MSG + 200]; /* "abort member <id> failed: <its reason>" */
	uint32_t n_ranks, n_members;
	struct ncclbpf_cp_member_report *members;
};

struct ncclbpf_cp_report {
	size_t sz;
	uint32_t n_comms;
	uint32_t committed, aborted;
	struct ncclbpf_cp_comm_report *comms;
	uint64_t hash; /* of the proposal (bundle: of its bytes) */
	uint64_t total_ns;
	char msg[512]; /* error or one-line summary */
};

/* Proposes bundle_path (resp. new contents key -> val of map `map` of each member's current
 * policy) to every communicator registered in dir (or o->comm), decides, and reports per
 * communicator and member. Returns 0 when every communicator committed, 1 when at least one
 * aborted, or -errno when nothing could be proposed (rep->msg says why: no communicators,
 * unreadable bundle, ...). rep may be NULL; otherwise free it with ncclbpf_cp_report_free. */
int ncclbpf_cp_reload(const char *dir, const char *bundle_path, const struct ncclbpf_cp_opts *o,
		      struct ncclbpf_cp_report *rep);
int ncclbpf_cp_map_update(const char *dir, const char *map, const void *key, size_t klen,
			  const void *val, size_t vlen, const struct ncclbpf_cp_opts *o,
			  struct ncclbpf_cp_report *rep);
void ncclbpf_cp_report_free(struct ncclbpf_cp_report *rep);
/* One line per member: "comm C member M: active at seq S (g=G)" or why not. */
void ncclbpf_cp_report_print(const struct ncclbpf_cp_report *rep, void *file /* FILE * */);

/* The hash proposals and decision logs show (64-bit FNV-1a of the bytes; an identity check,
 * not an authentication: D's permissions are the access control). */
uint64_t ncclbpf_cp_hash(const void *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
