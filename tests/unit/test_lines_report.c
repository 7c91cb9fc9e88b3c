/* render/report_print.c and report_json.c: text views and JSON contract of crafted lines. */
#include "lines_util.h"

#include "render/report_print.h"

static char *render(const struct set *s, int json, enum hm_report_view_kind view, size_t top)
{
	struct hm_report_view v = {
		.input = "demo.data", .source = s->lines.source, .lost = 3, .top = top,
		.view = view, .lines = &s->lines, .splits = &s->splits,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (json)
		hm_report_print_json(f, &v);
	else
		hm_report_print_text(f, &v);
	fclose(f);
	return buf;
}

/* A small JSON syntax check: one value, nothing after it. */
static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++)
		if (*p == '\\' && !*++p)
			return NULL;
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_seq(const char *p, char close, int keys)
{
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keys) {
			if (!(p = json_string(json_ws(p))))
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = json_value(p)))
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p)
{
	p = json_ws(p);
	if (*p == '{')
		return json_seq(p, '}', 1);
	if (*p == '[')
		return json_seq(p, ']', 0);
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		char *end;

		strtod(p, &end);
		return end;
	}
	return NULL;
}

static void test_report_json_has_contract_keys(void **state)
{
	static const char *const keys[] = {
		"{\"schema\":\"hitmap.report/1\"", "\"input\":\"demo.data\"", "\"source\":\"timer\"",
		"\"samples\":{\"total\":200,\"with_addr\":200,\"resolved\":200,\"lost\":3}",
		"\"lines\":[{\"addr\":\"0x7f0000001000\"", "\"object\":\"worker_stats\"",
		"\"verdict\":\"false_sharing\"", "\"contention\":", "\"fields\":[{\"field\":",
		"\"field\":\"worker_stats.ops\"", "\"field\":\"worker_stats.errors\"",
		"\"offset\":8", "\"size\":8", "\"loads\":0", "\"stores\":100", "\"threads\":[{\"tid\":101",
		"\"threads\":[{\"tid\":102", "\"cpus\":[{\"cpu\":1", "\"sites\":[{\"func\":\"worker\"",
		"\"fix\":\"move worker_stats.errors to its own cache line: insert 56 bytes",
		"\"splits\":[", "\"stats\":{", "\"pairs\":[{\"kind\":\"false_sharing\"",
	};
	struct set *s = set_new();
	char *out;
	const char *end;

	(void)state;
	false_sharing_set(s, HM_SRC_TIMER);
	build(s, 1000);
	out = render(s, 1, HM_VIEW_LINES, 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strstr(out, keys[i]))
			fail_msg("no %s in %s", keys[i], out);
	end = json_value(out);
	assert_non_null(end);
	assert_string_equal(json_ws(end), "");
	free(out);
	set_free(s);
}

static void test_report_json_pmu_has_c2c_totals(void **state)
{
	struct set *s = set_new();
	char *out;

	(void)state;
	false_sharing_set(s, HM_SRC_PMU);
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].s.data_src = PERF_MEM_S(OP, STORE) | PERF_MEM_S(LVL, HIT) |
				       PERF_MEM_S(LVL, L1);
	build(s, 0);
	out = render(s, 1, HM_VIEW_LINES, 1);
	assert_non_null(strstr(out, "\"source\":\"pmu\""));
	assert_non_null(strstr(out, "\"c2c\":{\"records\":200"));
	assert_non_null(strstr(out, "\"st_l1hit\":200"));
	assert_non_null(json_value(out));
	free(out);
	set_free(s);
}

static void test_text_report_views(void **state)
{
	struct set *s = set_new();
	char *out;

	(void)state;
	false_sharing_set(s, HM_SRC_TIMER);
	add(s, (struct spec){ BASE + 0x13e, 4, HM_OP_LOAD, 1, 0, 5, "packed", BASE + 0x100,
			      "packed.value", HM_SRC_TIMER });
	build(s, 1000);
	out = render(s, 0, HM_VIEW_LINES, 0);
	assert_non_null(strstr(out, "demo.data (timer): 201 samples"));
	assert_non_null(strstr(out, "conflicts"));
	assert_non_null(strstr(out, "false_sharing"));
	assert_non_null(strstr(out, "worker_stats.errors"));
	assert_non_null(strstr(out, "threads 102(100)"));
	assert_non_null(strstr(out, "fix: move worker_stats.errors"));
	assert_non_null(strstr(out, "packed.value"));
	free(out);
	out = render(s, 0, HM_VIEW_SHARING, 0);
	assert_non_null(strstr(out, "thread 101 writes"));
	assert_null(strstr(out, "splits"));
	free(out);
	out = render(s, 0, HM_VIEW_SPLITS, 0);
	assert_non_null(strstr(out, "1 of 201 sized accesses cross a 64-byte line"));
	free(out);
	out = render(s, 0, HM_VIEW_FIELDS, 1);
	assert_non_null(strstr(out, "more rows"));
	free(out);
	assert_int_equal(hm_report_view_parse("sharing"), HM_VIEW_SHARING);
	assert_int_equal(hm_report_view_parse("heat"), -1);
	set_free(s);
}

static void test_empty_input_reports_what_to_record(void **state)
{
	struct set *s = set_new();
	char *out;

	(void)state;
	add(s, (struct spec){ 0, 0, HM_OP_UNKNOWN, 1, 0, 1, NULL, 0, NULL, HM_SRC_TIMER });
	build(s, 0);
	out = render(s, 0, HM_VIEW_LINES, 0);
	assert_non_null(strstr(out, "no sample has a data address"));
	assert_non_null(strstr(out, "nothing to move"));
	free(out);
	out = render(s, 1, HM_VIEW_LINES, 0);
	assert_non_null(strstr(out, "\"lines\":[]"));
	assert_non_null(json_value(out));
	free(out);
	set_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_json_has_contract_keys),
		cmocka_unit_test(test_report_json_pmu_has_c2c_totals),
		cmocka_unit_test(test_text_report_views),
		cmocka_unit_test(test_empty_input_reports_what_to_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
