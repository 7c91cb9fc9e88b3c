/* hitmap check [--json]: what can be collected on this machine, and why not. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "collectors/probe.h"
#include "core/json.h"

static void check_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap check [--json] [--wide]\n\n"
		"Tries each collector on this process and says what works here and why not:\n"
		"pmu (precise memory events), timer (cpu-clock + registers), watch (debug\n"
		"registers), kernel sampling, BTF, kernel debuginfo, debuginfod.\n"
		"  --json   hitmap.check/1\n"
		"  --wide   text lines as long as they come (default: wrapped at 120)\n");
}

static void print_text(FILE *out, const struct hm_probe *p)
{
	for (int i = 0; i < HM_PROBE_NR; i++) {
		const struct hm_probe_item *it = &p->item[i];

		fprintf(out, "%-11s%-5s%s\n", it->name, it->ok ? "yes" : "no", it->detail);
	}
}

static void print_json(const struct hm_probe *p)
{
	const struct hm_pmu_status *st = &p->pmu;
	struct hm_json j;

	hm_json_init(&j, stdout);
	hm_json_obj_begin(&j, NULL);
	hm_json_str(&j, "schema", "hitmap.check/1");
	hm_json_str(&j, "kernel_release", p->release);
	hm_json_arr_begin(&j, "checks");
	for (int i = 0; i < HM_PROBE_NR; i++) {
		hm_json_obj_begin(&j, NULL);
		hm_json_str(&j, "name", p->item[i].name);
		hm_json_bool(&j, "ok", p->item[i].ok);
		hm_json_str(&j, "detail", p->item[i].detail);
		hm_json_obj_end(&j);
	}
	hm_json_arr_end(&j);
	hm_json_obj_begin(&j, "pmu");
	hm_json_str(&j, "sysfs", st->sysfs);
	hm_json_bool(&j, "cpu_pmu", st->cpu_pmu);
	if (st->have_model) {
		hm_json_str(&j, "model", st->model.name);
		hm_json_str(&j, "model_desc", st->model.desc);
	} else {
		hm_json_null(&j, "model");
		hm_json_null(&j, "model_desc");
	}
	hm_json_bool(&j, "ibs_op", st->ibs_op_type >= 0);
	hm_json_bool(&j, "spe", st->spe_type >= 0);
	if (st->paranoid == -99)
		hm_json_null(&j, "paranoid");
	else
		hm_json_i64(&j, "paranoid", st->paranoid);
	hm_json_bool(&j, "privileged", st->privileged);
	hm_json_arr_begin(&j, "presets");
	for (const char *s = p->presets; *s;) {
		char name[16];
		size_t n = strcspn(s, " ");

		snprintf(name, sizeof(name), "%.*s", (int)n, s);
		hm_json_str(&j, NULL, name);
		s += n + (s[n] == ' ');
	}
	hm_json_arr_end(&j);
	if (p->precise_ip >= 0)
		hm_json_i64(&j, "precise_ip", p->precise_ip);
	else
		hm_json_null(&j, "precise_ip");
	hm_json_obj_end(&j);
	hm_json_i64(&j, "watch_slots", p->watch_slots);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'}, {"wide", no_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct hm_probe p;
	struct cli_text t;
	int c, json = 0, wide = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'W': wide = 1; break;
		case 'h': check_usage(stdout); return HM_EXIT_OK;
		default: return cli_bad_option("check", c, argv);
		}
	}
	if (optind < argc) {
		return cli_err("check", HM_EXIT_USAGE, "%s: unexpected argument; it takes only "
			       "--json and --wide", argv[optind]);
	}
	hm_probe_run(&p, NULL);
	if (json)
		print_json(&p);
	else {
		print_text(cli_text_begin(&t, wide), &p);
		cli_text_end(&t);
	}
	return HM_EXIT_OK;
}
