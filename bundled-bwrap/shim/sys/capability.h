/* The part of libcap's <sys/capability.h> that bubblewrap uses, so the bundled bwrap needs neither
 * libcap-dev to build nor libcap.so to run. bubblewrap includes this header for three things:
 * the kernel's capability structs and CAP_* numbers (from <linux/capability.h>), glibc's
 * capget/capset syscall wrappers (glibc exports them but declares them in no header of its own),
 * and cap_from_name, which parses the names given to --cap-add/--cap-drop (see cap_from_name.c). */
#ifndef SANDSPAWN_BWRAP_SYS_CAPABILITY_H
#define SANDSPAWN_BWRAP_SYS_CAPABILITY_H

#include <linux/capability.h>

typedef int cap_value_t;

int capget (cap_user_header_t header, cap_user_data_t data);
int capset (cap_user_header_t header, const cap_user_data_t data);

/* Like libcap's: "cap_chown" (any case, with or without the "cap_" prefix in libcap's newer
 * releases; here the prefix is required, as libcap documents) or a decimal number up to
 * CAP_LAST_CAP. Returns 0 and sets *value, or -1 with errno = EINVAL. */
int cap_from_name (const char *name, cap_value_t *value);

#endif
