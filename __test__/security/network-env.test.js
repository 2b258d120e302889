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

// The same password in the forms other tools take it (attacker's review): the JVM's properties
// (JAVA_TOOL_OPTIONS is appended to, so the host's value was kept), another escape of the same
// byte, a netrc line. And with the network off (the default) nothing was removed at all.
const ESCAPED = 'http://me:s3cr%2Fet@127.0.0.1:9'
const OTHER_FORMS = {
  JAVA_TOOL_OPTIONS: '-Xss4m -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyUser=me -Dhttps.proxyPassword=s3cr/et',
  GRADLE_OPTS: '-Dhttp.proxyPassword=s3cr/et',
  MAVEN_OPTS: '-Dhttps.proxyUser=me -Dhttps.proxyPassword=s3cr/et',
  GIT_CFG: 'http://me:s3cr%2fet@127.0.0.1:9',
  PIP_CONFIG: 'proxy = me:s3cr/et',
  NETRC_LINE: 'machine proxy login me password s3cr/et',
}

/// `env` as the command sees it (a Map), run with the host's HTTPS_PROXY and HTTP_PROXY set to `url`.
async function commandEnv(network, url) {
  const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, HTTP_PROXY: process.env.HTTP_PROXY }
  Object.assign(process.env, { HTTPS_PROXY: url, HTTP_PROXY: url })
  let r
  try {
    r = await spawnSandboxed(['env'], { sandbox: { mode: 'read-only', network }, env: OTHER_FORMS })
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
  assert.equal(r.exitCode, 0, r.stderr)
  const lines = r.stdout.split('\n').filter((l) => l.includes('='))
  return new Map(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
}

function leaked(vars) {
  return [...vars].filter(([, v]) => v.includes('s3cr')).map(([k]) => k)
}

test('the password in the JVM options, another escape or a netrc line is removed too', { timeout: 60000 }, async () => {
  const vars = await commandEnv({ allowedDomains: ['a.test'] }, ESCAPED)
  assert.deepEqual(leaked(vars), [])
  const java = vars.get('JAVA_TOOL_OPTIONS') ?? ''
  assert.match(java, /^-Xss4m -Dhttps\.proxyHost=127\.0\.0\.1 -Dhttp\.proxyHost=127\.0\.0\.1 -Dhttp\.proxyPort=\d+ -Dhttps\.proxyHost=127\.0\.0\.1 -Dhttps\.proxyPort=\d+ /,
    'the caller\'s other options stay, the run\'s proxy properties are appended')
  assert.equal(vars.get('MAVEN_OPTS'), '', 'only the credential options go')
})

test('with the network off the proxy password does not reach the command either', { timeout: 60000 }, async () => {
  const vars = await commandEnv(false, ESCAPED)
  assert.deepEqual(leaked(vars), [])
  assert.equal(vars.get('JAVA_TOOL_OPTIONS'), '-Xss4m -Dhttps.proxyHost=127.0.0.1')
  assert.ok(!vars.has('HTTPS_PROXY') && !vars.has('HTTP_PROXY'))
  assert.equal(vars.get('SANDSPAWN_NETWORK_DISABLED'), '1')
})

test('with the full network the command gets the user\'s proxy as it is', { timeout: 60000 }, async () => {
  const vars = await commandEnv(true, ESCAPED)
  assert.equal(vars.get('HTTPS_PROXY'), ESCAPED, 'it connects through that proxy itself')
  assert.equal(vars.get('GIT_CFG'), OTHER_FORMS.GIT_CFG)
})
