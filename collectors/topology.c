/* hm_topology_read: topology.h. Distinct sibling lists in the order CPUs first show them,
 * as perf lists them. */
#include "collectors/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of a sysfs file, without its newline; NULL when unreadable. */
static const char *read_line(struct hm_arena *a, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return hm_arena_strdup(a, buf);
}

static uint32_t read_id(struct hm_arena *a, const char *path)
{
	const char *s = read_line(a, path);

	return s ? (uint32_t)strtol(s, NULL, 10) : UINT32_MAX;
}

/* Adds s to the distinct list v (n entries, room for cap). */
static void add_distinct(const char **v, uint32_t *n, uint32_t cap, const char *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < *n; i++)
		if (!strcmp(v[i], s))
			return;
	if (*n < cap)
		v[(*n)++] = s;
}

static void read_cpus(struct hm_arena *a, const char *root, uint32_t nr, struct hm_perf_topology *t)
{
	char p[512];

	t->core_sibs = hm_arena_alloc(a, (nr + 1) * sizeof(*t->core_sibs));
	t->thread_sibs = hm_arena_alloc(a, (nr + 1) * sizeof(*t->thread_sibs));
	t->die_sibs = hm_arena_alloc(a, (nr + 1) * sizeof(*t->die_sibs));
	t->core_id = hm_arena_alloc(a, (nr + 1) * sizeof(*t->core_id));
	t->socket_id = hm_arena_alloc(a, (nr + 1) * sizeof(*t->socket_id));
	t->die_id = hm_arena_alloc(a, (nr + 1) * sizeof(*t->die_id));
	for (uint32_t c = 0; c < nr; c++) {
#define TOPO(file) (snprintf(p, sizeof(p), "%s/cpu/cpu%u/topology/" file, root, c), p)
		add_distinct(t->core_sibs, &t->nr_core_sibs, nr, read_line(a, TOPO("core_siblings_list")));
		add_distinct(t->thread_sibs, &t->nr_thread_sibs, nr,
			     read_line(a, TOPO("thread_siblings_list")));
		add_distinct(t->die_sibs, &t->nr_die_sibs, nr, read_line(a, TOPO("die_cpus_list")));
		t->core_id[c] = read_id(a, TOPO("core_id"));
		t->socket_id[c] = read_id(a, TOPO("physical_package_id"));
		t->die_id[c] = read_id(a, TOPO("die_id"));
#undef TOPO
	}
	t->nr_cpus = nr;
}

/* "Node 0 MemTotal:       24585412 kB" */
static void node_mem(const char *path, uint64_t *total, uint64_t *free_kb)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *v;

		if ((v = strstr(line, "MemTotal:")))
			*total = strtoull(v + 9, NULL, 10);
		else if ((v = strstr(line, "MemFree:")))
			*free_kb = strtoull(v + 8, NULL, 10);
	}
	fclose(f);
}

static void read_nodes(struct hm_arena *a, const char *root, uint32_t nr_cpus,
		       struct hm_perf_topology *t)
{
	enum { MAX_NODES = 1024 };
	char p[512];

	t->nodes = hm_arena_alloc(a, MAX_NODES * sizeof(*t->nodes));
	for (uint32_t n = 0; n < MAX_NODES; n++) {
		struct hm_perf_numa_node *nd = &t->nodes[t->nr_nodes];

		snprintf(p, sizeof(p), "%s/node/node%u/cpulist", root, n);
		if (!(nd->cpus = read_line(a, p)))
			continue;	/* node ids may have gaps */
		nd->node = n;
		snprintf(p, sizeof(p), "%s/node/node%u/meminfo", root, n);
		node_mem(p, &nd->mem_total, &nd->mem_free);
		t->nr_nodes++;
	}
	if (!t->nr_nodes && nr_cpus) {	/* no NUMA in the kernel: one node, every CPU */
		t->nodes[0].node = 0;
		t->nodes[0].cpus = nr_cpus > 1 ? hm_arena_printf(a, "0-%u", nr_cpus - 1) : "0";
		t->nr_nodes = 1;
	}
}

void hm_topology_read(struct hm_arena *a, const char *sysroot, uint32_t nr_cpus,
		      struct hm_perf_topology *t)
{
	char root[256];

	memset(t, 0, sizeof(*t));
	snprintf(root, sizeof(root), "%s/sys/devices/system", sysroot ? sysroot : "");
	read_cpus(a, root, nr_cpus, t);
	read_nodes(a, root, nr_cpus, t);
}
