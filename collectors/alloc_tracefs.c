/* The malloc family's probes as tracefs uprobe events (what `perf probe -x` makes), so
 * that they can be inherited by the threads a workload creates after recording starts.
 * An inherited event of the uprobe PMU re-reads its path pointer in the cloning thread
 * and registers a uprobe of its own per thread (alloc.h); an inherited tracepoint does
 * neither: every thread's event shares the one uprobe the tracefs event holds. */
#include "collectors/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static const char *const tracefs_dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

static const char *writable(void)
{
	char f[128];

	for (size_t i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++) {
		snprintf(f, sizeof(f), "%s/uprobe_events", tracefs_dirs[i]);
		if (access(f, W_OK) == 0)
			return tracefs_dirs[i];
	}
	return NULL;
}

/* Where tracefs is, mounting it at /sys/kernel/tracing when it is not (as root), as perf
 * probe does: a fresh Debian boot has it unmounted, and without it the threads a workload
 * starts later are not probed. */
static const char *tracefs(void)
{
	const char *dir = writable();

	if (!dir && geteuid() == 0 &&
	    mount("nodev", tracefs_dirs[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
		dir = writable();
	return dir;
}

/* One line to uprobe_events (appended: other tools' probes stay); 0 when taken. */
static int define(const char *dir, const char *line)
{
	char f[128];
	int fd, rc;
	size_t n = strlen(line);

	snprintf(f, sizeof(f), "%s/uprobe_events", dir);
	if ((fd = open(f, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		return -1;
	rc = write(fd, line, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return rc;
}

static uint64_t event_id(const char *dir, const char *group, const char *event)
{
	char f[512];
	unsigned long long id = 0;
	FILE *fp;

	snprintf(f, sizeof(f), "%s/events/%s/%s/id", dir, group, event);
	if (!(fp = fopen(f, "r")))
		return 0;
	if (fscanf(fp, "%llu", &id) != 1)
		id = 0;
	fclose(fp);
	return id;
}

/* Groups hitmap_PID of recorders that are gone (killed before they removed theirs). */
static void remove_stale(const char *dir)
{
	char f[400], line[400];
	DIR *d;
	struct dirent *e;

	snprintf(f, sizeof(f), "%s/events", dir);
	if (!(d = opendir(f)))
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;
		DIR *g;
		struct dirent *ev;

		if (strncmp(e->d_name, "hitmap_", 7))
			continue;
		pid = strtol(e->d_name + 7, &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(f, sizeof(f), "%s/events/%s", dir, e->d_name);
		if (!(g = opendir(f)))
			continue;
		while ((ev = readdir(g)))
			if (ev->d_name[0] != '.' && strcmp(ev->d_name, "enable") &&
			    strcmp(ev->d_name, "filter")) {
				snprintf(line, sizeof(line), "-:%.64s/%.64s\n", e->d_name, ev->d_name);
				define(dir, line);
			}
		closedir(g);
	}
	closedir(d);
}

void hm_alloc_tracefs_remove(struct hm_alloc_probes *p)
{
	const char *dir = tracefs();
	char line[128];

	for (int i = 0; dir && p->tp_group[0] && i < p->n; i++)
		if (p->tp_id[i]) {
			snprintf(line, sizeof(line), "-:%s/%s\n", p->tp_group, p->names[i] + 7);
			define(dir, line);
			p->tp_id[i] = 0;
		}
	p->tp_group[0] = '\0';
}

int hm_alloc_tracefs_create(struct hm_alloc_probes *p)
{
	const char *dir = getenv("HITMAP_ALLOC_NO_TRACEFS") ? NULL : tracefs();
	char line[4400];

	memset(p->tp_id, 0, sizeof(p->tp_id));
	if (!dir)
		return -1;
	remove_stale(dir);
	snprintf(p->tp_group, sizeof(p->tp_group), "hitmap_%d", (int)getpid());
	for (int i = 0; i < p->n; i++) {
		const char *path = (const char *)(uintptr_t)p->attrs[i].config1;

		/* uprobe_events splits at blanks */
		if (strpbrk(path, " \t\n") ||
		    snprintf(line, sizeof(line), "%c:%s/%s %s:0x%llx\n",
			     p->attrs[i].config ? 'r' : 'p', p->tp_group, p->names[i] + 7, path,
			     (unsigned long long)p->attrs[i].config2) >= (int)sizeof(line) ||
		    define(dir, line) ||
		    !(p->tp_id[i] = event_id(dir, p->tp_group, p->names[i] + 7))) {
			hm_alloc_tracefs_remove(p);
			return -1;
		}
	}
	return 0;
}

void hm_alloc_tracefs_attr(struct perf_event_attr *a, uint64_t id)
{
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = id;
	a->config1 = a->config2 = 0;
	a->inherit = 1;
}
