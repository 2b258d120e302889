#!/usr/bin/env bash
# Generates corpus.json: real command outputs recorded under real bubblewrap (and unsandboxed), each
# labelled with the denial the classifier must report (or null). Rerunnable: every case gets a fresh
# workspace under a temp dir; the temp dir is rewritten to /SCRATCH and the workspace to /WORKSPACE so
# the corpus is stable across runs and machines.
#
# Needs: bwrap (>= 0.8 for --disable-userns), jq, python3, node, curl, wget, git; x86_64 for the
# seccomp cases (skipped elsewhere). Usage: __test__/denial-corpus/generate.sh [output.json]
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-"$HERE/corpus.json"}
BWRAP=${BWRAP:-/usr/bin/bwrap}
for tool in "$BWRAP" jq python3 node curl wget git; do
  command -v "$tool" >/dev/null || { echo "generate.sh: $tool is required" >&2; exit 1; }
done

T=$(mktemp -d /tmp/sandspawn-denial.XXXXXX)
cleanup() { chmod -R u+rwx "$T" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
WS=$T/ws
CASES=$T/cases.jsonl
: >"$CASES"

# Resolve python3 through pyenv-like shims once, so the sandbox runs the real interpreter.
PYBIN=$(python3 -c 'import sys, os; print(os.path.dirname(os.path.realpath(sys.executable)))')
export PATH="$PYBIN:$PATH"
export HOME=$T/home
export LC_ALL=C.UTF-8 LANG=C.UTF-8
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY || true

# Seccomp filters (classic BPF, x86_64): EPERM for socket(AF_UNIX, ...); SIGSYS kill for mkdir/mkdirat.
HAVE_SECCOMP=0
if [ "$(uname -m)" = x86_64 ]; then
  python3 - "$T" <<'PY'
import struct, sys
def write(ins, path):
    open(path, 'wb').write(b''.join(struct.pack('<HBBI', *i) for i in ins))
ARCH = 0xc000003e  # AUDIT_ARCH_X86_64
LD, JEQ, RET = 0x20, 0x15, 0x06
ALLOW, KILL, EPERM = 0x7fff0000, 0x80000000, 0x00050001
t = sys.argv[1]
write([(LD,0,0,4), (JEQ,0,5,ARCH), (LD,0,0,0), (JEQ,0,3,41), (LD,0,0,16), (JEQ,0,1,1), (RET,0,0,EPERM), (RET,0,0,ALLOW)],
      t + '/unix-eperm.bpf')
write([(LD,0,0,4), (JEQ,0,4,ARCH), (LD,0,0,0), (JEQ,1,0,83), (JEQ,0,1,258), (RET,0,0,KILL), (RET,0,0,ALLOW)],
      t + '/mkdir-kill.bpf')
PY
  HAVE_SECCOMP=1
fi

fresh_ws() {
  chmod -R u+rwx "$WS" 2>/dev/null || true
  rm -rf "$WS" "$T/outside" "$T/home"
  mkdir -p "$WS" "$T/outside" "$T/home/.ssh"
  echo 'ssh-secret' >"$T/home/.ssh/id_rsa"
  (
    cd "$WS"
    git init -q .
    echo 'sandbox notes: nothing here' >sandbox.txt
    echo 'other notes' >other.txt
    mkdir -p sandbox secret landlock-rules
    echo 'fixture' >sandbox/test.txt
    printf 'def main():\n    raise ValueError("bad input")\nmain()\n' >sandbox/run.py
    printf 'throw new Error("boom");\n' >sandbox/fail.js
    echo 'top secret' >secret/key
    printf '#!/bin/sh\necho hi\n' >noexec.sh && chmod 644 noexec.sh
    echo 'locked' >locked.txt && chmod 000 locked.txt
    echo 'private' >private.txt && chown 65534:65534 private.txt && chmod 600 private.txt
    echo 'mine' >file.txt
  )
}

BASE=(--new-session --die-with-parent --unshare-user --disable-userns --cap-drop ALL --unshare-pid)
ROOTFS=(--ro-bind / / --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys)

# case ID VARIANT EXPECTED DESCRIPTION -- COMMAND...
# EXPECTED: null or "reason kind path" (path may be "-" for none).
case_() {
  local id=$1 variant=$2 expected=$3 desc=$4
  shift 5
  fresh_ws
  local sandbox_type=bwrap policy bw=() fdfile=/dev/null net=(--unshare-net)
  local writable=(--bind "$WS" "$WS")
  case $variant in
    ro)        policy='{"mode":"read-only","network":false,"tmp":"read-only"}'; writable=() ;;
    ro-net)    policy='{"mode":"read-only","network":true,"tmp":"read-only"}'; writable=(); net=() ;;
    ws)        policy='{"mode":"workspace-write","writableRoots":["/WORKSPACE"],"protectGit":false,"network":false,"tmp":"read-only"}' ;;
    ws-git)    policy='{"mode":"workspace-write","writableRoots":["/WORKSPACE"],"protectGit":true,"network":false,"tmp":"read-only"}'
               writable+=(--ro-bind "$WS/.git" "$WS/.git") ;;
    ws-deny)   policy='{"mode":"workspace-write","writableRoots":["/WORKSPACE"],"protectGit":false,"denyRead":["/WORKSPACE/secret","/SCRATCH/home/.ssh"],"network":false,"tmp":"read-only"}'
               writable+=(--tmpfs "$WS/secret" --tmpfs "$T/home/.ssh") ;;
    ws-net)    policy='{"mode":"workspace-write","writableRoots":["/WORKSPACE"],"protectGit":false,"network":true,"tmp":"read-only"}'; net=() ;;
    ws-unix)   policy='{"mode":"workspace-write","writableRoots":["/WORKSPACE"],"protectGit":false,"network":false,"allowUnixSockets":false,"tmp":"read-only"}'
               fdfile=$T/unix-eperm.bpf; bw=(--seccomp 9) ;;
    ws-kill)   policy='{"mode":"workspace-write","writableRoots":["/WORKSPACE"],"protectGit":false,"network":false,"tmp":"read-only"}'
               fdfile=$T/mkdir-kill.bpf; bw=(--seccomp 9) ;;
    none)      policy='{"mode":"danger-full-access","network":true}'; sandbox_type=none ;;
    *) echo "unknown variant $variant" >&2; exit 1 ;;
  esac
  if [ -n "${bw[*]}" ] && [ "$HAVE_SECCOMP" != 1 ]; then
    echo "skip $id (seccomp cases need x86_64)" >&2
    return
  fi
  local rc=0
  if [ "$sandbox_type" = none ]; then
    (cd "$WS" && timeout 20 "$@") >"$T/out" 2>"$T/err" </dev/null || rc=$?
  else
    timeout 20 "$BWRAP" "${BASE[@]}" "${net[@]}" "${ROOTFS[@]}" "${writable[@]}" "${bw[@]}" --chdir "$WS" -- "$@" \
      >"$T/out" 2>"$T/err" </dev/null 9<"$fdfile" || rc=$?
  fi
  local exp=null
  if [ "$expected" != null ]; then
    read -r reason kind path <<<"$expected"
    exp=$(jq -nc --arg r "$reason" --arg k "$kind" --arg p "$path" '{reason:$r, kind:$k, path:(if $p == "-" then null else $p end)}')
  fi
  jq -nc --arg id "$id" --arg desc "$desc" --arg st "$sandbox_type" --argjson policy "$policy" \
    --arg cwd "$WS" --argjson rc "$rc" --rawfile out "$T/out" --rawfile err "$T/err" --argjson exp "$exp" \
    --arg ws "$WS" --arg t "$T" \
    '$ARGS.positional as $cmd
     | def norm: split($ws) | join("/WORKSPACE") | split($t) | join("/SCRATCH");
     {id:$id, description:$desc, sandboxType:$st, policy:$policy, cwd:($cwd|norm), command:[$cmd[]|norm],
      exitCode:$rc, signal:null, stdout:($out|norm), stderr:($err|norm), expected:$exp}' \
    --args -- "$@" >>"$CASES"
  echo "case $id: exit $rc" >&2
}

PY_CONNECT_IP="import socket; socket.create_connection(('1.1.1.1', 80), timeout=5)"
PY_CONNECT_LO="import socket; socket.create_connection(('127.0.0.1', 9), timeout=5)"
PY_DNS="import urllib.request; urllib.request.urlopen('http://example.com', timeout=5)"
NODE_FETCH="fetch('http://example.com').catch(e => { console.error(e); process.exit(1) })"
NODE_CONNECT="require('net').connect(80, '1.1.1.1').on('error', e => { console.error(e.message); process.exit(1) })"
NODE_UNIX="require('net').connect('/tmp/sandspawn-x.sock').on('error', e => { console.error(e.message); process.exit(1) })"

# ---------------------------------------------------------------- true denials: writes
case_ ro-touch-etc ro "read_only_file_system filesystem /etc/sandspawn-x" "read-only: touch outside" -- touch /etc/sandspawn-x
case_ ro-redirect-cwd ro "read_only_file_system filesystem /WORKSPACE/out.txt" "read-only: bash redirect into the cwd" -- bash -c 'echo hi > out.txt'
case_ ro-mkdir-cwd ro "read_only_file_system filesystem /WORKSPACE/build" "read-only: mkdir in the cwd" -- mkdir build
case_ ro-python-write ro "read_only_file_system filesystem /WORKSPACE/x.txt" "read-only: python open for writing" -- python3 -c "open('x.txt', 'w')"
case_ ro-node-write ro "read_only_file_system filesystem /WORKSPACE/n.txt" "read-only: node writeFileSync" -- node -e "require('fs').writeFileSync('n.txt', 'x')"
case_ ro-cp-usr ro "read_only_file_system filesystem /usr/local/copy.txt" "read-only: cp to /usr/local" -- cp sandbox.txt /usr/local/copy.txt
case_ ro-home-dotfile ro "read_only_file_system filesystem /SCRATCH/home/.bashrc-test" "read-only: write a dotfile in HOME" -- bash -c 'echo x > ~/.bashrc-test'
case_ ro-dash-tmp ro "read_only_file_system filesystem /tmp/sandspawn-dash-x" "read-only: dash redirect into /tmp" -- sh -c 'echo x > /tmp/sandspawn-dash-x'
case_ ro-git-add ro "read_only_file_system filesystem /WORKSPACE/.git/index.lock" "read-only: git add" -- git add sandbox.txt
case_ ro-rm ro "read_only_file_system filesystem /WORKSPACE/other.txt" "read-only: rm a file of the cwd" -- rm other.txt
case_ ro-capdrop-read ro "permission_denied filesystem /WORKSPACE/private.txt" "cap-drop: root loses DAC override, a 0600 file of another user is unreadable (readable unsandboxed)" -- cat private.txt
case_ ws-touch-outside ws "read_only_file_system filesystem /SCRATCH/outside/f" "workspace-write: touch outside the workspace" -- touch "$T/outside/f"
case_ ws-python-outside ws "read_only_file_system filesystem /SCRATCH/outside/p.txt" "workspace-write: python write outside" -- python3 -c "open('$T/outside/p.txt', 'w').write('x')"
case_ ws-node-mkdir-outside ws "read_only_file_system filesystem /SCRATCH/outside/d" "workspace-write: node mkdirSync outside" -- node -e "require('fs').mkdirSync('$T/outside/d')"
case_ ws-chmod-foreign ws "operation_not_permitted filesystem /WORKSPACE/private.txt" "cap-drop: chmod of a file owned by another user inside the workspace (works unsandboxed as root)" -- chmod 644 private.txt
case_ ws-git-hook ws-git "read_only_file_system filesystem /WORKSPACE/.git/hooks/pre-commit" "protectGit: write a git hook" -- bash -c 'echo x > .git/hooks/pre-commit'
case_ ws-git-add ws-git "read_only_file_system filesystem /WORKSPACE/.git/index.lock" "protectGit: git add" -- git add sandbox.txt
case_ ws-git-config ws-git "read_only_file_system filesystem /WORKSPACE/.git/config" "protectGit: git config" -- git config user.name x
case_ ws-git-touch ws-git "read_only_file_system filesystem /WORKSPACE/.git/x" "protectGit: touch in .git" -- touch .git/x

# ---------------------------------------------------------------- true denials: denyRead
case_ ws-deny-cat ws-deny "policy_denied filesystem /WORKSPACE/secret/key" "denyRead: cat a masked file" -- cat secret/key
case_ ws-deny-ls ws-deny "policy_denied filesystem /WORKSPACE/secret/key" "denyRead: ls a masked file (exit 2)" -- ls secret/key
case_ ws-deny-python ws-deny "policy_denied filesystem /WORKSPACE/secret/key" "denyRead: python open" -- python3 -c "print(open('secret/key').read())"
case_ ws-deny-node ws-deny "policy_denied filesystem /WORKSPACE/secret/key" "denyRead: node readFileSync" -- node -e "require('fs').readFileSync('$WS/secret/key')"
case_ ws-deny-ssh ws-deny "policy_denied filesystem /SCRATCH/home/.ssh/id_rsa" "denyRead: ~/.ssh" -- bash -c 'cat ~/.ssh/id_rsa'

# ---------------------------------------------------------------- true denials: network off
case_ ro-curl-dns ro "network_unreachable network -" "network off: curl a host name" -- curl -sS http://example.com
case_ ro-curl-ip ro "network_unreachable network -" "network off: curl an IP" -- curl -sS http://1.1.1.1
case_ ro-wget ro "network_unreachable network -" "network off: wget" -- wget -nv -O /dev/null http://example.com
case_ ro-python-connect ro "network_unreachable network -" "network off: python connect to an IP" -- python3 -c "$PY_CONNECT_IP"
case_ ro-python-dns ro "network_unreachable network -" "network off: python urllib" -- python3 -c "$PY_DNS"
case_ ro-node-fetch ro "network_unreachable network -" "network off: node fetch" -- node -e "$NODE_FETCH"
case_ ro-node-connect ro "network_unreachable network -" "network off: node net.connect to an IP" -- node -e "$NODE_CONNECT"
case_ ws-git-clone ws "network_unreachable network -" "network off: git clone over https" -- git clone -q https://github.com/octocat/Hello-World.git hw
case_ ws-unix-python ws-unix "operation_not_permitted network -" "seccomp: python AF_UNIX socket" -- python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('/tmp/sandspawn-x.sock')"
case_ ws-unix-node ws-unix "operation_not_permitted network /tmp/sandspawn-x.sock" "seccomp: node connect to a unix socket" -- node -e "$NODE_UNIX"

# ---------------------------------------------------------------- true denials: SIGSYS
case_ ws-sigsys-mkdir ws-kill "sigsys process -" "seccomp kill: mkdir dies by SIGSYS (exit 159)" -- mkdir newdir
case_ ws-sigsys-bash ws-kill "sigsys process -" "seccomp kill: under bash (Bad system call)" -- bash -c 'mkdir newdir && echo ok'

# ---------------------------------------------------------------- not denials
case_ ws-false ws null "exit 1 from false" -- false
case_ ws-cat-missing ws null "cat a missing file" -- cat missing.txt
case_ ws-grep-nomatch ws null "grep without a match (exit 1)" -- grep -q zzz other.txt
case_ ws-not-found ws null "command not found (127)" -- bash -c 'nosuchcommand-xyz'
case_ ws-python-exception ws null "python exception" -- python3 -c '1/0'
case_ ws-node-exception ws null "node exception" -- node -e 'JSON.parse("{")'
case_ ws-exit-after-write ws null "a successful write, then exit 3" -- bash -c 'echo x > ok.txt && exit 3'
case_ ws-grep-sandbox-file ws null "grep hits in sandbox.txt plus a missing file (exit 2)" -- grep -rn sandbox sandbox.txt missing.txt
case_ ws-grep-sandbox-hits ws null "grep -rn over a tree with sandbox names, then fail" -- bash -c 'grep -rn fixture . ; exit 1'
case_ ws-ls-sandbox-then-fail ws null "ls of a sandbox dir and a missing path" -- ls sandbox/ missing-dir
case_ ws-cat-sandbox-missing ws null "cat ./sandbox/missing.txt" -- cat ./sandbox/missing.txt
case_ ws-python-in-sandbox-dir ws null "python script under sandbox/ raising" -- python3 sandbox/run.py
case_ ws-node-in-sandbox-dir ws null "node script under sandbox/ throwing" -- node sandbox/fail.js
case_ ws-diff-sandbox-txt ws null "diff of sandbox.txt (exit 1)" -- diff sandbox.txt other.txt
case_ ws-ls-landlock-dir ws null "ls a missing file under landlock-rules/" -- ls landlock-rules/missing
case_ ws-noexec ws null "Permission denied executing a non-executable script in the workspace (126)" -- bash -c './noexec.sh'
case_ ws-chmod000-cat ws null "Permission denied reading a 0000 file in the workspace" -- cat locked.txt
case_ ws-chmod000-python ws null "python PermissionError on a 0000 file in the workspace" -- python3 -c "open('locked.txt')"
case_ ws-deny-other-missing ws-deny null "denyRead policy, but an unrelated missing file" -- cat nothere.txt
case_ ws-net-refused ws-net null "network on: curl to a closed loopback port" -- curl -sS http://127.0.0.1:9
case_ ws-net-python-refused ws-net null "network on: python connect refused" -- python3 -c "$PY_CONNECT_LO"
case_ ws-net-dns ws-net null "network on: no DNS on this host (ordinary)" -- curl -sS http://nonexistent.invalid
case_ ro-net-node-fetch ro-net null "network on (read-only): node fetch fails without upstream" -- node -e "$NODE_FETCH"
case_ ro-loopback-refused ro null "network off: loopback connection refused (ambiguous, not classified)" -- python3 -c "$PY_CONNECT_LO"
case_ ro-read-ok ro null "read-only: reading works (exit 0)" -- cat sandbox.txt
case_ ws-touch-ok ws null "workspace-write: touch in the workspace (exit 0)" -- touch new.txt
case_ none-noexec none null "unsandboxed: non-executable script (126)" -- bash -c './noexec.sh'
case_ none-missing none null "unsandboxed: missing file" -- cat missing.txt
case_ none-curl none null "unsandboxed: curl without DNS" -- curl -sS http://example.com
case_ none-eperm-text none null "unsandboxed: output mentions Operation not permitted" -- bash -c 'echo "kill: Operation not permitted" >&2; exit 1'

jq -s '.' "$CASES" >"$OUT"
echo "wrote $(jq length "$OUT") cases to $OUT" >&2
