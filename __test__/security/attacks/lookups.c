// Looks up COUNT names that do not exist in DIR (fstatat of DIR/absent-<i>): each failed lookup
// leaves a negative dentry in the kernel's dentry cache, under DIR's dentry, which outlives the
// process and the sandbox. A directory the command can only read will do: a lookup asks search
// permission alone, and a read-only mount refuses nothing here.
//   lookups DIR COUNT   prints "looked up COUNT"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
  if (dir < 0) { perror(argv[1]); return 1; }
  long count = strtol(argv[2], NULL, 10);
  char name[32];
  struct stat st;
  for (long i = 0; i < count; i++) {
    snprintf(name, sizeof name, "absent-%ld", i);
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) { printf("%s: not absent\n", name); return 1; }
  }
  printf("looked up %ld\n", count);
  return 0;
}
