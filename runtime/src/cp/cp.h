/* What the control plane (runtime/src/cp/) offers the folders above it: whether it is on, and a
 * communicator's membership (start/start.c attaches and detaches every communicator). */
#ifndef NCCLBPF_CP_H
#define NCCLBPF_CP_H

struct ncclbpf_comm;

/* cp_state.c */
int cp_enabled(void);
/* NCCLBPF_CP_DIR is set but refused (not trusted): live inspection stays off too, quietly (the
 * control plane's WARN said why). */
int cp_dir_refused(void);
/* cp_member.c */
void cp_member_attach(struct ncclbpf_comm *c);
void cp_member_detach(struct ncclbpf_comm *c);

#endif
