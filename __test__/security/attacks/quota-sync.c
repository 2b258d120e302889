// quota-sync PATH N: quotactl_fd(Q_SYNC) N times on a descriptor of PATH opened for reading, then
// quotactl(Q_SYNC) of every filesystem with quotas on (special NULL), and prints
// "quotactl_fd-sync <result>" and "quotactl-sync <result>" ("ok" or the errno's name).
//
// Found by an attacker's review (kern39): Q_SYNC needs no privilege and quotactl_fd asks no write
// access for it, so any descriptor on a filesystem will do. On ext4 without its quota feature (the
// default) it is dquot_quota_sync: the filesystem's sync_fs (a journal commit, or without a
// journal its dirty metadata) then sync_blockdev (every dirty buffer of the device) and a cache
// flush: the syncfs() the filter answers 0, past it.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/quota.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "report.h"

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443
#endif

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 2;
  long rc = 0;
  for (int i = atoi(argv[2]); i > 0 && rc == 0; i--) rc = syscall(SYS_quotactl_fd, fd, QCMD(Q_SYNC, USRQUOTA), 0, NULL);
  report("quotactl_fd-sync", rc);
  report("quotactl-sync", syscall(SYS_quotactl, QCMD(Q_SYNC, USRQUOTA), NULL, 0, NULL));
  return 0;
}
