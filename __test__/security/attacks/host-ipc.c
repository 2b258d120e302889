// The host's IPC objects from inside (found by an attacker's review: every bwrap plan shared the
// host's IPC namespace, and the Landlock mode has none of its own).
//
//   host-ipc host KEY MQNAME SECRET   a host process: a SysV shared memory segment (key KEY), a
//       message queue (KEY+1) and a semaphore set (KEY+2), and a POSIX message queue MQNAME, each
//       holding SECRET (the semaphore: 7). Prints "ready SHMID MSQID SEMID", waits for EOF on stdin,
//       then reports what is left ("host-*" lines: what a sandbox changed, and whether a segment
//       KEY+3 or a queue MQNAME-left it created outlived it) and removes everything.
//   host-ipc probe KEY MQNAME SHMID MSQID SEMID   the command: reach each by key, name and id
//       ("<name> <result>" lines; "stole-* SECRET" when it read one), and leave a segment and a
//       queue behind.
#include "report.h"  // first: it defines _GNU_SOURCE

#include <fcntl.h>
#include <mqueue.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

struct msg { long type; char text[64]; };

static char *left_name(const char *mq) {
  static char name[128];
  snprintf(name, sizeof name, "%s-left", mq);
  return name;
}

static int host(key_t key, const char *mq, const char *secret) {
  int shm = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
  int msq = msgget(key + 1, IPC_CREAT | IPC_EXCL | 0600);
  int sem = semget(key + 2, 1, IPC_CREAT | IPC_EXCL | 0600);
  struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 64 };
  mqd_t q = mq_open(mq, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
  if (shm < 0 || msq < 0 || sem < 0 || q == (mqd_t)-1) {
    // Say which, and leave none of the others behind on the host (they outlive this process).
    fprintf(stderr, "host-ipc host: shm %d msg %d sem %d mq %d: ", shm, msq, sem, q == (mqd_t)-1 ? -1 : 0);
    perror("");
    if (shm >= 0) shmctl(shm, IPC_RMID, NULL);
    if (msq >= 0) msgctl(msq, IPC_RMID, NULL);
    if (sem >= 0) semctl(sem, 0, IPC_RMID);
    if (q != (mqd_t)-1) mq_unlink(mq);
    return 1;
  }
  char *p = shmat(shm, NULL, 0);
  snprintf(p, 4096, "%s", secret);
  struct msg m = { .type = 1 };
  snprintf(m.text, sizeof m.text, "%s", secret);
  msgsnd(msq, &m, sizeof m.text, 0);
  semctl(sem, 0, SETVAL, 7);
  mq_send(q, secret, strlen(secret) + 1, 0);
  printf("ready %d %d %d\n", shm, msq, sem);
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {}
  printf("host-shm %s\n", p);
  struct msqid_ds ms;
  msgctl(msq, IPC_STAT, &ms);
  printf("host-msgs %lu\n", (unsigned long)ms.msg_qnum);
  printf("host-sem %d\n", semctl(sem, 0, GETVAL));
  struct mq_attr now;
  mq_getattr(q, &now);
  printf("host-mq %ld\n", now.mq_curmsgs);
  int left = shmget(key + 3, 0, 0);
  report("host-left-shm", left);
  if (left >= 0) shmctl(left, IPC_RMID, NULL);
  mqd_t lq = mq_open(left_name(mq), O_RDONLY);
  report("host-left-mq", lq == (mqd_t)-1 ? -1 : 0);
  mq_unlink(left_name(mq));
  shmdt(p);
  shmctl(shm, IPC_RMID, NULL);
  msgctl(msq, IPC_RMID, NULL);
  semctl(sem, 0, IPC_RMID);
  mq_close(q);
  mq_unlink(mq);
  return 0;
}

static void probe(key_t key, const char *mq, int shm_id, int msq_id, int sem_id) {
  report("shmget-key", shmget(key, 0, 0));
  char *p = shmat(shm_id, NULL, 0);
  report("shmat-id", p == (void *)-1 ? -1 : 0);
  if (p != (void *)-1) { printf("stole-shm %s\n", p); strcpy(p, "written-from-the-sandbox"); }
  struct shm_info info;
  long top = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
  report("shm-info", top);
  if (top >= 0) printf("shm-used-ids %d\n", info.used_ids);
  report("msgget-key", msgget(key + 1, 0));
  struct msg m;
  long n = msgrcv(msq_id, &m, sizeof m.text, 0, IPC_NOWAIT);
  report("msgrcv-id", n);
  if (n > 0) printf("stole-msg %s\n", m.text);
  report("semget-key", semget(key + 2, 0, 0));
  long v = semctl(sem_id, 0, GETVAL);
  report("semctl-id", v);
  if (v >= 0) semctl(sem_id, 0, SETVAL, 0);
  mqd_t q = mq_open(mq, O_RDWR | O_NONBLOCK);
  report("mq_open", q == (mqd_t)-1 ? -1 : 0);
  if (q != (mqd_t)-1) {
    char buf[64];
    if (mq_receive(q, buf, sizeof buf, NULL) > 0) printf("stole-mq %s\n", buf);
  }
  int left = shmget(key + 3, 1 << 20, IPC_CREAT | 0600);
  report("shm-create", left);
  struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 8 };
  mqd_t lq = mq_open(left_name(mq), O_CREAT | O_RDWR, 0600, &attr);
  report("mq-create", lq == (mqd_t)-1 ? -1 : 0);
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "host")) return host(strtol(argv[2], NULL, 0), argv[3], argv[4]);
  if (argc == 7 && !strcmp(argv[1], "probe")) {
    probe(strtol(argv[2], NULL, 0), argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
    return 0;
  }
  fprintf(stderr, "usage: host-ipc host KEY MQNAME SECRET | probe KEY MQNAME SHMID MSQID SEMID\n");
  return 2;
}
