#ifndef EBPF_VERSION_H
#define EBPF_VERSION_H
/* Version of the engine library ("0.1.0"). */
const char *ebpf_engine_version(void);
#endif
