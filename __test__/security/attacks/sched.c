// The scheduling of processes outside the run (found by an attacker's review: in the Landlock mode
// a command lowered the scheduling of any process of its user, its supervisor and the host program
// that started it included, for their whole life: nice 19 and SCHED_IDLE cannot be undone without
// CAP_SYS_NICE).
//
//   sched get PID   the host's view of PID: "nice", "policy", "ioprio" and "cpus" (how many it may
//       run on) lines, before and after a run.
//   sched attack PID...   for each PID (a process of the same user outside the run), "<call>-<i> <result>"
//       lines (i counts from 0): sched_setattr, setpriority, sched_setscheduler (SCHED_IDLE),
//       sched_setparam, sched_setaffinity (CPU 0), ioprio_set (idle class), and setpriority and
//       ioprio_set of its process group; then of every process of the user (PRIO_USER,
//       IOPRIO_WHO_USER); then the same calls on the command itself ("own-*": pid 0 or who 0, which
//       must keep working, and "own-tid": its own thread id, as glibc's pthread_* calls pass it).
#include "report.h"  // first: it defines _GNU_SOURCE

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_PGRP 2
#define IOPRIO_WHO_USER 3
#define IOPRIO_IDLE (3 << 13)

// struct sched_attr, SCHED_ATTR_SIZE_VER0 (glibc before 2.41 has no declaration of its own).
struct attr {
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
};

static void named(const char *what, int i, long rc) {
  char name[64];
  snprintf(name, sizeof name, "%s-%d", what, i);
  report(name, rc);
}

static int get(pid_t pid) {
  cpu_set_t cpus;
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, pid);
  if (errno != 0 || sched_getaffinity(pid, sizeof cpus, &cpus) < 0) { perror("get"); return 1; }
  printf("nice %d\npolicy %d\nioprio %ld\ncpus %d\n", nice, sched_getscheduler(pid), syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, pid), CPU_COUNT(&cpus));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "get") == 0) return get(atoi(argv[2]));
  if (argc < 2 || strcmp(argv[1], "attack") != 0) return 2;
  struct sched_param zero = { 0 };
  cpu_set_t cpu0;
  CPU_ZERO(&cpu0);
  CPU_SET(0, &cpu0);
  struct attr nice19 = { .size = sizeof(struct attr), .policy = SCHED_OTHER, .nice = 19 };
  for (int i = 2; i < argc; i++) {
    pid_t pid = atoi(argv[i]);
    named("setattr", i - 2, syscall(SYS_sched_setattr, pid, &nice19, 0));
    named("nice", i - 2, setpriority(PRIO_PROCESS, pid, 19));
    named("idle", i - 2, sched_setscheduler(pid, SCHED_IDLE, &zero));
    named("param", i - 2, sched_setparam(pid, &zero));
    named("affinity", i - 2, sched_setaffinity(pid, sizeof cpu0, &cpu0));
    named("ioprio", i - 2, syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, pid, IOPRIO_IDLE));
    pid_t group = getpgid(pid);
    named("nice-group", i - 2, setpriority(PRIO_PGRP, group, 19));
    named("ioprio-group", i - 2, syscall(SYS_ioprio_set, IOPRIO_WHO_PGRP, group, IOPRIO_IDLE));
  }
  report("nice-user", setpriority(PRIO_USER, getuid(), 19));
  report("ioprio-user", syscall(SYS_ioprio_set, IOPRIO_WHO_USER, getuid(), IOPRIO_IDLE));
  // The command's own: `nice`, `chrt`, `taskset`, `ionice` and the runtimes pass pid 0.
  report("own-nice", setpriority(PRIO_PROCESS, 0, 19));
  report("own-setattr", syscall(SYS_sched_setattr, 0, &nice19, 0));
  report("own-idle", sched_setscheduler(0, SCHED_IDLE, &zero));
  report("own-param", sched_setparam(0, &zero));
  report("own-affinity", sched_setaffinity(0, sizeof cpu0, &cpu0));
  report("own-ioprio", syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_IDLE));
  report("own-tid", sched_setaffinity(gettid(), sizeof cpu0, &cpu0));
  return 0;
}
