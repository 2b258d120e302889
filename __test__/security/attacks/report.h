// One "<name> <result>" line per attempt: "ok", or the errno's name. Shared by the attacks.
#pragma once
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void report(const char *name, long rc) {
  if (rc >= 0) printf("%s ok\n", name);
  else printf("%s %s\n", name, strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
  fflush(stdout);
}
