// A file's inode attributes through a descriptor opened for reading only (found by an attacker's
// review: in the Landlock mode, which governs no ioctl on regular files, a command set the sync,
// nodump and noatime flags of host files its user owns outside every grant; as root, of every
// root-owned file).
//
//   inode-flags get FILE   "flags 0x<FS_IOC_GETFLAGS>" and "version <FS_IOC_GETVERSION>" lines (the
//       host's view, before and after a run).
//   inode-flags set FILE   each ioctl that changes them, "<name> <result>": setflags (nodump),
//       setflags32 (its 32-bit request), fssetxattr (noatime), setversion (the generation, and ext4's
//       own request), and with arguments that change nothing where the feature is on (a zeroed
//       policy, a version-0 verity request): enable-verity, set-encryption-policy.
#include "report.h"  // first: it defines _GNU_SOURCE

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <sys/ioctl.h>

#define EXT4_IOC_SETVERSION _IOW('f', 4, long)

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int fd = open(argv[2], O_RDONLY);
  if (fd < 0) { perror(argv[2]); return 1; }
  int flags = 0;
  long version = 0;
  if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 || ioctl(fd, FS_IOC_GETVERSION, &version) < 0) { perror("get"); return 1; }
  if (strcmp(argv[1], "get") == 0) {
    printf("flags %#x\nversion %ld\n", flags, version);
    return 0;
  }
  int nodump = flags | FS_NODUMP_FL;
  report("setflags", ioctl(fd, FS_IOC_SETFLAGS, &nodump));
  report("setflags32", ioctl(fd, FS_IOC32_SETFLAGS, &nodump));
  struct fsxattr x = { 0 };
  ioctl(fd, FS_IOC_FSGETXATTR, &x);
  x.fsx_xflags |= FS_XFLAG_NOATIME;
  report("fssetxattr", ioctl(fd, FS_IOC_FSSETXATTR, &x));
  long other = version + 1;
  report("setversion", ioctl(fd, FS_IOC_SETVERSION, &other));
  report("setversion-ext4", ioctl(fd, EXT4_IOC_SETVERSION, &other));
  struct fsverity_enable_arg verity = { 0 };
  report("enable-verity", ioctl(fd, FS_IOC_ENABLE_VERITY, &verity));
  struct fscrypt_policy_v1 policy = { 0 };
  report("set-encryption-policy", ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &policy));
  return 0;
}
