/* cap_from_name for the bundled bwrap (see sys/capability.h). sandspawn itself only ever passes
 * `--cap-drop ALL`, which bubblewrap handles before calling this; the table makes the bundled
 * binary behave like a libcap-linked one for anyone who runs it by hand. Names are those of
 * <linux/capability.h>; a name the build host's kernel headers do not know is simply absent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

struct cap_name { const char *name; int value; };

#define CAP(n) { #n, n }
static const struct cap_name cap_names[] = {
  CAP (CAP_CHOWN), CAP (CAP_DAC_OVERRIDE), CAP (CAP_DAC_READ_SEARCH), CAP (CAP_FOWNER),
  CAP (CAP_FSETID), CAP (CAP_KILL), CAP (CAP_SETGID), CAP (CAP_SETUID), CAP (CAP_SETPCAP),
  CAP (CAP_LINUX_IMMUTABLE), CAP (CAP_NET_BIND_SERVICE), CAP (CAP_NET_BROADCAST),
  CAP (CAP_NET_ADMIN), CAP (CAP_NET_RAW), CAP (CAP_IPC_LOCK), CAP (CAP_IPC_OWNER),
  CAP (CAP_SYS_MODULE), CAP (CAP_SYS_RAWIO), CAP (CAP_SYS_CHROOT), CAP (CAP_SYS_PTRACE),
  CAP (CAP_SYS_PACCT), CAP (CAP_SYS_ADMIN), CAP (CAP_SYS_BOOT), CAP (CAP_SYS_NICE),
  CAP (CAP_SYS_RESOURCE), CAP (CAP_SYS_TIME), CAP (CAP_SYS_TTY_CONFIG), CAP (CAP_MKNOD),
  CAP (CAP_LEASE), CAP (CAP_AUDIT_WRITE), CAP (CAP_AUDIT_CONTROL), CAP (CAP_SETFCAP),
  CAP (CAP_MAC_OVERRIDE), CAP (CAP_MAC_ADMIN), CAP (CAP_SYSLOG), CAP (CAP_WAKE_ALARM),
  CAP (CAP_BLOCK_SUSPEND), CAP (CAP_AUDIT_READ),
#ifdef CAP_PERFMON
  CAP (CAP_PERFMON),
#endif
#ifdef CAP_BPF
  CAP (CAP_BPF),
#endif
#ifdef CAP_CHECKPOINT_RESTORE
  CAP (CAP_CHECKPOINT_RESTORE),
#endif
};

int
cap_from_name (const char *name, cap_value_t *value)
{
  size_t i;
  char *end = NULL;
  long n;

  if (name == NULL || value == NULL || *name == '\0')
    goto invalid;
  for (i = 0; i < sizeof cap_names / sizeof cap_names[0]; i++)
    if (strcasecmp (name, cap_names[i].name) == 0)
      {
        *value = cap_names[i].value;
        return 0;
      }
  errno = 0;
  n = strtol (name, &end, 10);
  if (errno == 0 && *end == '\0' && n >= 0 && n <= CAP_LAST_CAP)
    {
      *value = (cap_value_t) n;
      return 0;
    }
invalid:
  errno = EINVAL;
  return -1;
}
