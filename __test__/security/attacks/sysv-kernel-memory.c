// The kernel memory a command takes through System V semaphores and message queues in the
// sandbox's IPC namespace (found by an attacker's review, kern41): no rlimit counts either, and a
// new IPC namespace's defaults allow 32,000 sets of 32,000 semaphores (64 bytes each, struct sem:
// 61 GiB) and 32,000 queues of 16,384 messages (an empty message is 64 bytes of slab: 31 GiB).
//
// Usage: sysv-kernel-memory MIB [hold]. Makes semaphore sets (of the largest size the namespace
// allows, up to 32,000) until they hold MIB, then queues of empty messages until those hold MIB
// more, counting 64 bytes a semaphore and a message; stops early where the kernel refuses. Prints
// "sems N", "sem-stop WHY", "messages N", "msg-stop WHY" (WHY: "target" or the errno); with
// "hold", then waits for a signal holding it all.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <unistd.h>

static const char *why(int e) {
  switch (e) {
  case ENOSPC: return "ENOSPC";
  case ENOMEM: return "ENOMEM";
  case EINVAL: return "EINVAL";
  case EPERM: return "EPERM";
  case ENOSYS: return "ENOSYS";
  default: return strerror(e);
  }
}

int main(int argc, char **argv) {
  long target = (argc > 1 ? atol(argv[1]) : 16) << 20;
  long sems = 0, set = 32000;
  const char *stop = "target";
  while (sems * 64 < target) {
    if (semget(IPC_PRIVATE, (int)set, 0600) >= 0) { sems += set; continue; }
    if (errno == EINVAL && set > 1) { set = set > 250 ? 250 : 1; continue; } // a smaller SEMMSL
    if (errno == ENOSPC && set > 1) { set = 1; continue; }                   // SEMMNS left over
    stop = why(errno);
    break;
  }
  printf("sems %ld\nsem-stop %s\n", sems, stop);
  struct { long mtype; char text[1]; } m = { 1, { 0 } };
  long messages = 0;
  stop = "target";
  while (messages * 64 < target) {
    int q = msgget(IPC_PRIVATE, 0600);
    if (q < 0) { stop = why(errno); break; }
    while (messages * 64 < target && msgsnd(q, &m, 0, IPC_NOWAIT) == 0) messages++;
    if (errno != EAGAIN && messages * 64 < target) { stop = why(errno); break; }
  }
  printf("messages %ld\nmsg-stop %s\n", messages, stop);
  fflush(stdout);
  if (argc > 2) pause();
  return 0;
}
