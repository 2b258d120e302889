// Kernel same-page merging (KSM) as an oracle on a host process's memory. ksmd merges identical
// pages of the mappings marked mergeable, whatever process or namespace they belong to, and a
// process sees which of its own pages were merged (smaps' "KSM:" field, or by timing a write). The
// victim is a host process whose memory is mergeable (QEMU's guests, a systemd service with
// MemoryKSM=yes, a process under prctl(PR_SET_MEMORY_MERGE)): one page of a known layout with one
// unknown byte; the command maps 256 pages, one per guess, and the one merged names the byte.
//
//   ksm probe            the calls that make memory mergeable, one "<name> <result>" line each
//   ksm victim BYTE      (the host) a mergeable page holding BYTE; "ready", then waits
//   ksm guess SECONDS    256 mergeable guesses; "secret N" when one is merged, else "secret none"
//   ksm any PROGRAM...   exec PROGRAM with PR_SET_MEMORY_MERGE on (what the host's service had)
#include "report.h"
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#define PR_GET_MEMORY_MERGE 68
#endif
#define PAGE 4096
#define SECRET_AT 100

static unsigned char *page_like_the_victims(int byte) {
  unsigned char *p = mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(2);
  memset(p, 'K', PAGE);
  p[SECRET_AT] = (unsigned char)byte;
  return p;
}

// The guess whose mapping smaps says KSM merged, or -1.
static int merged(unsigned char **guesses) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[256];
  unsigned long start = 0, s, e, kb;
  int found = -1;
  while (f && found < 0 && fgets(line, sizeof line, f)) {
    // Into temporaries: a field's name ("Anonymous:") begins with hex digits too.
    if (sscanf(line, "%lx-%lx ", &s, &e) == 2) { start = s; continue; }
    if (sscanf(line, "KSM: %lu kB", &kb) == 1 && kb > 0)
      for (int i = 0; i < 256; i++)
        if ((unsigned long)guesses[i] == start) found = i;
  }
  if (f) fclose(f);
  return found;
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "probe";
  if (!strcmp(what, "probe")) {
    unsigned char *p = page_like_the_victims(0);
    // Asked first: the calls below change it.
    int any = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0);
    printf("merge-any %s\n", any > 0 ? "on" : "off");
    report("madvise-mergeable", madvise(p, PAGE, MADV_MERGEABLE));
    report("madvise-unmergeable", madvise(p, PAGE, MADV_UNMERGEABLE));
    report("madvise-dontneed", madvise(p, PAGE, MADV_DONTNEED));
    report("prctl-set-memory-merge", prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0));
    report("prctl-set-memory-merge-off", prctl(PR_SET_MEMORY_MERGE, 0, 0, 0, 0));
    return 0;
  }
  if (!strcmp(what, "victim") && argc > 2) {
    unsigned char *p = page_like_the_victims(atoi(argv[2]));
    report("victim-mergeable", madvise(p, PAGE, MADV_MERGEABLE));
    printf("ready\n");
    fflush(stdout);
    pause();
    return 0;
  }
  if (!strcmp(what, "guess") && argc > 2) {
    unsigned char *guesses[256];
    int refused = 0;
    for (int i = 0; i < 256; i++) {
      guesses[i] = page_like_the_victims(i);
      // A process PR_SET_MEMORY_MERGE left mergeable merges them without asking.
      if (madvise(guesses[i], PAGE, MADV_MERGEABLE) != 0) refused = errno;
    }
    if (refused) printf("guess-mergeable %s\n", strerrorname_np(refused));
    // Refused, and nothing merges this process's memory without asking: nothing to wait for.
    if (refused && prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) <= 0) { printf("secret none\n"); return 0; }
    struct timespec tick = {0, 50 * 1000 * 1000};
    for (int t = 0; t < atoi(argv[2]) * 20; t++) {
      int found = merged(guesses);
      if (found >= 0) { printf("secret %d\n", found); return 0; }
      nanosleep(&tick, 0);
    }
    printf("secret none\n");
    return 0;
  }
  if (!strcmp(what, "any") && argc > 2) {
    report("any", prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0));
    execvp(argv[2], argv + 2);
    return 127;
  }
  fprintf(stderr, "usage: ksm probe | victim BYTE | guess SECONDS | any PROGRAM...\n");
  return 2;
}
