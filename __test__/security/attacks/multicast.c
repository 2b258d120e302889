// Multicast group joins and what stays allowed beside them (see kernel-surface.test.js). Each line:
// "<name> ok" or "<name> <ERRNO>". The joins are on the loopback interface (index 1), groups of the
// administratively scoped block 239.255.0.0/16 and ff15::/16; each socket is closed at once.
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *name_of(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENODEV: return "ENODEV";
    case EINVAL: return "EINVAL";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case ENOPROTOOPT: return "ENOPROTOOPT";
    default: return strerror(err);
  }
}

static void report(const char *name, int family, int level, int option, const void *value, socklen_t len) {
  int s = socket(family, SOCK_DGRAM, 0);
  if (s < 0) { printf("%s socket-%s\n", name, name_of(errno)); return; }
  int rc = setsockopt(s, level, option, value, len);
  printf("%s %s\n", name, rc == 0 ? "ok" : name_of(errno));
  close(s);
}

static struct sockaddr_storage v4(const char *dotted) {
  struct sockaddr_storage ss; memset(&ss, 0, sizeof ss);
  struct sockaddr_in *a = (struct sockaddr_in *)&ss;
  a->sin_family = AF_INET; inet_pton(AF_INET, dotted, &a->sin_addr);
  return ss;
}

static struct sockaddr_storage v6(const char *text) {
  struct sockaddr_storage ss; memset(&ss, 0, sizeof ss);
  struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
  a->sin6_family = AF_INET6; inet_pton(AF_INET6, text, &a->sin6_addr);
  return ss;
}

int main(void) {
  struct ip_mreqn mreqn = { .imr_ifindex = 1 };
  inet_pton(AF_INET, "239.255.77.1", &mreqn.imr_multiaddr);
  report("ip-add-membership", AF_INET, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreqn, sizeof mreqn);
  report("ip-add-membership-on-inet6", AF_INET6, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreqn, sizeof mreqn);

  struct ip_mreq_source src;
  memset(&src, 0, sizeof src);
  inet_pton(AF_INET, "239.255.77.2", &src.imr_multiaddr);
  inet_pton(AF_INET, "127.0.0.1", &src.imr_interface);
  inet_pton(AF_INET, "127.0.0.2", &src.imr_sourceaddr);
  report("ip-add-source-membership", AF_INET, IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP, &src, sizeof src);

  struct group_req gr = { .gr_interface = 1, .gr_group = v4("239.255.77.3") };
  report("mcast-join-group", AF_INET, IPPROTO_IP, MCAST_JOIN_GROUP, &gr, sizeof gr);
  struct group_source_req gsr = { .gsr_interface = 1, .gsr_group = v4("239.255.77.4"), .gsr_source = v4("127.0.0.2") };
  report("mcast-join-source-group", AF_INET, IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP, &gsr, sizeof gsr);

  struct ipv6_mreq m6 = { .ipv6mr_interface = 1 };
  inet_pton(AF_INET6, "ff15::77:1", &m6.ipv6mr_multiaddr);
  report("ipv6-add-membership", AF_INET6, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m6, sizeof m6);
  struct group_req gr6 = { .gr_interface = 1, .gr_group = v6("ff15::77:2") };
  report("mcast6-join-group", AF_INET6, IPPROTO_IPV6, MCAST_JOIN_GROUP, &gr6, sizeof gr6);
  struct group_source_req gsr6 = { .gsr_interface = 1, .gsr_group = v6("ff15::77:3"), .gsr_source = v6("::1") };
  report("mcast6-join-source-group", AF_INET6, IPPROTO_IPV6, MCAST_JOIN_SOURCE_GROUP, &gsr6, sizeof gsr6);

  // Not joins: sending to a group, and the options around it, stay allowed.
  int ttl = 1, one = 1;
  report("ip-multicast-ttl", AF_INET, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
  report("ip-multicast-loop", AF_INET, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof one);
  report("ipv6-multicast-hops", AF_INET6, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &ttl, sizeof ttl);
  report("so-reuseaddr", AF_INET, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  return 0;
}
