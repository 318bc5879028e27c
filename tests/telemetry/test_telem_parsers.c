/* The test parsers themselves (tests/common/prom_text.h, json_tree.h): each accepts what its
 * format allows and refuses each rule broken once, so that a telemetry test passing through
 * them means the output is valid, not that the parser is lax. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "json_tree.h"
#include "prom_text.h"

static int prom_ok(const char *text)
{
	struct prom_doc d;
	int ok = prom_parse(&d, text, strlen(text)) == 0;
	prom_free(&d);
	return ok;
}

static int json_ok(const char *text)
{
	struct json *j = json_parse(text, strlen(text), NULL, 0);
	json_free(j);
	return j != NULL;
}

static void test_prom(void)
{
	const char *good = "# HELP a_total A counter.\n"
			   "# TYPE a_total counter\n"
			   "a_total{x=\"1\",y=\"q\\\"\\\\\\n\"} 3\n"
			   "a_total{x=\"2\"} 4 1700000000000\n"
			   "\n"
			   "# a free comment\n"
			   "# TYPE h histogram\n"
			   "h_bucket{le=\"0.5\"} 1\n"
			   "h_bucket{le=\"1\"} 3\n"
			   "h_bucket{le=\"+Inf\"} 3\n"
			   "h_sum 1.25\n"
			   "h_count 3\n"
			   "g:rule NaN\n"
			   "u -Inf\n"
			   "v 1e-06\n";
	CHECK(prom_ok(good));
	struct prom_doc d;
	CHECK(prom_parse(&d, good, strlen(good)) == 0);
	CHECK_EQ_U64(d.n, 10);
	CHECK(!strcmp(prom_label(&d.s[0], "y"), "q\"\\\n"));
	prom_free(&d);
	static const char *const bad[] = {
	    "a 1",					 /* no final newline */
	    "1a 1\n",					 /* metric name */
	    "a{1x=\"1\"} 1\n",				 /* label name */
	    "a{__x=\"1\"} 1\n",				 /* reserved label name */
	    "a{x=\"1\",x=\"2\"} 1\n",			 /* label twice */
	    "a{x=\"\\t\"} 1\n",				 /* escape */
	    "a{x=1} 1\n",				 /* unquoted */
	    "a{x=\"1\"}1\n",				 /* no space */
	    "a one\n",					 /* value */
	    "a 1 2 3\n",				 /* extra field */
	    "a 1 \n",					 /* trailing space */
	    "a 1\na 2\n",				 /* series twice */
	    "a 1\nb 1\na{x=\"y\"} 1\n",			 /* family split */
	    "a 1\n# TYPE a counter\n",			 /* TYPE after samples */
	    "# TYPE a counter\n# TYPE a counter\na 1\n", /* TYPE twice */
	    "# TYPE a meter\na 1\n",			 /* unknown type */
	    "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", /* no +Inf */
	    ("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
	     "h_sum 1\nh_count 1\n"), /* not cumulative (one string: parenthesized for clang) */
	    "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n", /* count */
	    "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n",		 /* no sum */
	    "# TYPE h histogram\nh 2\n",					 /* sample */
	    "# TYPE h histogram\nh_bucket 1\n",					 /* no le */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(!prom_ok(bad[i]), "accepted bad text %zu: %s", i, bad[i]);
	/* Many families: the family table grows while one is open (the parser kept a pointer into
	 * the old table: the ASan twin saw the write after free); a family split across the growth
	 * is still refused. */
	char many[4096];
	size_t o = 0;
	for (int f = 0; f < 40; f++)
		o +=
		    (size_t)snprintf(many + o, sizeof(many) - o, "# TYPE f%d gauge\nf%d 1\n", f, f);
	CHECK(prom_ok(many));
	for (int f = 15; f < 17; f++) {
		char split[sizeof(many) + 64];
		snprintf(split, sizeof(split), "%sf%d{x=\"again\"} 2\n", many, f);
		CHECKF(!prom_ok(split), "family f%d split over the table's growth accepted", f);
	}
}

static void test_json(void)
{
	CHECK(json_ok("{\"a\":[1,-0.5,2e10,true,false,null,\"x\\u00e9\\ud83d\\ude00\"],\"b\":{}}"));
	CHECK(json_ok(" [ ] "));
	const char *kv = "{\"k\":\"v\\n\",\"n\":12.5}";
	struct json *j = json_parse(kv, strlen(kv), NULL, 0);
	CHECK(j && !strcmp(json_str(j, "k"), "v\n") && json_num(j, "n", 0) == 12.5);
	json_free(j);
	static const char *const bad[] = {
	    "",
	    "{",
	    "{\"a\":1,}",
	    "[1,]",
	    "01",
	    "+1",
	    ".5",
	    "1.",
	    "1e",
	    "\"\t\"",
	    "\"\\x\"",
	    "\"\\ud800\"",
	    "{\"a\":1,\"a\":2}",
	    "{a:1}",
	    "[1] [2]",
	    "nul",
	    "'x'",
	    "[1 2]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(!json_ok(bad[i]), "accepted bad JSON %zu: %s", i, bad[i]);
}

int main(void)
{
	test_prom();
	test_json();
	return check_summary("test_telem_parsers");
}
