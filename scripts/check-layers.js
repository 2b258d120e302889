#!/usr/bin/env node
'use strict'
// The crate's layering, checked from the source (npm test runs it): no import circles among the
// modules of the core crate (src/) and of the helper crate (helper/src/), and the ground floor
// (error.rs, platform.rs, child_fds.rs) imports nothing of the crate.
//
// A module is a file (src/a/b.rs and src/a/b/mod.rs are crate::a::b). A module depends on
// another when it names it or an item in it: `use crate::a::b::Item`, `crate::a::b::f()`,
// `super::x`, `self::c::y`, re-exports (`pub use b::Item`) included. Declaring a child (`mod b;`)
// is ownership, not use. Test code (files named tests*.rs or test_support.rs, modules under
// `#[cfg(test)]`) is left out: tests may reach anywhere.
//
// `node scripts/check-layers.js [ROOT]` prints each circle as a chain of files, and exits 1 if any
// (ROOT: the repository, by default this one; the test gives it crates of its own).

const fs = require('node:fs')
const path = require('node:path')

const root = path.resolve(process.argv[2] || path.join(__dirname, '..'))
const GROUND = ['error', 'platform', 'child_fds', 'no_symlinks']

/** Every non-test .rs file of a crate, by module path ('' for the crate root). */
function modules(srcDir) {
  const out = new Map()
  const walk = (dir, prefix) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p, [...prefix, e.name])
      else if (e.name.endsWith('.rs')) {
        const stem = e.name.slice(0, -3)
        if (/^tests?(_|$)/.test(stem) || stem === 'test_support') continue
        const mod = stem === 'mod' || (prefix.length === 0 && (stem === 'lib' || stem === 'main')) ? prefix : [...prefix, stem]
        if (prefix.length === 0 && stem === 'main') continue // the helper binary: not a module of its library
        out.set(mod.join('::'), { file: path.relative(root, p), text: fs.readFileSync(p, 'utf8') })
      }
    }
  }
  walk(srcDir, [])
  return out
}

/** The source without comments, string and char literals, and `#[cfg(test)]` items. */
function code(text) {
  // One pass, left to right: a `//` inside a string is no comment, and the `r"` ending
  // `"... looked for",` is no raw string (stripped in turn, each kind misread the others: a test
  // string with `\"` in detect.rs showed an import circle that was not there).
  // Byte and C strings too (b"..", c"..", br#".."#, cr".."): a c"/" read as code made its
  // closing quote open a string that hid the code up to the next literal.
  const literal = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|(?<!\w)[bc]?r(#*)"[\s\S]*?"\1|(?<!\w)[bc]?"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])'/g
  let s = text.replace(literal, (m) => (m.startsWith('/') ? ' ' : m.startsWith("'") ? "' '" : '""'))
  // Drop every item under #[cfg(test)] or #[cfg(all(test, ...))]: up to its matching brace, or
  // its semicolon.
  const testAttr = /#\[cfg\((?:all\()?test\b[^\]]*\]/g
  for (let found = testAttr.exec(s); found; testAttr.lastIndex = found.index, found = testAttr.exec(s)) {
    const at = found.index
    let i = at + found[0].length
    while (i < s.length && s[i] !== '{' && s[i] !== ';') i++
    if (s[i] === '{') {
      let depth = 0
      for (; i < s.length; i++) {
        if (s[i] === '{') depth++
        else if (s[i] === '}' && --depth === 0) break
      }
    }
    s = s.slice(0, at) + s.slice(i + 1)
  }
  return s
}

/** The `use` trees of this code, whitespace dropped, `as` kept as `@alias`. */
function useTrees(src, pubOnly) {
  const re = pubOnly ? /\bpub(?:\([^)]*\))?\s+use\s+([^;]+);/g : /\buse\s+([^;]+);/g
  const out = []
  let m
  while ((m = re.exec(src))) out.push(m[1].replace(/\s+as\s+/g, '@').replace(/\s+/g, ''))
  return out
}

/** Paths of this code relative to `mod` made explicit: crate, super and self stay; a path that
 * starts with a child module of `mod` (`use child::Item`, `child::f()`) becomes `self::...`. */
function anchored(paths, mod, known) {
  const child = (seg) => known.has(mod ? `${mod}::${seg}` : seg)
  return paths
    .map((p) => (/^(crate|super|self)(::|$)/.test(p) ? p : child(p.split('::')[0]) ? `self::${p}` : null))
    .filter(Boolean)
}

/** Every path this code names, `use` groups expanded (aliases dropped). */
function namedPaths(src, mod, known) {
  const paths = useTrees(src, false).flatMap(expand).map((p) => p.replace(/@\w+$/, ''))
  const inline = /(?<![\w:])(\w+(?:::\w+)+)/g
  const body = src.replace(/\buse\s+[^;]+;/g, '')
  let m
  while ((m = inline.exec(body))) paths.push(m[1])
  return anchored(paths, mod, known)
}

/** `a::{b,c::{d}}` -> ['a::b', 'a::c::d']. */
function expand(tree) {
  const open = tree.indexOf('{')
  if (open === -1) return [tree]
  const head = tree.slice(0, open)
  const inner = tree.slice(open + 1, tree.lastIndexOf('}'))
  const parts = []
  let depth = 0
  let start = 0
  for (let i = 0; i <= inner.length; i++) {
    if (i === inner.length || (inner[i] === ',' && depth === 0)) {
      if (i > start) parts.push(inner.slice(start, i))
      start = i + 1
    } else if (inner[i] === '{') depth++
    else if (inner[i] === '}') depth--
  }
  return parts.flatMap((p) => expand(p)).map((p) => (p === 'self' || p.startsWith('self@') ? head.replace(/::$/, '') + p.slice(4) : head + p))
}

/** Absolute segments of a path written in module `from`. */
function absolute(p, from) {
  const segs = p.split('::')
  let base = from.split('::').filter(Boolean)
  let i = 1
  if (segs[0] === 'crate') base = []
  else if (segs[0] === 'super') {
    for (i = 0; segs[i] === 'super'; i++) base = base.slice(0, -1)
  }
  return [...base, ...segs.slice(i)]
}

/** The module a path names: the longest known module prefix, seen through re-exports
 * (`crate::Result` is error.rs's when lib.rs re-exports it). */
function resolve(p, from, known, reexports, depth = 0) {
  const segs = absolute(p, from)
  let n = 0
  while (n < segs.length && known.has(segs.slice(0, n + 1).join('::'))) n++
  const mod = segs.slice(0, n).join('::')
  const item = segs[n]
  const via = reexports.get(mod)
  if (item !== undefined && via && via.has(item) && depth < 8) {
    return resolve([...via.get(item), ...segs.slice(n + 1)].join('::'), '', known, reexports, depth + 1)
  }
  return mod
}

/** For each module, the items it re-exports (`pub use a::B`, `pub use a::C as D`) and their
 * absolute paths. */
function reexportsOf(mods) {
  const out = new Map()
  for (const [mod, m] of mods) {
    const items = new Map()
    for (const p of anchored(useTrees(m.code, true).flatMap(expand), mod, mods)) {
      const [target, alias] = p.split('@')
      const abs = absolute(target, mod)
      items.set(alias || abs[abs.length - 1], ['crate', ...abs])
    }
    out.set(mod, items)
  }
  return out
}

/** Strongly connected components with more than one module (Tarjan). */
function circles(graph) {
  let index = 0
  const stack = []
  const info = new Map()
  const out = []
  const visit = (v) => {
    info.set(v, { index, low: index, on: true })
    index++
    stack.push(v)
    for (const w of graph.get(v) || []) {
      if (!info.has(w)) {
        visit(w)
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low)
      } else if (info.get(w).on) info.get(v).low = Math.min(info.get(v).low, info.get(w).index)
    }
    if (info.get(v).low === info.get(v).index) {
      const scc = []
      let w
      do {
        w = stack.pop()
        info.get(w).on = false
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1) out.push(scc)
    }
  }
  for (const v of graph.keys()) if (!info.has(v)) visit(v)
  return out
}

/** One cycle through `scc`, as a chain of modules, for the message. */
function chain(scc, graph) {
  const inScc = new Set(scc)
  const start = scc.slice().sort()[0]
  const prev = new Map([[start, null]])
  const queue = [start]
  while (queue.length) {
    const v = queue.shift()
    for (const w of graph.get(v) || []) {
      if (!inScc.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let u = v; u !== start; u = prev.get(u)) path.splice(1, 0, u)
        return [...path, start]
      }
      if (!prev.has(w)) {
        prev.set(w, v)
        queue.push(w)
      }
    }
  }
  return scc
}

function check(crateDir, name) {
  const mods = modules(path.join(root, crateDir))
  for (const m of mods.values()) m.code = code(m.text)
  const reexports = reexportsOf(mods)
  const graph = new Map()
  const problems = []
  for (const [mod, { file }] of mods) {
    const deps = new Set()
    for (const p of namedPaths(mods.get(mod).code, mod, mods)) {
      const target = resolve(p, mod, mods, reexports)
      if (target !== mod && mods.has(target)) deps.add(target)
    }
    graph.set(mod, deps)
    if (name === 'sandspawn' && GROUND.includes(mod) && deps.size > 0) {
      problems.push(`${file} is the ground floor but imports ${[...deps].map((d) => `crate::${d}`).join(', ')}`)
    }
  }
  for (const scc of circles(graph)) {
    if (process.env.CHECK_LAYERS_EDGES) {
      const inScc = new Set(scc)
      for (const v of scc) for (const w of graph.get(v)) if (inScc.has(w)) console.error(`  ${mods.get(v).file} -> ${mods.get(w).file}`)
    }
    const files = chain(scc, graph).map((m) => mods.get(m).file)
    problems.push(`${name}: import circle of ${scc.length} modules: ${files.join(' -> ')}`)
  }
  return problems
}

// Debugging: CHECK_LAYERS_WHY=src,planted,policy lists the paths that make planted use policy.
if (process.env.CHECK_LAYERS_WHY) {
  const [crateDir, from, to] = process.env.CHECK_LAYERS_WHY.split(',')
  const mods = modules(path.join(root, crateDir))
  for (const m of mods.values()) m.code = code(m.text)
  const rex = reexportsOf(mods)
  for (const p of namedPaths(mods.get(from).code, from, mods)) if (resolve(p, from, mods, rex) === to) console.error(`  ${p}`)
}

const problems = [...check('src', 'sandspawn'), ...(fs.existsSync(path.join(root, 'helper/src')) ? check('helper/src', 'sandspawn-helper') : [])]
if (problems.length) {
  for (const p of problems) console.error(`check-layers: ${p}`)
  process.exit(1)
}
console.log('check-layers: no import circles; the ground floor imports nothing of the crate')
