/* Promela model of the control plane's rank-consistent activation protocol
 * (docs/control-plane.md, "Protocol"; runtime/src/cp_*.c). Checked with spin: see README.md.
 *
 * Processes: N members (ranks) and K controllers (concurrent reloads R0 < R1 < ...).
 * A member is ONE proctype holding both of its threads: the communicator's calling thread
 * (ncclbpf_comm__tick / ncclbpf_cp__slow, cp_member.c) and its control thread (handle_new,
 * cp_thread_poll_member, cp_finish_pends, cp_thread.c). Each do-loop alternative is one step of
 * one of the two threads, so their steps interleave freely, as they do in the C code where every
 * such step runs under m->lock or on one write-once file.
 *
 * The directory D is global state: proposal, ack.M, decision (write-once), done.M and the reload
 * directory's removal. Reads may be stale ("a reader sees a record late, never partially"): a
 * read of a file that exists may return ENOENT. Seq_cst tick vs fence publication (Dekker) is
 * modelled by making the tick and the fence step atomic.
 *
 * Compile-time switches (spin -D...):
 *   N, K, MAXSEQ, LEAD     ranks, reloads, calls per rank, fence lead L (defaults 2, 1, 4, 1)
 *   LOCALFAIL              a member may refuse a proposal (ack status=fail)
 *   LOSTACK                an ack write may fail (cp_create_once error): the member aborts
 *   STALE_REREAD           the re-read after the member's own create failed may be stale too
 *   LOST_DECISION          the member's decision create may fail without creating (ENOSPC,
 *                          EMFILE), and then its read of the decision fails too
 *   BUG_NO_FENCE, BUG_DOUBLE_DECIDE, BUG_APPLY_AFTER_CALL, BUG_NO_REREAD, BUG_S_MIN,
 *   BUG_WAIT_FOREVER       deliberate implementation bugs; each must give a counterexample
 *                          (the last one to the liveness claim, with LIVE)
 *   ACK_SPLIT              the ack write is a step of its own after the fence (as in the code);
 *                          without it, handle_new fences and writes the ack in one step
 *   NOSYM                  no symmetry reduction (canon())
 *   LIVE                   the liveness claim wait0 (rank 0; needs NOSYM)
 */
#ifndef N
#define N 2
#endif
#ifndef K
#define K 1
#endif
#ifndef MAXSEQ
#define MAXSEQ 4
#endif
#ifndef LEAD
#define LEAD 1
#endif

/* Pend states of one reload at one member (struct cp_pend; UNSEEN/DONE added). */
#define UNSEEN 0
#define ACKED 1 /* CP_ACKED: fence published, decision unknown */
#define COMMITTED 2 /* CP_COMMITTED: commit S known, not applied */
/* CP_ABORTED, CP_FAILED (refused commit S < B), CP_APPLIED: the model goes straight to DONE
 * (FIN below), which is where the C code ends after cp_finish_pends. */
#define DONE 6 /* done.M written, pend freed */

/* Decision record (D/comms/C/reloads/R/decision). */
#define NODEC 0
#define COMMIT 1
#define ABORT 2

/* --- The directory D ------------------------------------------------------------------ */
byte prop;          /* bit k: proposal of R_k written (propose(): bundle.o, then proposal) */
byte dec[K];        /* decision: NODEC / COMMIT / ABORT (write-once) */
byte decS[K];       /* S of a commit */
byte gone;          /* bit k: reload directory R_k removed (cp_rmtree) */

/* --- Observers (not part of the protocol) ----------------------------------------------- */
byte hist[MAXSEQ];  /* per seq: 0 = no rank ran it yet, else 1 + the version that ran it */

/* --- One member's state: its files in D (ack.M, done.M) and its process's state ---------
 * All of it lives in m[i] so that symmetry reduction can permute whole members (canon()). */
typedef Mem {
	byte ack[K];     /* ack.M of R_k: 0 none, 1 status=ok, 2 status=fail */
	byte ackB[K];    /* its fence B */
	bit dn[K];       /* done.M of R_k written */
	byte qseq;        /* c->seq: next call number */
	byte qcs;         /* the call in progress (calling thread) */
	bit qcpc;         /* calling thread: 0 idle, 1 inside ncclbpf_cp__slow(cs) (waiting) */
	bit qwaited;      /* this call resolved a fence (for BUG_APPLY_AFTER_CALL only) */
	byte qver;        /* (g, hash) of c->cp_policy: the ordered list of applied reloads */
	byte qackw;       /* bit k: ack of R_k still to be written (control thread) */
	byte qpst[K];     /* struct cp_pend state of R_k */
	byte qpB[K];      /* its fence B */
	byte qpS[K];      /* its S once committed */
};
Mem m[N];

#define GONE(k) ((gone >> (k)) & 1)
/* Inside a member, its own fields by name. */
#define seq m[i].qseq
#define cs m[i].qcs
#define cpc m[i].qcpc
#define waited m[i].qwaited
#define ver m[i].qver
#define ackw m[i].qackw
#define pst m[i].qpst
#define pB m[i].qpB
#define pS m[i].qpS

/* Symmetry reduction: the members run identical code and, between their atomic steps, all sit
 * at the head of their loop with no local state but their index i (k and best are reset to 0).
 * Permuting the records m[] therefore maps a state to an equivalent one (the controllers and
 * the observers treat ranks symmetrically: all acks, max of fences, all done, hist per seq).
 * canon() sorts m[] by its bytes after every member step, so each class of states under
 * permutation of ranks is stored once. Off with -DNOSYM (the liveness run, whose claim names
 * rank 0, is made without it). */
#ifdef NOSYM
#define CANON skip
#else
#define CANON c_code { canon_members(); }
c_code {
static void canon_members(void)
{
	int a, b;
	struct Mem t;
	for (a = 1; a < N; a++)
		for (b = a; b > 0 && memcmp(&now.m[b - 1], &now.m[b], sizeof(struct Mem)) > 0; b--) {
			t = now.m[b - 1];
			now.m[b - 1] = now.m[b];
			now.m[b] = t;
		}
}
}
#endif

/* write-once create (cp_create_once: link(2)); EEXIST leaves the first record. */
#ifdef BUG_DOUBLE_DECIDE
#define CREATE_DEC(k, v, S) dec[k] = v; decS[k] = S
#else
#define CREATE_DEC(k, v, S) if :: dec[k] == NODEC -> dec[k] = v; decS[k] = S :: else -> skip fi
#endif

/* A pend becomes final (applied, aborted, failed) -> cp_finish_pends(m, 0) writes done.M and
 * frees it. The C code does that at the control thread's next poll; the model does it in the
 * same step: writing done earlier only lets a controller remove the reload directory earlier,
 * a superset of the behaviours. The pend's B and S are dead from here on (zeroed). */
#define FIN(k) m[i].dn[k] = 1; pst[k] = DONE; pB[k] = 0; pS[k] = 0

/* handle_new, second half: cp_create_once(rdir, "ack.M"). Fails when the directory is gone
 * (decided and removed meanwhile) or, with LOSTACK, for any reason: then, if still ACKED, the
 * member treats R as aborted (no ack, no commit). */
inline write_ack(k)
{
	ackw = ackw & ~(1 << k);
	if
	:: !GONE(k) -> m[i].ack[k] = 1; m[i].ackB[k] = pB[k]
#ifdef LOSTACK
	:: true -> if :: pst[k] == ACKED -> FIN(k) /* ABORTED */ :: else -> skip fi
#endif
	:: GONE(k) -> if :: pst[k] == ACKED -> FIN(k) /* ABORTED */ :: else -> skip fi
	fi
}

/* handle_new(m, R) (cp_thread.c), run when the proposal is visible and R not handled (a
 * late listing only makes this step run later). A visible decision (necessarily an abort):
 * write_done only. Else prepare (may fail locally: ack status=fail, done failed) and set the
 * fence under m->lock: a = seq, B = a + L, cp_recompute_next (FENCE_DUE below); then write the
 * ack (write_ack). With ACK_SPLIT the ack write is a later step, as in the code (outside the
 * lock). Without it, both in one step: sound, because the ack's contents (a, B) are fixed at
 * the fence, the member's calls cannot pass B meanwhile, and an earlier ack only lets the
 * controller decide earlier (it may always wait); a directory removed in between was decided
 * abort, which the member resolves at its fence the same way. */
inline handle_new(k)
{
	if
	:: dec[k] != NODEC -> m[i].dn[k] = 1; pst[k] = DONE
	:: true -> /* no decision yet, or a stale read of it */
#ifdef LOCALFAIL
		if
		:: true -> m[i].ack[k] = 2; m[i].dn[k] = 1; pst[k] = DONE
		:: true ->
#endif
			pst[k] = ACKED; pB[k] = seq + LEAD;
#ifdef ACK_SPLIT
			ackw = ackw | (1 << k)
#else
			write_ack(k)
#endif
#ifdef LOCALFAIL
		fi
#endif
	fi
}



/* ------------------------------------------------------------------------------------------ */
proctype member(byte i)
{
	byte k, best;

/* The call s runs version ver. SAFETY: every rank that runs seq s runs the same version. Once
 * every rank is past s, hist[s] is forgotten (it can no longer be compared: fewer states). */
#if N == 2
#define ALL_PAST(x) (m[0].qseq > (x) && m[1].qseq > (x))
#else
#define ALL_PAST(x) (m[0].qseq > (x) && m[1].qseq > (x) && m[2].qseq > (x))
#endif
#define RUN_CALL(x)                                                                          \
	if                                                                                   \
	:: hist[x] == 0 -> hist[x] = ver + 1                                                 \
	:: else -> assert(hist[x] == ver + 1)                                                \
	fi;                                                                                  \
	if                                                                                   \
	:: ALL_PAST(x) -> hist[x] = 0                                                        \
	:: else -> skip                                                                      \
	fi

/* c->cp_next as a predicate (cp_recompute_next): s reaches an unresolved fence or a queued S. */
#ifdef BUG_NO_FENCE
#define FENCE_DUE(k, x) false
#else
#define FENCE_DUE(k, x) (pst[k] == ACKED && pB[k] <= (x))
#endif
#define DUE(k, x) (FENCE_DUE(k, x) || (pst[k] == COMMITTED && pS[k] <= (x)))
#if K > 1
#define ANY_DUE(x) (DUE(0, x) || DUE(1, x))
#define ANY_FENCE(x) (FENCE_DUE(0, x) || FENCE_DUE(1, x))
#else
#define ANY_DUE(x) DUE(0, x)
#define ANY_FENCE(x) FENCE_DUE(0, x)
#endif

/* cp_resolve(m, p, d): learn decision of R_k. A commit below our fence is refused (FAILED). */
#define RESOLVE(k)                                                                           \
	if                                                                                   \
	:: dec[k] == COMMIT && decS[k] >= pB[k] -> pst[k] = COMMITTED; pS[k] = decS[k]       \
	:: dec[k] == COMMIT && decS[k] < pB[k] -> FIN(k) /* FAILED */                        \
	:: dec[k] == ABORT -> FIN(k) /* ABORTED */                                           \
	fi

end_member:
	do
	/* ===== control thread (one alternative per reload k) =====
	 * handle_new; its ack write; cp_thread_poll_member learning a commit. (Learning an abort
	 * at a poll is left out: it only clears the fence earlier; a member that has not learnt it
	 * reads it at its fence and resolves the same way, running every call on the same version,
	 * so no version a call runs depends on it. Fewer states.)
	 * handle_new's ack write (ackw) is the same thread: nothing else of the control thread
	 * runs between the fence and the ack. */
	:: atomic { ackw == 0 && pst[0] == UNSEEN && ((prop >> 0) & 1) && !GONE(0) -> handle_new(0); CANON }
#ifdef ACK_SPLIT
	:: atomic { (ackw >> 0) & 1 -> write_ack(0); CANON }
#endif
	:: atomic { ackw == 0 && pst[0] == ACKED && dec[0] == COMMIT && !GONE(0) -> RESOLVE(0); CANON }
#if K > 1
	:: atomic { ackw == 0 && pst[1] == UNSEEN && ((prop >> 1) & 1) && !GONE(1) -> handle_new(1); CANON }
#ifdef ACK_SPLIT
	:: atomic { (ackw >> 1) & 1 -> write_ack(1); CANON }
#endif
	:: atomic { ackw == 0 && pst[1] == ACKED && dec[1] == COMMIT && !GONE(1) -> RESOLVE(1); CANON }
#endif

	/* ===== calling thread ===== */

	/* ncclbpf_comm__tick: cs = seq; seq = cs + 1; if (cs >= cp_next) slow(cs); else the call
	 * runs c->cp_policy. */
	:: atomic {
		cpc == 0 && seq < MAXSEQ ->
		cs = seq; seq++;
		if
		:: ANY_DUE(cs) -> cpc = 1; skip
		:: else ->
			RUN_CALL(cs);
			cs = 0;
			if :: seq == MAXSEQ -> ver = 0 /* no call left: ver is dead */ :: else -> skip fi
		fi;
		CANON
	}

	/* ncclbpf_cp__slow -> wait_fences: one unresolved fence B <= cs per step. The poll reads
	 * the decision directly; any read may be stale and the deadline (NCCLBPF_CP_WAIT_MS) may
	 * come at any moment, so a step either resolves from a visible decision or takes the
	 * deadline branch: create "abort fence-timeout M" (link), re-read, resolve. A decision
	 * that can be neither read nor created (directory gone) is treated as aborted. */
	:: atomic {
		cpc == 1 && ANY_FENCE(cs) ->
		if
		:: FENCE_DUE(0, cs) -> k = 0
#if K > 1
		:: else -> k = 1
#endif
		fi;
#ifdef BUG_APPLY_AFTER_CALL
		waited = 1;
#endif
		if
		:: dec[k] != NODEC && !GONE(k) -> RESOLVE(k) /* poll saw the decision */
#ifndef BUG_WAIT_FOREVER /* bug: no deadline, wait until a decision is seen */
		:: true -> /* deadline: cp_create_once(dir, "decision", "abort fence-timeout M") */
			if
			:: GONE(k) -> FIN(k) /* neither readable nor creatable: ABORTED */
			:: !GONE(k) ->
#ifdef BUG_NO_REREAD
				/* bug: our create failed (EEXIST) but we keep our own abort */
				CREATE_DEC(k, ABORT, 0); FIN(k)
#else
#ifdef LOST_DECISION
				if
				:: true -> CREATE_DEC(k, ABORT, 0)
				:: true -> skip /* write_tmp/link failed: nothing created */
				fi;
#else
				CREATE_DEC(k, ABORT, 0);
#endif
				if
				:: dec[k] != NODEC -> RESOLVE(k) /* whatever decision exists wins */
#if defined(STALE_REREAD) || defined(LOST_DECISION)
				:: true -> FIN(k) /* read failed: "treated as aborted" */
#endif
				fi
#endif
			fi
#endif
		fi;
		k = 0;
		CANON
	}

	/* ncclbpf_cp__slow, after wait_fences: apply_due(m, cs) (committed switches with S <= cs
	 * in (S, R) order), cp_recompute_next, then the call runs the switched policy. */
	:: atomic {
		cpc == 1 && !ANY_FENCE(cs) ->
		do
		:: best = 255;
		   for (k : 0 .. K - 1) {
#ifdef BUG_APPLY_AFTER_CALL
			/* bug: a switch learned during this call's fence wait is applied at the
			 * next call only */
			if
			:: pst[k] == COMMITTED && (pS[k] < cs || (pS[k] == cs && !waited)) &&
			   (best == 255 || pS[k] < pS[best]) -> best = k
			:: else -> skip
			fi
#else
			if
			:: pst[k] == COMMITTED && pS[k] <= cs && (best == 255 || pS[k] < pS[best]) ->
				best = k
			:: else -> skip
			fi
#endif
		   };
		   if
		   :: best == 255 -> break
		   :: else -> ver = ver * (K + 1) + best + 1; FIN(best) /* apply(): APPLIED */
		   fi
		od;
		RUN_CALL(cs);
		cpc = 0; waited = 0; cs = 0; k = 0; best = 0;
		if :: seq == MAXSEQ -> ver = 0 /* no call left: ver is dead */ :: else -> skip fi;
		CANON
	}
	od
}

/* ------------------------------------------------------------------------------------------ */
/* ncclbpf_cp_reload (cp_controller.c) for reload R_k; it may die at any step ("goto dead").
 * After death (or once finished) a later controller's collect_garbage may abort R_k if it is
 * undecided and remove its directory when allowed. */
#if N == 2
#define ALL_OK(k) (m[0].ack[k] == 1 && m[1].ack[k] == 1)
#define ANY_FAIL(k) (m[0].ack[k] == 2 || m[1].ack[k] == 2)
#define ALL_DONE(k) (m[0].dn[k] && m[1].dn[k])
#elif N == 3
#define ALL_OK(k) (m[0].ack[k] == 1 && m[1].ack[k] == 1 && m[2].ack[k] == 1)
#define ANY_FAIL(k) (m[0].ack[k] == 2 || m[1].ack[k] == 2 || m[2].ack[k] == 2)
#define ALL_DONE(k) (m[0].dn[k] && m[1].dn[k] && m[2].dn[k])
#else
#error N must be 2 or 3
#endif
proctype controller(byte k)
{
	byte j, maxB;

	/* propose(): mkdir R, bundle.o, proposal */
	if
	:: true -> prop = prop | (1 << k)
	:: true -> goto dead
	fi;

	/* collect_acks loop: decide when every rank acked ok (commit at the largest fence B),
	 * or one failed, or at the timeout (always possible), or die. Acks are write-once, so a
	 * stale listing only delays this step. */
end_acks:
	if
	:: atomic {
		ALL_OK(k) ->
		maxB = m[0].ackB[k];
		for (j : 1 .. N - 1) {
#ifdef BUG_S_MIN
			if :: m[j].ackB[k] < maxB -> maxB = m[j].ackB[k] :: else -> skip fi
#else
			if :: m[j].ackB[k] > maxB -> maxB = m[j].ackB[k] :: else -> skip fi
#endif
		};
		CREATE_DEC(k, COMMIT, maxB); /* decide(): commit S */
		j = 0; maxB = 0
	   }
#ifdef LOCALFAIL
	:: atomic {
		ANY_FAIL(k) -> CREATE_DEC(k, ABORT, 0) /* abort member M failed */
	   }
#endif
	:: atomic { true -> CREATE_DEC(k, ABORT, 0) } /* abort timeout / decided elsewhere */
	:: true -> goto dead
	fi;

dead:
	/* collect_done + cp_rmtree, or a later controller's collect_garbage: "abort controller
	 * gone" on an undecided reload; removal of an aborted one, or of a committed one once
	 * every rank wrote done. Or nothing (the directory stays). */
end_gc:
	if
	:: atomic { dec[k] == NODEC -> CREATE_DEC(k, ABORT, 0) }
	:: dec[k] != NODEC -> skip
	fi;
end_rm:
	if
	:: dec[k] == ABORT -> gone = gone | (1 << k)
	:: dec[k] == COMMIT && ALL_DONE(k) -> gone = gone | (1 << k)
	fi
}

init
{
	byte x;
	atomic {
		for (x : 0 .. N - 1) { run member(x) };
		for (x : 0 .. K - 1) { run controller(x) };
		x = 0
	}
}

/* Bounded-wait liveness: a rank inside a call that reached a fence leaves it (runs the call). */
#ifdef LIVE
ltl wait0 { [] (m[0].qcpc -> <> !m[0].qcpc) }
#endif
