// The protocols of the allowed socket families the command may ask for (found by an attacker's
// review, kern27: any protocol passed the filter, and on a host that autoloads modules a protocol
// not yet registered makes the kernel load its module, with no capability check, for good:
// `net-pf-2-proto-132` (SCTP), `net-pf-2-proto-33-type-6` (DCCP, CVE-2017-6074),
// `net-pf-16-proto-21` (netlink crypto)...). One "<name> <result>" line each: the socket is only
// created (nothing is connected), then closed. The protocol goes through syscall(2) as a full
// register, so the "-high" lines set its high half, which the kernel ignores (an `int`).
//   protocols [NAME...]   only these (all without arguments)
#include "report.h"  // first: it defines _GNU_SOURCE

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HIGH (1L << 32)

static const struct { const char *name; long family, type, protocol; } PROTOCOLS[] = {
  // Refused: modules on distribution kernels, or built in here but no build or test asks for them.
  { "sctp", AF_INET, SOCK_STREAM, 132 },
  { "sctp6", AF_INET6, SOCK_SEQPACKET, 132 },
  { "sctp-high", AF_INET, SOCK_STREAM, HIGH | 132 },
  { "dccp", AF_INET, 6 /* SOCK_DCCP */, 33 },
  { "l2tp", AF_INET, SOCK_DGRAM, 115 },
  { "smc-inet", AF_INET, SOCK_STREAM, 256 /* IPPROTO_SMC */ },
  { "udplite", AF_INET, SOCK_DGRAM, 136 },
  { "udplite6", AF_INET6, SOCK_DGRAM, 136 },
  { "netlink-sock-diag", AF_NETLINK, SOCK_RAW, 4 },
  { "netlink-xfrm", AF_NETLINK, SOCK_RAW, 6 },
  { "netlink-audit", AF_NETLINK, SOCK_RAW, 9 },
  { "netlink-netfilter", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 12 },
  { "netlink-generic", AF_NETLINK, SOCK_DGRAM, 16 },
  { "netlink-rdma", AF_NETLINK, SOCK_RAW, 20 },
  { "netlink-crypto", AF_NETLINK, SOCK_RAW, 21 },
  { "netlink-audit-high", AF_NETLINK, SOCK_RAW, HIGH | 9 },
  // Types no Internet socket of an allowed protocol has (kern28): SOCK_PACKET under AF_INET is a
  // packet socket (the kernel remaps the family to PF_PACKET, loading af_packet where it is a
  // module), and SOCK_DCCP with protocol 0 asks for `net-pf-2-proto-0-type-6`, dccp's alias.
  { "packet-compat", AF_INET, 10 /* SOCK_PACKET */, 0 },
  { "packet-compat-flags", AF_INET, 10 | SOCK_CLOEXEC, 0 },
  { "dccp-0", AF_INET, 6 /* SOCK_DCCP */, 0 },
  { "dccp6-0", AF_INET6, 6, 0 },
  { "seqpacket-0", AF_INET, SOCK_SEQPACKET, 0 },
  // Allowed: what ordinary programs ask for.
  { "tcp-0", AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0 },
  { "tcp", AF_INET, SOCK_STREAM, IPPROTO_TCP },
  { "tcp6", AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP },
  { "tcp-high", AF_INET, SOCK_STREAM, HIGH | IPPROTO_TCP },
  { "udp", AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP },
  { "udp6", AF_INET6, SOCK_DGRAM, 0 },
  { "mptcp", AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */ },
  { "ping", AF_INET, SOCK_DGRAM, IPPROTO_ICMP },
  { "ping6", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6 },
  { "netlink-route", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 },
  { "netlink-route-dgram", AF_NETLINK, SOCK_DGRAM, 0 },
  { "netlink-uevent", AF_NETLINK, SOCK_DGRAM, 15 },
};

static int wanted(int argc, char **argv, const char *name) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++) if (!strcmp(argv[i], name)) return 1;
  return 0;
}

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof PROTOCOLS / sizeof *PROTOCOLS; i++) {
    if (!wanted(argc, argv, PROTOCOLS[i].name)) continue;
    long s = syscall(SYS_socket, PROTOCOLS[i].family, PROTOCOLS[i].type, PROTOCOLS[i].protocol);
    report(PROTOCOLS[i].name, s);
    if (s >= 0) close((int)s);
  }
  return 0;
}
