// Kernel keyrings are not namespaced: a sandbox that can call keyctl reads and writes the keys of
// the session that started it (issue 27).
//
//   keyring session NAME SECRET -- CMD...   (host) a new session keyring holding user key NAME =
//                                           SECRET; runs CMD in it; then prints "host-after VALUE"
//   keyring probe NAME                      (inside) tries to find, read, update and add keys
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

#define KEY_SPEC_SESSION_KEYRING -3
#define KEYCTL_GET_KEYRING_ID 0
#define KEYCTL_JOIN_SESSION_KEYRING 1
#define KEYCTL_UPDATE 2
#define KEYCTL_SEARCH 10
#define KEYCTL_READ 11

static long keyctl(long op, long a, long b, long c, long d) { return syscall(SYS_keyctl, op, a, b, c, d); }

static long find(const char *name) {
  return keyctl(KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, (long)"user", (long)name, 0);
}

int main(int argc, char **argv) {
  if (argc >= 6 && !strcmp(argv[1], "session") && !strcmp(argv[4], "--")) {
    if (keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) < 0) return perror("join"), 2;
    if (syscall(SYS_add_key, "user", argv[2], argv[3], strlen(argv[3]), KEY_SPEC_SESSION_KEYRING) < 0) return perror("add_key"), 2;
    pid_t child = fork();
    if (child == 0) {
      execvp(argv[5], argv + 5);
      _exit(127);
    }
    int st;
    waitpid(child, &st, 0);
    char value[256] = {0};
    long key = find(argv[2]);
    if (key < 0 || keyctl(KEYCTL_READ, key, (long)value, sizeof value - 1, 0) < 0) printf("host-after gone\n");
    else printf("host-after %s\n", value);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  if (argc == 3 && !strcmp(argv[1], "probe")) {
    report("session-id", keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0));
    long key = syscall(SYS_request_key, "user", argv[2], NULL, 0);
    report("request-key", key);
    if (key < 0) key = find(argv[2]);
    report("search", key);
    if (key >= 0) {
      char value[256] = {0};
      if (keyctl(KEYCTL_READ, key, (long)value, sizeof value - 1, 0) >= 0) printf("read %s\n", value);
      report("update", keyctl(KEYCTL_UPDATE, key, (long)"evil", 4, 0));
    }
    report("add-key", syscall(SYS_add_key, "user", "planted", "x", 1, KEY_SPEC_SESSION_KEYRING));
    return 0;
  }
  fprintf(stderr, "usage: keyring session NAME SECRET -- CMD... | keyring probe NAME\n");
  return 2;
}
