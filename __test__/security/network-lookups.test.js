'use strict'
// The proxy's name lookups (attacker's review). In a network namespace of the test's own, whose
// only name server is the fixture (never the machine's resolver): through the user's upstream
// proxy, a name that resolves elsewhere for that proxy (DNS rebinding) or whose lookup on the host
// times out never reaches the host's loopback; with onRequest, names on neither list reach no name
// server before an answer, and an allowed name that does not exist is recorded.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { namespaceSupport, runInDnsNamespace } = require('../fixtures/dns-namespace')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'network-lookups.js')

/** The fixture's JSON line, run in a namespace of the test's own; null (skipped) where none can be made. */
function namespaced(t, fixture, timeoutMs) {
  const missing = namespaceSupport(['curl'])
  if (missing) {
    t.skip(missing)
    return null
  }
  return runInDnsNamespace(t, fixture, timeoutMs)
}

test('lookups: the user\'s proxy gets checked addresses, failed lookups are refused, unknown names are asked first', { timeout: 240000 }, (t) => {
  const r = namespaced(t, FIXTURE, 200000)
  if (!r) return
  const text = JSON.stringify(r, null, 1)

  // Rebinding: the user's proxy is asked for the address the host checked, which it cannot reach here.
  assert.match(r.upstream.stdout, /^ \[rebind\.corp\.test\]$/m, `the rebinding name reached nothing\n${text}`)
  assert.ok(r.upstreamSaw.some((l) => /^CONNECT 198\.51\.100\.7:\d+ /.test(l)), text)
  // A lookup that times out on the host is refused, and never handed to the user's proxy.
  assert.match(r.upstream.stdout, /^ \[slow\.corp\.test\]$/m, text)
  assert.ok(r.upstream.denials.includes('slow.corp.test connect lookup_failed'), text)
  assert.ok(!r.upstreamSaw.some((l) => l.includes('rebind.corp.test') || l.includes('slow.corp.test')), `no name the host looked up went upstream\n${text}`)
  // A name the host's resolver says does not exist is the user's proxy's to resolve (the remaining trust).
  assert.match(r.upstream.stdout, /^SECRET \[far\.corp\.test\]$/m, text)
  assert.ok(r.upstreamSaw.some((l) => /^CONNECT far\.corp\.test:\d+ /.test(l)), text)

  // onRequest answering deny: asked about both names, neither was looked up.
  assert.equal(r.exfilAsked.length, 2, text)
  assert.deepEqual(r.exfilQueries.filter((q) => q.includes('exfil')), [], `DNS queries of denied names\n${text}`)
  assert.deepEqual(r.exfil.denials.map((d) => d.split(' ').pop()), ['declined', 'declined'], text)
  // onRequest answering allow to a name that does not exist: looked up then, and recorded.
  assert.deepEqual(r.allowedNxQueries, ['nx.exfil.test'], text)
  assert.deepEqual(r.allowedNx.denials, ['nx.exfil.test connect lookup_failed'], text)
  assert.deepEqual(r.allowedNx.decisions, ['nx.exfil.test allow'], text)
})

// The address guard and the host's own networks (found by an attacker's review, net44): the guard
// refused the host's own addresses and the private ranges, but not the rest of the networks the
// host's interfaces are on. On an IPv6 LAN every device has a global address in the host's /64 (the
// router's admin page, a NAS, printers), which RFC 1918 and ULA never cover, so a run allowed such
// an address (an allow-list entry, an onRequest answer, or a name whose DNS the command controls)
// reached the LAN from the sandbox.
const ON_LINK = path.join(__dirname, '..', 'fixtures', 'on-link-neighbour.js')

/** The fixture's neighbour at 2001:db8:1::2 and the host's 2001:db8:1::1, both refused and neither reached. */
function neighbourRefused(t, fixture, lan) {
  const r = namespaced(t, fixture, 150000)
  if (!r) return
  const text = JSON.stringify(r, null, 1)
  assert.deepEqual(r.own.denials, ['[2001:db8:1::1] http private_address'], `the host's own address was refused already\n${text}`)
  assert.equal(r.reachedNeighbour, 0, `the neighbour on ${lan} was reached\n${text}`)
  assert.deepEqual(r.neighbour.denials, ['[2001:db8:1::2] http private_address'], text)
  assert.equal(r.reachedInAll, 0, text)
}

test("an address on the host's own network (an IPv6 LAN neighbour) is refused as private", { timeout: 180000 }, (t) => {
  neighbourRefused(t, ON_LINK, "the host's /64")
})

// The host's LAN known by a route, not a netmask (found by an attacker's review, rev45): a host
// given its address by DHCPv6 holds it as a /128 (NetworkManager, systemd-networkd), and the /64
// its neighbours are on is on-link by the route the router's advertised prefix makes. The guard
// took the network from the interface's netmask only, so on such a host the neighbour at
// 2001:db8:1::2 was reached as a public address.
const ON_LINK_ROUTE = path.join(__dirname, '..', 'fixtures', 'on-link-route-neighbour.js')

test("an address on a network the host reaches on-link by a route (a DHCPv6 host's LAN) is refused as private", { timeout: 180000 }, (t) => {
  neighbourRefused(t, ON_LINK_ROUTE, "the host's on-link /64")
})
