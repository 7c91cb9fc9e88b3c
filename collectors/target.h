/* The workload: a command started stopped right after exec (so events and address
 * resolution happen before it runs a single instruction of its own), or a running pid. */
#ifndef HM_TARGET_H
#define HM_TARGET_H

#include <stddef.h>
#include <sys/types.h>

#include "core/err.h"

/* Forks and execs argv[0] (PATH search) under ptrace; returns with the child stopped
 * after exec. */
int hm_target_spawn(char *const argv[], pid_t *pid, struct hm_err *err);
/* Lets a spawned child run (detaches ptrace). */
int hm_target_resume(pid_t pid, struct hm_err *err);
/* Thread ids of a running process, from /proc/PID/task; returns how many (<= cap). */
size_t hm_target_threads(pid_t pid, pid_t *tids, size_t cap);
/* The executable's path and the lowest address it is mapped at (the load base of a PIE). */
int hm_target_exe(pid_t pid, char *path, size_t len, unsigned long long *base);
/* A running process (-p) to watch: a pidfd (readable once the whole process has
 * exited, and immune to pid reuse), or -1 where the kernel has none (before 5.3). */
int hm_target_watch(pid_t pid);
/* 1 when the process is gone: by its pidfd, else by kill(pid, 0). */
int hm_target_gone(pid_t pid, int pidfd);

#endif
