// The socket families the command may create (found by an attacker's review: AF_VSOCK passed the
// filter with the network off and with an allow-list, and vsock is not network-namespaced: on VM
// hosts the command reached the hypervisor's services past the proxy). One "<family> <result>"
// line each: the socket is only created (nothing is connected), then closed. Also a TCP and a UDP
// exchange over loopback ("tcp-loopback", "udp-loopback"), which must keep working wherever the
// Internet families are allowed.
//   families [NAME...]   only these (all without arguments)
#include "report.h"  // first: it defines _GNU_SOURCE

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct { const char *name; int family, type, protocol; } FAMILIES[] = {
  { "unix", AF_UNIX, SOCK_STREAM, 0 },
  { "inet", AF_INET, SOCK_STREAM, 0 },
  { "inet6", AF_INET6, SOCK_DGRAM, 0 },
  { "netlink", AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */ },
  { "vsock", 40 /* AF_VSOCK */, SOCK_STREAM, 0 },
  { "packet", AF_PACKET, SOCK_DGRAM, 0 },
  { "alg", 38 /* AF_ALG */, SOCK_SEQPACKET, 0 },
  { "can", 29 /* AF_CAN */, SOCK_RAW, 1 /* CAN_RAW */ },
  { "bluetooth", 31 /* AF_BLUETOOTH */, SOCK_RAW, 0 },
  { "tipc", 30 /* AF_TIPC */, SOCK_RDM, 0 },
  { "rds", 21 /* AF_RDS */, SOCK_SEQPACKET, 0 },
  { "key", 15 /* AF_KEY */, SOCK_RAW, 2 /* PF_KEY_V2 */ },
  { "xdp", 44 /* AF_XDP */, SOCK_RAW, 0 },
  { "appletalk", 5 /* AF_APPLETALK */, SOCK_DGRAM, 0 },
  { "x25", 9 /* AF_X25 */, SOCK_SEQPACKET, 0 },
  { "llc", 26 /* AF_LLC */, SOCK_DGRAM, 0 },
  { "smc", 43 /* AF_SMC */, SOCK_STREAM, 0 },
  { "kcm", 41 /* AF_KCM */, SOCK_DGRAM, 0 },
  { "qipcrtr", 42 /* AF_QIPCRTR */, SOCK_DGRAM, 0 },
  { "mctp", 45 /* AF_MCTP */, SOCK_DGRAM, 0 },
};

/** A message over loopback between two sockets of `type`: 0, or -1 with errno. */
static int loopback(int type) {
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int server = socket(AF_INET, type, 0);
  if (server < 0 || bind(server, (struct sockaddr *)&a, sizeof a) || getsockname(server, (struct sockaddr *)&a, &len)) return -1;
  if (type == SOCK_STREAM && listen(server, 1)) return -1;
  int client = socket(AF_INET, type, 0);
  if (client < 0 || connect(client, (struct sockaddr *)&a, sizeof a) || write(client, "ping", 4) != 4) return -1;
  int peer = type == SOCK_STREAM ? accept(server, NULL, NULL) : server;
  char buf[8] = { 0 };
  if (peer < 0 || read(peer, buf, sizeof buf) != 4) return -1;
  close(client), close(server);
  if (peer != server) close(peer);
  return strcmp(buf, "ping") ? (errno = EIO, -1) : 0;
}

static int wanted(int argc, char **argv, const char *name) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++) if (!strcmp(argv[i], name)) return 1;
  return 0;
}

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++) {
    if (!wanted(argc, argv, FAMILIES[i].name)) continue;
    int s = socket(FAMILIES[i].family, FAMILIES[i].type, FAMILIES[i].protocol);
    report(FAMILIES[i].name, s);
    if (s >= 0) close(s);
  }
  if (wanted(argc, argv, "tcp-loopback")) report("tcp-loopback", loopback(SOCK_STREAM));
  if (wanted(argc, argv, "udp-loopback")) report("udp-loopback", loopback(SOCK_DGRAM));
  return 0;
}
