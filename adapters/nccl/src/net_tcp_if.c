/* Interface discovery and configuration of the TCP transport, once per process.
 *
 * Selection follows NCCL's socket transport so that both pick the same interfaces:
 * NCCLBPF_NET_IFNAME, else NCCL_SOCKET_IFNAME: a comma-separated list of name prefixes;
 * a leading '^' excludes the listed ones instead, a leading '=' (after '^' if both) makes the
 * names exact ("^=eth0,lo", "=ib0", "eth,en"). Unset: "ib" interfaces, else everything but
 * docker*, lo* and virbr*, else docker*, else loopback. NCCL_SOCKET_FAMILY=AF_INET|AF_INET6
 * restricts the address family. IPv6 loopback and link-local addresses are skipped (they need
 * scope ids the handle does not carry); one address per interface, at most 16 interfaces. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net_log.h"
#include "net_tcp_internal.h"
#include "ncclbpf/envvars.h"

#define MAX_IFS 16

struct tcp_if {
	char name[IFNAMSIZ + 1];
	struct sockaddr_storage addr;
	unsigned addr_len;
	int speed;
	char *pci; /* realpath of /sys/class/net/NAME/device, or NULL (virtual interfaces) */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tcp_if ifs[MAX_IFS];
static int n_ifs;
static struct tcp_config cfg;

/* Does name match the selection spec (NCCL_SOCKET_IFNAME syntax)? */
static int if_match(const char *spec, const char *name)
{
	int exclude = 0, exact = 0;
	if (*spec == '^') {
		exclude = 1;
		spec++;
	}
	if (*spec == '=') {
		exact = 1;
		spec++;
	}
	int hit = 0;
	const char *p = spec;
	while (*p && !hit) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		/* NCCL allows "name:port"; the port part does not take part in matching. */
		const char *colon = memchr(p, ':', n);
		size_t m = colon ? (size_t)(colon - p) : n;
		if (m > 0)
			hit = exact ? (strlen(name) == m && !strncmp(name, p, m))
				    : !strncmp(name, p, m);
		p = e ? e + 1 : p + n;
	}
	return exclude ? !hit : hit;
}

static int family_wanted(int fam)
{
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	switch (ncclbpf_env_enum("NCCL_SOCKET_FAMILY")) { /* AF_INET|AF_INET6, -1: both */
	case 0:
		return fam == AF_INET;
	case 1:
		return fam == AF_INET6;
	default:
		return 1;
	}
}

static int read_speed(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%.32s/speed", name);
	FILE *f = fopen(path, "r");
	int s = 0;
	if (f) {
		if (fscanf(f, "%d", &s) != 1)
			s = 0;
		fclose(f);
	}
	/* NCCL's socket transport assumes 10 Gb/s when the kernel does not say. */
	return s > 0 ? s : 10000;
}

static char *read_pci(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%.32s/device", name);
	return realpath(path, NULL);
}

static int find(const char *spec)
{
	struct ifaddrs *list = NULL;
	if (getifaddrs(&list))
		return 0;
	int n = 0;
	for (struct ifaddrs *a = list; a && n < MAX_IFS; a = a->ifa_next) {
		if (!a->ifa_addr || !(a->ifa_flags & IFF_UP) || !a->ifa_name)
			continue;
		int fam = a->ifa_addr->sa_family;
		if (!family_wanted(fam) || !if_match(spec, a->ifa_name))
			continue;
		if (fam == AF_INET6) {
			const struct in6_addr *s6 =
			    &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
			if (IN6_IS_ADDR_LOOPBACK(s6) || IN6_IS_ADDR_LINKLOCAL(s6))
				continue;
		}
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= !strcmp(ifs[i].name, a->ifa_name);
		if (dup)
			continue;
		struct tcp_if *t = &ifs[n++];
		snprintf(t->name, sizeof(t->name), "%s", a->ifa_name);
		t->addr_len =
		    fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		memset(&t->addr, 0, sizeof(t->addr));
		memcpy(&t->addr, a->ifa_addr, t->addr_len);
	}
	freeifaddrs(list);
	return n;
}

static void discover(void)
{
	/* The table's ranges are these limits (tests/security/test_envvars.c checks them). */
	cfg.nsocks = (int)ncclbpf_env_uint("NCCLBPF_NET_NSOCKS");
	/* NSOCKS counts sockets that carry payload: 1 is a single socket, N > 1 is the
	 * control socket plus N data sockets. */
	cfg.nsocks = cfg.nsocks > 1 ? cfg.nsocks + 1 : 1;
	cfg.nthreads = (int)ncclbpf_env_uint("NCCLBPF_NET_NTHREADS"); /* 0: one per data socket */
	if (!cfg.nthreads || cfg.nthreads > cfg.nsocks - 1)
		cfg.nthreads = cfg.nsocks - 1;
	cfg.min_chunk = (size_t)ncclbpf_env_uint("NCCLBPF_NET_MIN_CHUNK");
	cfg.maxrecvs = (int)ncclbpf_env_uint("NCCLBPF_NET_MAXRECVS");
	cfg.hello_ms = (int)ncclbpf_env_uint("NCCLBPF_NET_HELLO_MS");

	const char *spec = ncclbpf_env_str("NCCLBPF_NET_IFNAME");
	if (!spec)
		spec = ncclbpf_env_str("NCCL_SOCKET_IFNAME");
	if (spec) {
		n_ifs = find(spec);
		if (!n_ifs)
			net_warn("NCCLbpf: no interface matches '%s'", spec);
	} else {
		static const char *const order[] = {"ib", "^docker,lo,virbr", "docker", "lo"};
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && !n_ifs; i++)
			n_ifs = find(order[i]);
	}
	for (int i = 0; i < n_ifs; i++) {
		ifs[i].speed = read_speed(ifs[i].name);
		ifs[i].pci = read_pci(ifs[i].name);
		char host[INET6_ADDRSTRLEN] = "?";
		const void *a =
		    ifs[i].addr.ss_family == AF_INET
			? (const void *)&((struct sockaddr_in *)&ifs[i].addr)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)&ifs[i].addr)->sin6_addr;
		inet_ntop(ifs[i].addr.ss_family, a, host, sizeof(host));
		net_info("NET/NCCLbpf: device %d: %s %s, %d Mb/s, %d socket(s), %d thread(s)", i,
			 ifs[i].name, host, ifs[i].speed, cfg.nsocks, cfg.nthreads);
	}
}

const struct tcp_config *tcp_config(void)
{
	pthread_once(&once, discover);
	return &cfg;
}

int tcp_devices(void)
{
	pthread_once(&once, discover);
	return n_ifs;
}

int tcp_dev_addr(int dev, void *out, unsigned *len)
{
	if (tcp_devices() <= dev || dev < 0)
		return -1;
	memcpy(out, &ifs[dev].addr, sizeof(ifs[dev].addr));
	*len = ifs[dev].addr_len;
	return 0;
}

ncclResult_t tcp_get_properties(int dev, ncclNetProperties_v12_t *p)
{
	if (!p || dev < 0 || dev >= tcp_devices())
		return ncclInvalidArgument;
	memset(p, 0, sizeof(*p));
	p->name = ifs[dev].name;
	p->pciPath = ifs[dev].pci;
	p->guid = (uint64_t)dev;
	p->ptrSupport = NCCL_PTR_HOST;
	p->regIsGlobal = 0;
	p->forceFlush = 0;
	p->speed = ifs[dev].speed;
	p->port = 0;
	p->latency = 0;
	p->maxComms = 65536;
	p->maxRecvs = cfg.maxrecvs;
	p->netDeviceType = NCCL_NET_DEVICE_HOST;
	p->netDeviceVersion = 0;
	p->vProps.ndevs = 1;
	p->vProps.devs[0] = dev;
	p->maxP2pBytes = (size_t)INT_MAX; /* test() reports sizes as int */
	p->maxCollBytes = (size_t)INT_MAX;
	p->maxMultiRequestSize = 1;
	p->railId = NCCL_NET_ID_UNDEF;
	p->planeId = NCCL_NET_ID_UNDEF;
	return ncclSuccess;
}
