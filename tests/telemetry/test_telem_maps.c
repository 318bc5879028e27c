/* Policy maps exported by declaration (NCCLBPF_EXPORT_COUNTERS / _GAUGES): with the policy
 * tests/telemetry/policies/export.c active and collectives finishing, the Prometheus text has a
 * family per value member (counters ending _total, typed counter; gauges), one sample per map
 * element labelled with the process's labels, the bundle and each key member (an integer array
 * as dotted elements, padding members left out), signed members signed, per-CPU values summed;
 * the whole text passes the strict parser. A bundle whose exported value is not integers is
 * refused when it is opened, one whose key member would replace a label every sample has is
 * refused at load: both naming the map and member, the running policy staying active.
 *
 * usage: test_telem_maps POLICY_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/telemetry.h"
#include "prom_text.h"
#include "telem_harness.h"

static const struct prom_sample *find_sample(const struct prom_doc *d, const char *name,
					     const char *k1, const char *v1, const char *k2,
					     const char *v2)
{
	for (int i = 0; i < d->n; i++) {
		const struct prom_sample *s = &d->s[i];
		if (strcmp(s->name, name))
			continue;
		if (k1 && (!prom_label(s, k1) || strcmp(prom_label(s, k1), v1)))
			continue;
		if (k2 && (!prom_label(s, k2) || strcmp(prom_label(s, k2), v2)))
			continue;
		return s;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_telem_maps POLICY_DIR\n");
		return 2;
	}
	char policy[4096];
	snprintf(policy, sizeof(policy), "%s/export.o", argv[1]);
	th_env_clear();
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	void *c = th_comm(0xe4, "maps", 4, 1);
	for (int i = 0; i < 3; i++)
		th_coll(c, 1, (uint64_t)i, "AllReduce", 262144, "ncclFloat32", 2, "RING", "SIMPLE",
			1000000, 100000);
	for (int i = 0; i < 2; i++)
		th_coll(c, 1, 10 + (uint64_t)i, "AllGather", 1024, "ncclBfloat16", 1, "RING", "LL",
			1000000, 5000 + (uint64_t)i);

	size_t cap = 1 << 22;
	char *buf = malloc(cap);
	size_t n = ncclbpf_telem_prometheus(buf, cap);
	struct prom_doc d;
	CHECKF(n && prom_parse(&d, buf, n) == 0, "%s", d.err);
	CHECK(prom_type_of(&d, "ncclbpf_map_colls_count_total") &&
	      !strcmp(prom_type_of(&d, "ncclbpf_map_colls_count_total"), "counter"));
	CHECK(prom_type_of(&d, "ncclbpf_map_last_last_ns") &&
	      !strcmp(prom_type_of(&d, "ncclbpf_map_last_last_ns"), "gauge"));
	/* AllReduce (4) of 1 MiB: bucket 20; rank 1 in the address's last byte. */
	const struct prom_sample *s =
	    find_sample(&d, "ncclbpf_map_colls_count_total", "coll", "4", "bucket", "20");
	CHECK(s && s->value == 3);
	if (s) {
		CHECK(!strcmp(prom_label(s, "addr"), "10.0.0.1"));
		CHECK(!strcmp(prom_label(s, "bundle"), "export.o"));
		CHECK(prom_label(s, "job_id") && prom_label(s, "pid"));
		CHECK(!prom_label(s, "_pad"));
		CHECK_EQ_U64(s->n_labels, 10); /* 6 of the process, bundle, 3 of the key */
	}
	s = find_sample(&d, "ncclbpf_map_colls_bytes_total", "coll", "4", NULL, NULL);
	CHECK(s && s->value == 3.0 * 1048576);
	/* AllGather (2): 2 KiB per rank is this rank's bytes: bucket 11. */
	s = find_sample(&d, "ncclbpf_map_colls_count_total", "coll", "2", "bucket", "11");
	CHECK(s && s->value == 2);
	/* The per-CPU array: element 1 written (summed over CPUs), element 0 zero. */
	s = find_sample(&d, "ncclbpf_map_last_last_ns", "key", "1", NULL, NULL);
	CHECKF(s && s->value == 5001, "last_ns %g", s ? s->value : -1);
	s = find_sample(&d, "ncclbpf_map_last_minus_rank", "key", "1", NULL, NULL);
	CHECK(s && s->value == -2);
	s = find_sample(&d, "ncclbpf_map_last_last_ns", "key", "0", NULL, NULL);
	CHECK(s && s->value == 0);
	prom_free(&d);

	/* Refused, naming map and member; the exporting policy stays active. */
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	char bad[4096];
	snprintf(bad, sizeof(bad), "%s/export_float.o", argv[1]);
	CHECK(ncclbpf_rt_reload(bad, &r) != 0);
	CHECKF(strstr(r.msg, "map 'stats'") && strstr(r.msg, "member 'mean' is not an integer"),
	       "%s", r.msg);
	snprintf(bad, sizeof(bad), "%s/export_reserved.o", argv[1]);
	CHECK(ncclbpf_rt_reload(bad, &r) != 0);
	CHECKF(strstr(r.msg, "map 'by_rank'") && strstr(r.msg, "key member 'rank'"), "%s", r.msg);
	n = ncclbpf_telem_prometheus(buf, cap);
	CHECK(n && strstr(buf, "ncclbpf_map_colls_count_total{"));
	free(buf);
	th_finalize(c);
	return check_summary("test_telem_maps");
}
