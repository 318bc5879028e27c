/* Sub-commands of the ncclbpf tool register themselves with NCCLBPF_COMMAND in their own file
 * (cmd_<name>.c); main.c finds them through the linker section, so adding a command never
 * touches a shared file. */
#ifndef NCCLBPF_CLI_H
#define NCCLBPF_CLI_H

struct ncclbpf_cmd {
	const char *name;
	const char *args;    /* usage after the name, e.g. "[--interp|--jit] [MEM-HEX]" */
	const char *summary; /* one line */
	int (*run)(int argc, char **argv); /* argv[0] is the command name; returns exit status */
};

#define NCCLBPF_COMMAND(ident, ...)                                                                \
	static const struct ncclbpf_cmd ident = {__VA_ARGS__};                                     \
	static const struct ncclbpf_cmd *ident##_ptr                                               \
	    __attribute__((used, section("ncclbpf_cmds"), aligned(sizeof(void *)))) = &ident

#endif
