/* Abstract state of the verifier: registers, stack frames, the whole machine state of one path,
 * and the environment shared by all parts of the analysis. Internal to engine/src/verifier/. */
#ifndef EBPF_VERIFIER_STATE_H
#define EBPF_VERIFIER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebpf/verifier.h"
#include "tnum.h"

enum reg_type {
	NOT_INIT = 0,
	SCALAR,
	PTR_TO_CTX,
	PTR_TO_STACK,
	CONST_PTR_TO_MAP,
	PTR_TO_MAP_VALUE,
	PTR_TO_MAP_VALUE_OR_NULL,
	PTR_TO_MEM, /* ring buffer record */
	PTR_TO_MEM_OR_NULL,
};

/* One register. For scalars the bounds describe the value; for pointers they describe the
 * variable part of the offset (the fixed part is `off`). All eight bounds and the tnum are kept
 * consistent with each other by scalar_sync(). */
struct reg {
	uint8_t type;	 /* enum reg_type */
	uint8_t local;	 /* rank-local label (value may differ between ranks) */
	uint8_t frameno; /* PTR_TO_STACK: the frame it points into */
	uint8_t pad;
	uint32_t id;	  /* *_OR_NULL: copies share it so a null check refines them all */
	uint32_t ref_id;  /* PTR_TO_MEM(_OR_NULL): ring buffer reservation to release */
	int32_t off;	  /* pointers: fixed offset */
	uint32_t map_idx; /* map pointers: index in opts->maps */
	uint32_t mem_size;
	uint32_t origin; /* insn that created the pointer (null-check diagnostics) */
	uint32_t taint;	 /* insn where the rank-local value entered (when local) */
	struct tnum var_off;
	int64_t smin, smax;
	uint64_t umin, umax;
	int32_t s32_min, s32_max;
	uint32_t u32_min, u32_max;
};

/* Stack byte kinds (low bits of stack_byte), with the rank-local label in bit 7. CONST bytes
 * hold a known value (slot.val): a narrow store of a constant, such as a u32 loop counter
 * whose address is passed to a map lookup, keeps the counter known from one iteration to the
 * next (zeroed memory is CONST 0). */
enum { STACK_INVALID = 0, STACK_MISC = 1, STACK_CONST = 2, STACK_SPILL = 3 };
#define STACK_KIND(b) ((b)&3)
#define STACK_LOCAL   0x80u

struct slot {
	uint8_t bytes[8]; /* byte i of the slot is at frame offset -(8*(idx+1)) + i */
	uint8_t val[8];	  /* value of each STACK_CONST byte */
	uint32_t taint;	  /* origin of a rank-local label on MISC bytes */
	struct reg spill; /* valid when all 8 bytes are STACK_SPILL */
};

#define MAX_SLOTS (EBPF_STACK_SIZE / 8)

struct frame {
	struct reg regs[EBPF_NREGS];
	uint32_t callsite; /* insn of the call that created this frame (entry: UINT32_MAX) */
	uint32_t subprog;
	uint16_t nslots;	 /* slots in use (deepest written / 8) */
	uint16_t cap_slots;	 /* slots allocated */
	struct slot *slots;	 /* nslots entries; slot i covers [-(8i+8), -(8i)) */
	struct frame *next_free; /* in the environment's pool */
};

/* Control dependence on a rank-local value: values written while an entry is active are
 * rank-local. The entry ends where the paths of the branch meet again (its immediate
 * post-dominator) in the same frame, or at the frame's exit. */
struct ctrl_taint {
	uint32_t until; /* insn (UINT32_MAX: until the frame returns) */
	uint16_t frameno;
	uint32_t origin; /* insn where the branched-on value became rank-local */
	uint32_t branch; /* the branch insn */
};
#define MAX_CTRL_TAINT 8
#define MAX_REFS       8

struct checkpoint;

struct vstate {
	struct frame *frames[EBPF_MAX_FRAMES];
	uint32_t curframe;
	uint32_t insn; /* next instruction to analyse */
	uint32_t n_taint;
	struct ctrl_taint taint[MAX_CTRL_TAINT];
	uint32_t n_refs;
	uint32_t refs[MAX_REFS];     /* acquired ring buffer reservations */
	uint32_t ref_insn[MAX_REFS]; /* where each was acquired */
	uint64_t cost;		     /* instructions executed along this path so far */
	/* Instructions executed since the parent checkpoint, for precision backtracking. */
	uint64_t *hist; /* pc in the low half; HIST_SLOT annotations in the high half */
	uint32_t n_hist, cap_hist;
	bool hist_overflow;
	uint32_t since_checkpoint; /* insns since the last checkpoint on this path */
	struct checkpoint *parent; /* last checkpoint on this path */
};

/* A stored state at a prune point: an explored state whose successors are (branches == 0) or
 * are being (branches > 0) analysed. */
struct checkpoint {
	struct vstate st;
	uint32_t branches;
	uint64_t max_rem; /* most instructions any explored path ran from here to the exit */
	bool rem_set;
	uint32_t hits, misses; /* prune.c: visits it pruned, complete visits it did not */
	/* state_index.c: its (instruction, signature), and its neighbours in the list of that
	 * entry it is on (being explored, or complete) */
	struct sig_entry *entry;
	struct checkpoint **list; /* the head of the list it is on */
	struct checkpoint *newer, *older;
	struct checkpoint *prev_exact_only; /* prune.c: SIG_EXACT_ONLY ones of its insn */
	/* Registers of the checkpoint's own frame whose exact range mattered to some explored
	 * path (the rest match any scalar); all_precise when that could not be tracked. */
	uint16_t precise[EBPF_MAX_FRAMES]; /* by frame number */
	bool all_precise;
	uint64_t precise_slots[EBPF_MAX_FRAMES]; /* spilled scalars whose range mattered */
};

/* Where states are compared (branch targets and fall-throughs, returns from calls); at a join
 * (a jump target, where paths meet) one is always stored, elsewhere at most every few insns. */
#define PRUNE_POINT 1u
#define PRUNE_JOIN  2u

struct insn_aux {
	uint32_t n_states;	       /* stored here */
	uint32_t n_exact_only;	       /* ... of them SIG_EXACT_ONLY (prune.c) */
	struct checkpoint *exact_only; /* prune.c: the newest of those */
	struct sig_entry *entry;       /* state_index.c: the first signature stored here */
	uint16_t live_in;	       /* registers that may be read before written from here on */
	uint8_t prune_point;	       /* PRUNE_* */
	uint8_t seen;
	uint32_t subprog;
	uint32_t ipdom;	       /* conditional jumps: immediate post-dominator, UINT32_MAX = exit */
	const char *taint_src; /* what made a value rank-local here ("ctx->reg_buff", ...) */
	uint32_t taint_map;    /* ... read from rank-local map taint_map - 1 (0: none) */
	char taint_buf[64];
	int32_t ldx_ctx; /* loads: LDX_UNSEEN, LDX_OTHER, LDX_MIXED or LDX_CTX(off) (ctx_off) */
};
#define LDX_UNSEEN   0
#define LDX_OTHER    1
#define LDX_MIXED    (-1)
#define LDX_CTX(off) ((int32_t)(off) + 2)

struct subprog {
	uint32_t start, end; /* [start, end) */
	uint32_t stack_depth;
	bool called;
};

/* The memory of one verification (arena.c): chunks freed together at the end, and blocks of
 * power-of-two sizes reused by class while it runs. */
#define ARENA_CLASSES 32
#define ARENA_KEEP    (4u << 20) /* the most memory kept from one verification for the next */
struct arena_chunk;
struct arena {
	struct arena_chunk *head;  /* the chunks allocated from, newest first */
	struct arena_chunk *spare; /* kept chunks not allocated from yet, oldest first */
	size_t total;		   /* bytes in all chunks, both lists */
	/* bytes this verification allocated (blocks reused not counted again): unlike total,
	 * the same for the same program whatever the process verified before */
	size_t allocated;
	void *free_blocks[ARENA_CLASSES];
};

/* state_index.c: an open-addressing hash table of nodes, each found by its two words. */
struct index_node {
	uint64_t a, b;
};
struct node_table {
	struct index_node **slots;
	uint32_t cap, used;
};

struct env {
	const struct ebpf_insn *insns;
	uint32_t n;
	const struct ebpf_verify_opts *opts;
	const struct ebpf_prog_type *type;
	bool rank_check; /* rank consistency enforced */
	struct insn_aux *aux;
	struct subprog *subprogs;
	uint32_t n_subprogs;

	struct vstate cur;
	struct vstate **stack; /* pending branches (verifier.c push_branch) */
	uint32_t n_stack, cap_stack;

	uint32_t next_id;
	uint64_t processed, limit;
	uint32_t n_checkpoints, peak_states;
	uint64_t worst_cost;
	struct reg loaded[4]
			 [2]; /* mem.c mark_loaded: a load's result by log2(size), sign-extended */
	uint64_t ctx_read;    /* ebpf_verify_stats.ctx_read */
	uint64_t ctx_words;   /* ebpf_verify_stats.ctx_words */
	uint64_t ctx_written; /* ebpf_verify_stats.ctx_written */

	/* All memory of the analysis, and the frames given back, reused by state copies (a
	 * loop's analysis copies states at every branch and checkpoint). */
	struct arena arena;
	struct frame *free_frames;
	struct node_table sig_tab; /* state_index.c: stored states by (insn, signature) */
	struct node_table key_tab; /* ... complete ones by the values of their precise scalars */

	char *err;
	size_t err_len;
	char *log;
	size_t log_len, log_pos;
	bool log_on;
	int status;
};

/* --- arena.c ---------------------------------------------------------------------------- */
/* Takes the memory the last verification kept, if no other verification has it. */
void arena_init(struct arena *a);
/* 16-byte aligned memory that lives until arena_release; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t size);
void *arena_zalloc(struct arena *a, size_t size);
/* A block of at least size bytes (*cap: its size, a power of two), to be given back with
 * arena_unblock(a, p, *cap) or kept until arena_release. */
void *arena_block(struct arena *a, size_t size, size_t *cap);
void arena_unblock(struct arena *a, void *p, size_t cap);
/* realloc for blocks: a block of at least size bytes holding the first `used` bytes of p. */
void *arena_regrow(struct arena *a, void *p, size_t old_cap, size_t used, size_t size, size_t *cap);
/* Frees everything (keeping one chunk for the next verification). */
void arena_release(struct arena *a);

/* --- state.c ---------------------------------------------------------------------------- */
int state_init(struct env *env, struct vstate *st);
int state_copy(struct env *env, struct vstate *dst, const struct vstate *src);
/* Gives the state's frames and history back for reuse. */
void state_free(struct env *env, struct vstate *st);
struct frame *frame_new(struct env *env, uint32_t callsite, uint32_t subprog);
void frame_free(struct env *env, struct frame *f);
/* Makes slot `idx` exist in frame f; -ENOMEM on failure. */
int frame_grow(struct env *env, struct frame *f, uint32_t nslots);
static inline struct frame *cur_frame(struct env *env)
{
	return env->cur.frames[env->cur.curframe];
}
static inline struct reg *cur_regs(struct env *env)
{
	return cur_frame(env)->regs;
}

/* --- scalar.c: bounds of scalars ------------------------------------------------------------ */
void reg_mark_unknown(struct reg *r);
void reg_mark_const(struct reg *r, uint64_t v);
void reg_mark_not_init(struct reg *r);
void reg_mark_range(struct reg *r, uint64_t umin, uint64_t umax);
void reg_bounds_reset(struct reg *r);
void scalar_sync(struct reg *r);
bool scalar_is_const(const struct reg *r);
bool scalar_is_empty(const struct reg *r);
void scalar_trunc32(struct reg *r);
void scalar_sext(struct reg *r, int bits, bool to32);
/* dst = dst OP src on scalars; is64 = false for 32-bit ALU (zero-extends). */
void scalar_alu(struct reg *dst, const struct reg *src, uint8_t op, bool is64, bool sdiv);
void scalar_bswap(struct reg *dst, int bits, bool to_be);

/* --- branch.c -------------------------------------------------------------------------------- */
/* 1: always taken, 0: never taken, -1: unknown. */
int scalar_branch_taken(const struct reg *a, const struct reg *b, uint8_t op, bool is64);
/* Refines a and b (copies) for the branch being taken; returns false if impossible. */
bool scalar_refine(struct reg *a, struct reg *b, uint8_t op, bool is64, bool taken);

/* --- cfg.c ------------------------------------------------------------------------------------ */
int cfg_check(struct env *env);
/* Call graph: recursion, depth; with use_stack also the combined stack (after analysis). */
int cfg_check_calls(struct env *env, bool use_stack);

/* --- mem.c ------------------------------------------------------------------------------------ */
int check_ldx(struct env *env, const struct ebpf_insn *insn);
int check_store(struct env *env, const struct ebpf_insn *insn);
int check_atomic(struct env *env, const struct ebpf_insn *insn);
/* Readable, initialised, pointer-free memory of `size` bytes at reg (helper arguments). */
int check_helper_mem(struct env *env, uint32_t pc, uint32_t regno, uint64_t size, bool *local);

/* --- call.c ----------------------------------------------------------------------------------- */
int check_helper_call(struct env *env, const struct ebpf_insn *insn, uint32_t pc);
int check_subprog_call(struct env *env, const struct ebpf_insn *insn, uint32_t pc);
/* Returns 1 when the path ended (exit of the entry function), 0 to continue. */
int check_exit(struct env *env, uint32_t pc);

/* --- taint.c ---------------------------------------------------------------------------------- */
bool taint_active(const struct env *env, uint32_t *origin);
void taint_reg_write(struct env *env, struct reg *r);
void taint_branch(struct env *env, uint32_t pc, uint32_t origin);
void taint_at_insn(struct env *env, uint32_t pc);
void taint_frame_exit(struct env *env);
int taint_check_decision(struct env *env, uint32_t pc, const struct reg *val, const char *field);
/* val: the value written; ptr: the pointer written through (NULL for helpers, whose key is part
 * of val's label), whose rank-local offset would choose the element or bytes rank-locally. */
int taint_check_map_write(struct env *env, uint32_t pc, uint32_t map_idx, const struct reg *val,
			  const struct reg *ptr);
/* Records what made values rank-local at pc, for messages. */
void taint_source(struct env *env, uint32_t pc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a value read from rank-local map idx (the message then says why the map is
 * rank-local and how to fix the program, ebpf_verify_opts.map_why). */
void taint_source_map(struct env *env, uint32_t pc, uint32_t idx, const char *what);

/* --- prune.c ---------------------------------------------------------------------------------- */
/* 1: pruned (path done), 0: continue, <0 error. */
int prune_visit(struct env *env, uint32_t pc);
void prune_path_done(struct env *env, uint64_t exit_cost);
void prune_path_dead(struct env *env);

/* --- state_index.c: stored states by (instruction, signature) ------------------------------- */
/* One (instruction, signature): its lists. Allocated once and never moved, so a state links to
 * its entry (checkpoint.entry). The first entry of an instruction hangs off the instruction
 * (insn_aux.entry): most instructions store states of one signature only, and those need no
 * table; the others are in an open-addressing table by (instruction, signature). masks: the
 * distinct sets of precise scalars of its keyed complete states. */
#define INDEX_MASKS 4
/* The precise scalars of a stored state whose values key it (prune.c): registers by frame, and
 * stack slots: a spilled scalar, or the bytes of known value of a narrower store. Unused
 * entries are zero (masks are compared whole). */
#define KEY_SLOTS 8
struct key_mask {
	uint16_t regs[EBPF_MAX_FRAMES];
	uint8_t n_slots;
	struct {
		uint8_t frame, slot;
		uint8_t const_bytes; /* bytes that must hold a known value equal to the state's */
		uint8_t spill;	     /* a spilled scalar of the state's value */
	} slots[KEY_SLOTS];
};
struct sig_entry {
	union {
		struct index_node id;
		struct {
			uint64_t sig;
			uint64_t pc;
		};
	};
	uint32_t n_active;
	uint32_t n_masks;
	bool keyed; /* prune.c: its complete states are keyed as they complete */
	struct checkpoint *active, *done; /* list heads: newest, most recently completed */
	struct key_mask masks[INDEX_MASKS];
};

/* The entry of (pc, sig), or NULL. Its complete states are on its done list (most recently
 * completed first) or, once keyed, in the lists index_keyed() finds; those still being explored
 * are on its active list (newest first). Each list continues through ->older. */
struct sig_entry *index_find(const struct env *env, uint32_t pc, uint64_t sig);
/* The complete states of e whose precise scalars are masks[k] and whose values of them hash to
 * key (prune.c state_key), most recently completed first. */
struct checkpoint *index_keyed(const struct env *env, const struct sig_entry *e, uint32_t k,
			       uint64_t key);
/* The entry of (pc, sig), made when missing; NULL when out of memory. */
struct sig_entry *index_entry(struct env *env, uint32_t pc, uint64_t sig);
/* Whether another state may be stored there (a cap on states still being explored). */
bool index_has_room(const struct sig_entry *e);
/* cp (being explored) joins entry e. */
void index_add(struct sig_entry *e, struct checkpoint *cp);
/* cp's last path ended: it moves to its entry's done list. */
void index_complete(struct checkpoint *cp);
/* Complete state cp moves from the done list to the list of its key under mask (its precise
 * scalars); false when the entry has no room for another mask, or out of memory. */
bool index_key(struct env *env, struct checkpoint *cp, const struct key_mask *mask, uint64_t key);
/* Complete state cp is compared no more (it stays in memory: later states link to it). */
void index_forget(struct checkpoint *cp);

/* --- precise.c: which scalar ranges matter (Linux's precision tracking) ----------------- */
/* Records pc in the current path's history. */
void hist_push(struct env *env, uint32_t pc);
/* Notes that the instruction just recorded spilled to or filled from 8-byte stack slot `slot`
 * of frame `frameno`. */
void hist_note_slot(struct env *env, uint32_t frameno, uint32_t slot);
/* Notes that the conditional jump just recorded also narrowed copies of an operand. */
void hist_note_linked(struct env *env);
/* The registers in mask (current frame) are used where their range decides safety or a branch:
 * marks them precise in every checkpoint their values flowed through. skip_last: the last
 * history entry is the using instruction itself. */
void precise_mark(struct env *env, uint16_t mask, bool skip_last);
/* After pruning against cp: what mattered from cp matters from here too. */
void precise_from(struct env *env, const struct checkpoint *cp);
void precise_all(struct checkpoint *cp);

/* --- log.c ------------------------------------------------------------------------------------ */
int verr(struct env *env, uint32_t pc, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* loop_hint.c: a budget rejection ("WHAT: SEEN, over the BUDGET_NAME of BUDGET; ...") reported
 * at the loop it comes from (the back-edge around pc; any loop when pc is UINT32_MAX), with the
 * constant the loop compares against. */
int verr_loop(struct env *env, uint32_t pc, int rc, const char *what, uint64_t seen,
	      const char *budget_name, uint64_t budget);
void vlog(struct env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_insn_state(struct env *env, uint32_t pc);
const char *reg_type_str(uint8_t t);
/* "map_value(off=8,ks=4,vs=16,imm=0)"-like description of a register into buf. */
void reg_describe(const struct reg *r, char *buf, size_t len);
const struct ebpf_line_info *line_of(const struct env *env, uint32_t pc);
const char *insn_line_prefix(const struct env *env, uint32_t pc, char *buf, size_t len);

/* Maps (indices checked by cfg_check). */
struct ebpf_map *env_map(const struct env *env, uint32_t idx);
bool map_is_ringbuf(const struct env *env, uint32_t idx);
bool map_is_rdonly(const struct env *env, uint32_t idx);
bool map_is_local(const struct env *env, uint32_t idx);
bool map_is_per_comm(const struct env *env, uint32_t idx);
/* Arrays: which keys exist never changes (a lookup fails only for a key out of range). */
bool map_presence_fixed(const struct env *env, uint32_t idx);
/* pc: the writing instruction (the first one is reported, ebpf_verify_opts.map_write_insn) */
void map_mark_written(struct env *env, uint32_t idx, uint32_t pc);

#define U64_MAX	    UINT64_MAX
#define S64_MAX	    INT64_MAX
#define S64_MIN	    INT64_MIN
#define U32_MAX	    UINT32_MAX
#define S32_MAX	    INT32_MAX
#define S32_MIN	    INT32_MIN
#define MAX_VAR_OFF (1ll << 29) /* bound on any pointer offset, as Linux's BPF_MAX_VAR_OFF */

static inline bool reg_is_ptr(const struct reg *r)
{
	return r->type != NOT_INIT && r->type != SCALAR;
}

#endif
