#!/usr/bin/env node
'use strict'
/**
 * Where a run's wall time goes outside the host's own code (issue 36): `/bin/true` in read-only and
 * workspace-write, interleaved, under `perf record` of the kernel's exec/fork/exit tracepoints
 * (stamped with CLOCK_MONOTONIC, the clock of `process.hrtime`), cut into phases:
 *
 *   host before   spawnSandboxed called  -> sandspawn-helper exec'd as bwrap's launcher
 *   launcher      -> bwrap exec'd
 *   bwrap outside -> bwrap's clone of the sandbox's first process (namespaces)
 *   bwrap inside  -> that process's fork of the command (bwrap's mounts, pivot_root)
 *   fork to exec  -> sandspawn-helper exec'd inside
 *   helper        -> the command exec'd (the helper's mounts, seccomp, unmounts)
 *   command       -> the command's exit
 *   teardown      -> the outer bwrap's exit (the namespaces' teardown, their unmounts)
 *   host after    -> the result
 *
 * Off-CPU waits (a mount's, an RCU grace period's, the scheduler's) count, as they do for a caller.
 * Also the host's CPU (`process.cpuUsage`) and the children's (`/proc/self/stat` cutime+cstime,
 * summed over a mode's runs: the kernel counts it in ticks). With `--base DIR` a second build runs
 * interleaved with this one, rows per build. Needs `perf` and tracepoints readable (run as root, or
 * perf_event_paranoid and tracefs allowing it). Prints a markdown table; asserts nothing.
 *
 *   node bench/run-phases.js [--iterations N] [--base BASE_PKG_DIR] [--cwd DIR]
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : dflt
}
const MODES = ['read-only', 'workspace-write']
const WARM = 5

const PHASES = [
  ['host before', 't0', 'launcher'], ['launcher', 'launcher', 'bwrap'], ['bwrap outside', 'bwrap', 'clone'],
  ['bwrap inside', 'clone', 'fork'], ['fork to exec', 'fork', 'helper'], ['helper', 'helper', 'command'],
  ['command', 'command', 'exit'], ['teardown', 'exit', 'end'], ['host after', 'end', 't1'], ['total', 't0', 't1'],
]

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** The children's CPU so far (user + system), in ms. */
function childrenCpuMs() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 16 and 17 (cutime, cstime) are the 14th and 15th after the command's name.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100
}

/** The runs themselves, inside `perf record`: their call and result times, written to `out`. */
async function runs(out, iterations, builds, cwd) {
  const marks = []
  const childCpu = {}
  for (let i = 0; i < iterations + WARM; i++) {
    for (const [name, pkg] of builds) {
      for (const mode of MODES) {
        const [c0, u0, t0] = [childrenCpuMs(), process.cpuUsage(), process.hrtime.bigint()]
        const r = await pkg.spawnSandboxed(['/bin/true'], { cwd, sandbox: mode })
        const [t1, u1, c1] = [process.hrtime.bigint(), process.cpuUsage(u0), childrenCpuMs()]
        if (r.exitCode !== 0) throw new Error(`run failed: ${r.stderr}`)
        if (i < WARM) continue
        const key = `${name} ${mode}`
        childCpu[key] = (childCpu[key] ?? 0) + (c1 - c0)
        marks.push({ key, t0: Number(t0) / 1e6, t1: Number(t1) / 1e6, hostCpu: (u1.user + u1.system) / 1000 })
      }
    }
  }
  fs.writeFileSync(out, JSON.stringify({ marks, childCpu }))
}

/** The tracepoints of `perf script`, as { kind, tid, ms, detail }. */
function events(data) {
  const text = execFileSync('perf', ['script', '-i', data, '-F', 'tid,time,event,trace'], { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] })
  const out = []
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+([\d.]+): sched:(\w+): (.*)$/.exec(line)
    if (m) out.push({ kind: m[3], tid: Number(m[1]), ms: Number(m[2]) * 1000, detail: m[4] })
  }
  return out
}

/** One run's moments, in order of the runs: a run starts at the launcher's exec of sandspawn-helper. */
function moments(evs) {
  const found = []
  let run = null
  for (const e of evs) {
    const exec = e.kind === 'sched_process_exec' ? /^filename=(\S+)/.exec(e.detail)[1] : null
    const child = e.kind === 'sched_process_fork' ? Number(/child_pid=(\d+)/.exec(e.detail)[1]) : null
    if (exec?.endsWith('/sandspawn-helper') && (!run || run.end)) found.push((run = { pid: e.tid, launcher: e.ms }))
    else if (!run || run.end) continue
    else if (exec && e.tid === run.pid && !run.bwrap) run.bwrap = e.ms
    else if (child && e.tid === run.pid && !run.clone) Object.assign(run, { clone: e.ms, init: child })
    else if (child && e.tid === run.init && !run.fork) run.fork = e.ms
    else if (exec?.endsWith('/sandspawn-helper') && run.fork && !run.helper) Object.assign(run, { helper: e.ms, cmd: e.tid })
    else if (exec && e.tid === run.cmd && run.helper && !run.command) run.command = e.ms
    else if (e.kind === 'sched_process_exit' && e.tid === run.cmd && run.command) run.exit = run.exit ?? e.ms
    else if (e.kind === 'sched_process_exit' && e.tid === run.pid) run.end = e.ms
  }
  return found.filter((r) => r.end && r.exit)
}

function report({ marks, childCpu }, found) {
  const runsOf = found.slice(-marks.length)
  if (runsOf.length !== marks.length) throw new Error(`${runsOf.length} runs traced for ${marks.length} timed`)
  const keys = [...new Set(marks.map((m) => m.key))]
  const rows = Object.fromEntries(keys.map((k) => [k, marks.map((m, i) => ({ ...runsOf[i], ...m })).filter((r) => r.key === k)]))
  console.log(`| phase (ms, medians) | ${keys.join(' | ')} |`)
  console.log(`|---|${keys.map(() => '---:').join('|')}|`)
  for (const [name, from, to] of PHASES) {
    console.log(`| ${name} | ${keys.map((k) => median(rows[k].map((r) => r[to] - r[from])).toFixed(2)).join(' | ')} |`)
  }
  console.log(`| host CPU | ${keys.map((k) => median(rows[k].map((r) => r.hostCpu)).toFixed(2)).join(' | ')} |`)
  console.log(`| children's CPU (mean) | ${keys.map((k) => (childCpu[k] / rows[k].length).toFixed(2)).join(' | ')} |`)
  console.log(`\n${rows[keys[0]].length} runs each, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`)
}

async function main() {
  const iterations = Number(arg('--iterations', 60))
  const base = arg('--base', null)
  const builds = [['this', path.resolve(__dirname, '..')], ...(base ? [['base', path.resolve(base)]] : [])]
  if (process.argv[2] === '--runs') {
    return runs(process.argv[3], iterations, builds.map(([n, p]) => [n, require(p)]), arg('--cwd'))
  }
  const tmp = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-phases-'))
  try {
    const cwd = arg('--cwd', path.join(tmp, 'ws'))
    if (!fs.existsSync(cwd)) execFileSync('git', ['init', '-q', cwd])
    const [data, marks] = [path.join(tmp, 'perf.data'), path.join(tmp, 'marks.json')]
    const self = [__filename, '--runs', marks, '--iterations', String(iterations), '--cwd', cwd, ...(base ? ['--base', base] : [])]
    const events_ = ['sched_process_exec', 'sched_process_fork', 'sched_process_exit'].flatMap((e) => ['-e', `sched:${e}`])
    // The tool caches' store in the temporary directory too, removed with it: no store is left
    // behind for a workspace that is gone.
    const env = { ...process.env, SANDSPAWN_TOOL_CACHE_DIR: path.join(tmp, 'caches') }
    const rec = spawnSync('perf', ['record', '-N', '-q', '-k', 'CLOCK_MONOTONIC', ...events_, '-o', data, '--', process.execPath, ...self], { stdio: 'inherit', env })
    if (rec.status !== 0) throw new Error(`perf record failed (${rec.status ?? rec.signal})`)
    report(JSON.parse(fs.readFileSync(marks, 'utf8')), moments(events(data)))
  } finally {
    // overlayfs leaves mode-000 work directories in the store.
    spawnSync('chmod', ['-R', 'u+rwx', tmp])
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
