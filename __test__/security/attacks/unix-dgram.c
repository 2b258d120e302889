// Host Unix datagram sockets from inside with Unix sockets blocked (found by an attacker's review:
// the filter refused socket(AF_UNIX) but not socketpair(AF_UNIX, SOCK_DGRAM), and a datagram
// socket may sendto() or connect() any socket path: journald, /dev/log, systemd's notify socket).
//
//   unix-dgram host PATH   a host listener: prints "ready", receives until EOF on stdin, then
//       prints "host-received N" and a "got MESSAGE" line per datagram.
//   unix-dgram probe PATH  the command: "<name> <result>" lines for each way in, and a stream and
//       a seqpacket pair, which reach nobody and must keep working.
#include "report.h"  // first: it defines _GNU_SOURCE

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static struct sockaddr_un address(const char *path) {
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  return a;
}

static int host(const char *path) {
  struct sockaddr_un a = address(path);
  int s = socket(AF_UNIX, SOCK_DGRAM, 0);
  unlink(path);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a)) { perror("unix-dgram host"); return 1; }
  chmod(path, 0777);
  printf("ready\n");
  fflush(stdout);
  char got[16][128];
  int n = 0;
  struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = s, .events = POLLIN } };
  for (;;) {
    poll(fds, 2, -1);
    if (fds[1].revents & POLLIN) {
      long len = recv(s, got[n % 16], sizeof got[0] - 1, 0);
      got[n % 16][len > 0 ? len : 0] = 0;
      n++;
      continue;
    }
    char c;
    if (read(0, &c, 1) <= 0) break;
  }
  printf("host-received %d\n", n);
  for (int i = 0; i < n && i < 16; i++) printf("got %s\n", got[i]);
  unlink(path);
  return 0;
}

/** A pair of `type`: reported as `name`; when made, a datagram to the host's `path` by sendto(). */
static void pair_and_send(const char *name, int type, const char *path) {
  int sv[2];
  int rc = socketpair(AF_UNIX, type, 0, sv);
  report(name, rc);
  if (rc) return;
  struct sockaddr_un a = address(path);
  char sent[64];
  snprintf(sent, sizeof sent, "%s-sendto", name);
  printf("%s-sendto %s\n", name, sendto(sv[0], sent, strlen(sent), 0, (struct sockaddr *)&a, sizeof a) < 0 ? strerrorname_np(errno) : "sent");
  if (connect(sv[1], (struct sockaddr *)&a, sizeof a) == 0) {
    snprintf(sent, sizeof sent, "%s-connected", name);
    printf("%s-connect %s\n", name, write(sv[1], sent, strlen(sent)) < 0 ? strerrorname_np(errno) : "sent");
  }
}

/** A pair of `type` that must work: a message through it, then its end aimed at the host's path. */
static void working_pair(const char *name, int type, const char *path) {
  int sv[2];
  char buf[8] = { 0 };
  int rc = socketpair(AF_UNIX, type, 0, sv);
  if (rc == 0 && (write(sv[0], "ping", 4) != 4 || read(sv[1], buf, sizeof buf) != 4 || strcmp(buf, "ping"))) errno = EIO, rc = -1;
  report(name, rc);
  if (rc) return;
  close(sv[1]);
  struct sockaddr_un a = address(path);
  char connect_name[64];
  snprintf(connect_name, sizeof connect_name, "%s-connect", name);
  report(connect_name, connect(sv[0], (struct sockaddr *)&a, sizeof a));
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "host")) return host(argv[2]);
  if (argc != 3 || strcmp(argv[1], "probe")) {
    fprintf(stderr, "usage: unix-dgram host|probe PATH\n");
    return 2;
  }
  const char *path = argv[2];
  int s = socket(AF_UNIX, SOCK_DGRAM, 0);
  report("socket-dgram", s);
  if (s >= 0) close(s);
  pair_and_send("pair-dgram", SOCK_DGRAM, path);
  pair_and_send("pair-dgram-flags", SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, path);
  pair_and_send("pair-raw", SOCK_RAW, path);
  working_pair("pair-stream", SOCK_STREAM | SOCK_CLOEXEC, path);
  working_pair("pair-seqpacket", SOCK_SEQPACKET, path);
  return 0;
}
