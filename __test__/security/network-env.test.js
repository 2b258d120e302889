'use strict'
// The user's own proxy password never reaches the command (attacker's review): the helper set
// HTTP(S)_PROXY, ALL_PROXY and the package managers' variables to the run's proxy, but ftp_proxy,
// FTP_PROXY, SOCKS_PROXY and NPM_CONFIG_HTTPS_PROXY (npm reads its variables in any case) came in
// with http://user:s3cret@... from the host. The upstream named here is never contacted: the
// command only prints its environment.

const { test } = require('node:test')
const assert = require('node:assert/strict')

const { spawnSandboxed } = require('../..')

const URL_WITH_PASSWORD = 'http://user:s3cret@127.0.0.1:9'
const HOST_VARS = {
  HTTPS_PROXY: URL_WITH_PASSWORD,
  HTTP_PROXY: URL_WITH_PASSWORD,
  ftp_proxy: URL_WITH_PASSWORD,
  FTP_PROXY: URL_WITH_PASSWORD,
  SOCKS_PROXY: 'socks5://user:s3cret@127.0.0.1:1080',
  socks_proxy: 'socks5://user:s3cret@127.0.0.1:1080',
  NPM_CONFIG_HTTPS_PROXY: URL_WITH_PASSWORD,
  'npm_config_https-proxy': URL_WITH_PASSWORD,
}

test('no variable of the command names the upstream proxy or carries its password', { timeout: 60000 }, async () => {
  const saved = Object.fromEntries(Object.keys(HOST_VARS).map((k) => [k, process.env[k]]))
  Object.assign(process.env, HOST_VARS)
  let r
  try {
    r = await spawnSandboxed(['env'], {
      sandbox: { mode: 'read-only', network: { allowedDomains: ['a.test'] } },
      // Passed on by the caller under names no proxy rule knows.
      env: { GIT_CONFIG_KEY_0: 'http.proxy', GIT_CONFIG_VALUE_0: URL_WITH_PASSWORD, PROXY_PASSWORD: 's3cret' },
    })
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
  assert.equal(r.exitCode, 0, r.stderr)
  const lines = r.stdout.split('\n')
  const token = Buffer.from('user:s3cret').toString('base64')
  const leaked = lines.filter((l) => l.includes('s3cret') || l.includes(token))
  assert.deepEqual(leaked, [], 'variables carrying the upstream proxy password')
  const vars = new Map(lines.filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
  assert.match(vars.get('HTTP_PROXY') ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, 'the run\'s own proxy is still set')
  assert.equal(vars.get('NO_PROXY'), 'localhost,127.0.0.1,::1')
  for (const k of ['ftp_proxy', 'FTP_PROXY', 'SOCKS_PROXY', 'socks_proxy', 'NPM_CONFIG_HTTPS_PROXY', 'npm_config_https-proxy', 'GIT_CONFIG_VALUE_0', 'PROXY_PASSWORD']) {
    assert.ok(!vars.has(k), `${k} removed`)
  }
  assert.equal(vars.get('GIT_CONFIG_KEY_0'), 'http.proxy', 'other variables stay')
})
