/* Member-side state of the control plane. Calls go one way: cp_member.c (binding, fences,
 * queued switches, the hot path's slow path) -> cp_thread.c (the process's control thread) ->
 * cp_state.c (configuration, the member list, the decision log, pends) -> cp_dir.c. */
#ifndef NCCLBPF_CP_INTERNAL_H
#define NCCLBPF_CP_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "cp.h"
#include "cp_dir.h"
#include "ncclbpf/control.h"
#include "policy/policy.h"

enum cp_pend_state {
	CP_ACKED = 1, /* ok ack written, fence B set, decision unknown */
	CP_COMMITTED, /* decision commit S known; switch queued for S */
	CP_APPLIED,   /* switched at S (done file still to write) */
	CP_ABORTED,   /* decision abort known (done file still to write) */
	CP_FAILED,    /* could not be applied (done file still to write) */
};

enum { CP_KIND_BUNDLE = 0, CP_KIND_MAP = 1 };

struct cp_update {
	char map[128];
	void *key, *val;
	size_t klen, vlen;
	struct cp_update *next;
};

/* A member's reason is its loader's message (build_image): carried whole. */
_Static_assert(sizeof(((struct ncclbpf_reload_report *)0)->msg) == NCCLBPF_CP_MSG,
	       "NCCLBPF_CP_MSG is the size of a reload report's message");

/* One reload R this member acknowledged. */
struct cp_pend {
	char R[160];
	int kind;
	int state;
	int busy; /* the hot path is waiting on it: the control thread must not free it */
	uint64_t a, B, S, g;
	uint64_t hash;	     /* the proposal's */
	struct rt_policy *P; /* prepared policy (one reference), NULL once switched to */
	struct cp_update *updates;
	char msg[NCCLBPF_CP_MSG];
	struct cp_pend *next;
};

struct ncclbpf_cp_member {
	struct ncclbpf_comm *c;
	char id[160];	      /* <host>.<pid>.<serial> */
	char comm[17];	      /* commHash, 16 hex digits */
	char cdir[CP_PATH];   /* D/comms/<comm> */
	pthread_mutex_t lock; /* pends, binding switches; order: cp.lock before this */
	struct cp_pend *pends;
	_Atomic uint64_t g, hash; /* version now bound (written under lock by the hot path) */
	_Atomic uint64_t max_wait_ns;
	_Atomic int left; /* gave a decision up (cp_member.c give_up): acknowledges nothing more */
	/* control thread only */
	char **seen; /* reload names handled, sorted */
	size_t n_seen;
	uint64_t created_ns, rec_ns, mark_ns, mark_seq, rate;
	struct ncclbpf_cp_member *next;
};

struct cp_config {
	int on;
	int refused; /* NCCLBPF_CP_DIR set but not trusted (one WARN said so) */
	char dir[CP_PATH];
	unsigned poll_ms, wait_ms;
	uint64_t lead; /* 0: adaptive */
	int log_fd;
	uint64_t reject_hash;
	int have_reject;
};

/* Everything the control thread walks, under lock. */
struct cp_global {
	pthread_mutex_t lock;
	struct ncclbpf_cp_member *members;
	pthread_t thread;
	int running, stop;
	pthread_cond_t cond;
};

/* cp_state.c */
extern struct cp_global cp;
const struct cp_config *cp_cfg(void);
void cp_recompute_next(struct ncclbpf_cp_member *m); /* under m->lock */
/* Records a decision read from the medium (under m->lock). */
void cp_resolve(struct ncclbpf_cp_member *m, struct cp_pend *p, const char *decision);
void cp_pend_free(struct cp_pend *p);
/* Reads D/comms/C/reloads/R/decision: 0 and the text, or -ENOENT. */
int cp_read_decision(const struct ncclbpf_cp_member *m, const char *R, char *out, size_t len);
void cp_log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* cp_thread.c */
void cp_thread_poll_member(struct ncclbpf_cp_member *m, uint64_t now);
/* Writes the done files of finished pends and frees them (control thread or detach). */
void cp_finish_pends(struct ncclbpf_cp_member *m, int all);
void cp_write_member_record(struct ncclbpf_cp_member *m);
/* A fresh copy of base from its in-memory ELF image (map-update proposals; a map update switched
 * to after another change is rebuilt from the policy then bound); NULL with msg on failure. */
struct rt_policy *cp_build(const struct rt_policy *base, char *msg, size_t len);
int cp_thread_start(void);
void cp_thread_stop(void);

#endif
