'use strict'
// The corpus cases: what to run, under which policy, and the label. A label is `null` (the sandbox
// did not cause the failure) or [reason, kind, path] with `path` absolute in the corpus's
// placeholders (/WORKSPACE, /SCRATCH) or null. Whether a case is a denial is decided by how it is
// built (the generator also runs every case unsandboxed and checks that denials behave differently
// there and ordinary failures fail the same way); reason, kind and path say what the output names.

const RO = { key: 'ro', policy: () => 'read-only' }
const RO_NET = { key: 'ro-net', policy: () => ({ mode: 'read-only', network: true }) }
const WS = { key: 'ws', policy: () => 'workspace-write' } // protectGit on: .git is read-only
const WS_NOGIT = { key: 'ws-nogit', policy: () => ({ mode: 'workspace-write', protectGit: false }) }
const WS_NET = { key: 'ws-net', policy: () => ({ mode: 'workspace-write', protectGit: false, network: true }) }
const WS_DENY = { key: 'ws-deny', policy: (x) => ({ mode: 'workspace-write', protectGit: false, denyRead: [`${x.ws}/secret`, `${x.home}/.ssh`] }) }
const WS_RO_VENDOR = { key: 'ws-ro-vendor', policy: (x) => ({ mode: 'workspace-write', protectGit: false, readOnlyPaths: [`${x.ws}/vendor`] }) }
const WS_UNIX = { key: 'ws-unix', policy: () => ({ mode: 'workspace-write', protectGit: false, allowUnixSockets: true }) }
// The network allow-list: only through its proxy, which a tool that ignores the proxy variables never reaches.
const WS_ALLOW = { key: 'ws-allow', policy: () => ({ mode: 'workspace-write', protectGit: false, network: { allowedDomains: ['registry.npmjs.org'] } }) }

const ROFS = (p) => ['read_only_file_system', 'filesystem', p]
const NET = (p = null) => ['network_unreachable', 'network', p]
const EPERM = (kind, p = null) => ['operation_not_permitted', kind, p]
const EACCES = (kind, p = null) => ['permission_denied', kind, p]
const HIDDEN = (p) => ['policy_denied', 'filesystem', p]

const W = '/WORKSPACE'
const S = '/SCRATCH'
const url = (x, p = '') => `http://127.0.0.1:${x.port}/${p}`
const dead = (x, p = '') => `http://127.0.0.1:${x.closed}/${p}`
const node = (js) => ['node', '-e', js]
const py = (code) => ['python3', '-c', code]
const bash = (s) => ['bash', '-c', s]
// npm/yarn/pnpm with a cache inside the workspace, so only the network decides.
const LOCAL_CACHE = (x) => ({ npm_config_cache: `${x.ws}/.npm-cache`, YARN_CACHE_FOLDER: `${x.ws}/.yarn-cache`, UV_CACHE_DIR: `${x.ws}/.uv-cache`, PIP_CACHE_DIR: `${x.ws}/.pip-cache` })
const LOCAL_CARGO = (x) => ({ CARGO_HOME: `${x.ws}/.cargo-home` })
const copyCargoHome = (x) => require('node:fs').cpSync(x.cargoHome, `${x.ws}/.cargo-home`, { recursive: true })

/** [id, tool, policy, label, description, argv(x), extra?] */
const CASES = [
  // ------------------------------------------------------------------ git
  ['git-add-ro', 'git', RO, ROFS(`${W}/.git/index.lock`), 'git add, read-only', () => ['git', 'add', 'tracked.txt']],
  ['git-add-protectgit', 'git', WS, ROFS(`${W}/.git/index.lock`), 'git add, .git protected', () => ['git', 'add', 'tracked.txt']],
  ['git-commit-protectgit', 'git', WS, ROFS(`${W}/.git/index.lock`), 'git commit -am, .git protected', () => ['git', 'commit', '-qam', 'msg']],
  ['git-stash-protectgit', 'git', WS, ROFS(`${W}/.git/index`), 'git stash, .git protected (prints only "could not write index")', () => ['git', 'stash']],
  ['git-stash-ro', 'git', RO, ROFS(null), 'git stash, read-only', () => ['git', 'stash']],
  ['git-checkout-branch-protectgit', 'git', WS, ROFS(`${W}/.git/index.lock`), 'git checkout -b, .git protected', () => ['git', 'checkout', '-q', '-b', 'feature']],
  ['git-checkout-file-ro', 'git', RO, ROFS(`${W}/.git/index.lock`), 'git checkout -- file, read-only', () => ['git', 'checkout', '--', 'tracked.txt']],
  ['git-fetch-protectgit', 'git', WS, ROFS(`${W}/.git/FETCH_HEAD`), 'git fetch from a local remote, .git protected', () => ['git', 'fetch', '-q', 'origin']],
  ['git-clone-ro', 'git', RO, ROFS(`${W}/copy`), 'git clone into the cwd, read-only', (x) => ['git', 'clone', '-q', x.remote, 'copy']],
  ['git-clone-outside', 'git', WS_NOGIT, ROFS(`${S}/outside/copy`), 'git clone outside the workspace', (x) => ['git', 'clone', '-q', x.remote, `${x.outside}/copy`]],
  ['git-config-protectgit', 'git', WS, ROFS(`${W}/.git/config`), 'git config, .git protected', () => ['git', 'config', 'user.name', 'x']],
  ['git-config-global', 'git', WS_NOGIT, ROFS(`${S}/home/.gitconfig`), 'git config --global, home read-only', () => ['git', 'config', '--global', 'core.editor', 'vi']],
  ['git-init-ro', 'git', RO, ROFS(`${W}/newrepo`), 'git init a new dir, read-only', () => ['git', 'init', '-q', 'newrepo']],
  ['git-tag-protectgit', 'git', WS, ROFS(`${W}/.git/refs/tags/v1.lock`), 'git tag, .git protected', () => ['git', 'tag', 'v1']],
  ['git-clone-http-nonet', 'git', WS_NOGIT, NET(), 'git clone over http from the loopback server, network off', (x) => ['git', 'clone', '-q', url(x, 'repo.git'), 'hw']],
  ['git-clone-invalid-nonet', 'git', WS_NOGIT, NET(), 'git clone from a .invalid host, network off', () => ['git', 'clone', '-q', 'https://git.example.invalid/r.git', 'hw']],
  ['git-add-missing', 'git', WS_NOGIT, null, 'git add a missing path', () => ['git', 'add', 'missing.txt']],
  ['git-checkout-missing', 'git', WS_NOGIT, null, 'git checkout an unknown branch', () => ['git', 'checkout', 'nope']],
  ['git-commit-nothing', 'git', WS_NOGIT, null, 'git commit with nothing staged', () => ['git', 'commit', '-qm', 'x']],
  ['git-clone-missing', 'git', WS_NOGIT, null, 'git clone of a missing repository', (x) => ['git', 'clone', '-q', `${x.outside}/none.git`, 'c']],
  ['git-fetch-missing-remote', 'git', WS_NOGIT, null, 'git fetch from an unknown remote', () => ['git', 'fetch', '-q', 'upstream']],
  ['git-config-bad-key', 'git', WS_NOGIT, null, 'git config with a key without a section', () => ['git', 'config', 'nosection', 'x']],
  ['git-stash-pop-empty', 'git', WS_NOGIT, null, 'git stash pop without a stash', () => ['git', 'stash', 'pop']],
  ['git-log-bad-rev', 'git', RO, null, 'git log of an unknown revision, read-only', () => ['git', 'log', 'nope']],
  ['git-status-not-repo', 'git', RO, null, 'git status outside a repository', (x) => ['git', '-C', x.outside, 'status']],
  ['git-diff-keywords', 'git', RO, EACCES('filesystem', `${W}/private.txt`), 'git diff --exit-code: git cannot hash a 0600 file of another user (root reads it unsandboxed; the sandbox drops capabilities)', () => bash("echo 'Operation not permitted: sandbox landlock seccomp' >> /dev/null; git diff --exit-code --stat; git diff --exit-code")],
  ['git-status-keyword-names', 'git', WS_NOGIT, null, 'git status lists untracked files named after keywords, then fails', () => bash('touch sandbox-denied.txt read-only-file-system.md && git status --short && exit 1')],
  ['git-clone-http-404', 'git', WS_NET, null, 'git clone of a missing repo over http, network on', (x) => ['git', 'clone', '-q', url(x, 'missing.git'), 'hw']],
  ['git-clone-refused-net', 'git', WS_NET, null, 'git clone from a closed loopback port, network on', (x) => ['git', 'clone', '-q', dead(x, 'r.git'), 'hw']],
  ['git-clone-invalid-net', 'git', WS_NET, null, 'git clone from a .invalid host, network on', () => ['git', 'clone', '-q', 'https://git.example.invalid/r.git', 'hw']],

  // ------------------------------------------------------------------ npm / npx / yarn / pnpm
  ['npm-init-ro', 'npm', RO, ROFS(`${W}/package.json`), 'npm init -y, read-only', () => ['npm', 'init', '-y'], { env: LOCAL_CACHE }],
  ['npm-run-build-ro', 'npm', RO, ROFS(`${W}/dist`), 'npm run build writes dist/, read-only', () => ['npm', 'run', 'build'], { env: LOCAL_CACHE }],
  ['npm-install-ro', 'npm', RO, ROFS(`${W}/package-lock.json`), 'npm install, read-only (home cache and workspace)', () => ['npm', 'install', '--no-audit']],
  ['npm-config-set-ws', 'npm', WS_NOGIT, ROFS(`${S}/home/.npmrc`), 'npm config set writes ~/.npmrc, home read-only', () => ['npm', 'config', 'set', 'color=false']],
  ['npm-install-refused-nonet', 'npm', WS_NOGIT, NET(), 'npm install from the loopback registry, network off', () => ['npm', 'install', '--no-audit', 'left-pad'], { env: LOCAL_CACHE }],
  ['npm-view-invalid-nonet', 'npm', WS_NOGIT, NET(), 'npm view from a .invalid registry, network off (npm retries, then fails)', () => ['npm', 'view', 'left-pad', '--registry', 'http://registry.example.invalid/', '--fetch-retries=0'], { env: LOCAL_CACHE }],
  ['npm-view-timeout-nonet', 'npm', WS_NOGIT, null, 'npm view, network off, killed by the timeout while retrying lookups silently (no evidence in the output)', () => ['npm', 'view', 'left-pad', '--registry', 'http://registry.example.invalid/', '--fetch-retries=2'], { env: LOCAL_CACHE, timeout: 6000 }],
  ['npm-view-timeout-http-log-nonet', 'npm', WS_NOGIT, NET(), 'npm view --loglevel http, network off, killed by the timeout after logging failed lookups', () => ['npm', 'view', 'left-pad', '--registry', 'http://registry.example.invalid/', '--fetch-retries=2', '--loglevel', 'http'], { env: LOCAL_CACHE, timeout: 6000 }],
  ['npx-ro', 'npx', RO, NET(), 'npx of a package, read-only (network off: the registry lookup is refused first)', () => ['npx', '--yes', 'cowsay', 'hi']],
  ['npx-refused-nonet', 'npx', WS_NOGIT, NET(), 'npx from the loopback registry, network off', () => ['npx', '--yes', 'cowsay', 'hi'], { env: LOCAL_CACHE }],
  ['yarn-install-ro', 'yarn', RO, ROFS(null), 'yarn install, read-only', () => ['yarn', 'install', '--non-interactive'], { knownMiss: 'yarn only says no cache folder is writable' }],
  ['yarn-add-refused-nonet', 'yarn', WS_NOGIT, NET(), 'yarn add from the loopback registry, network off', () => ['yarn', 'add', '--non-interactive', '--network-timeout', '3000', 'left-pad'], { env: LOCAL_CACHE }],
  ['pnpm-install-ro', 'pnpm', RO, ROFS(`${W}/.pnpm-store`), 'pnpm install, read-only', () => ['pnpm', 'install', '--store-dir', '.pnpm-store'], { env: LOCAL_CACHE }],
  ['pnpm-add-refused-nonet', 'pnpm', WS_NOGIT, NET(), 'pnpm add from the loopback registry, network off', () => ['pnpm', 'add', '--store-dir', '.pnpm-store', 'left-pad'], { env: LOCAL_CACHE }],
  ['npm-run-missing', 'npm', WS_NOGIT, null, 'npm run of a missing script', () => ['npm', 'run', 'nosuch'], { env: LOCAL_CACHE }],
  ['npm-test-fails', 'npm', WS_NOGIT, null, 'npm test: a failing test in a file named after keywords', () => ['npm', 'test'], { env: LOCAL_CACHE }],
  ['npm-lint-exit3', 'npm', WS_NOGIT, null, 'npm run lint exits 3', () => ['npm', 'run', 'lint'], { env: LOCAL_CACHE }],
  ['npm-install-404-net', 'npm', WS_NET, null, 'npm install of a package the loopback registry lacks (404), network on', () => ['npm', 'install', '--no-audit', 'left-pad'], { env: LOCAL_CACHE }],
  ['npm-install-refused-net', 'npm', WS_NET, null, 'npm install from a closed loopback port, network on', (x) => ['npm', 'install', '--no-audit', '--fetch-retries=0', '--registry', dead(x), 'left-pad'], { env: LOCAL_CACHE }],
  ['npm-view-invalid-net', 'npm', WS_NET, null, 'npm view from a .invalid registry, network on', () => ['npm', 'view', 'left-pad', '--registry', 'http://registry.example.invalid/', '--fetch-retries=0'], { env: LOCAL_CACHE }],
  ['npm-ci-no-lockfile', 'npm', WS_NOGIT, null, 'npm ci without a lockfile', () => ['npm', 'ci'], { env: LOCAL_CACHE }],
  ['npx-no-install-missing', 'npx', WS_NOGIT, NET(), 'npx --no-install of a missing binary still asks the registry, network off', () => ['npx', '--no-install', 'nosuch-bin-xyz'], { env: LOCAL_CACHE }],
  ['yarn-run-missing', 'yarn', WS_NOGIT, null, 'yarn run of a missing script', () => ['yarn', 'run', 'nosuch'], { env: LOCAL_CACHE }],
  ['yarn-add-404-net', 'yarn', WS_NET, null, 'yarn add of a package the loopback registry lacks, network on', () => ['yarn', 'add', '--non-interactive', '--network-timeout', '3000', 'left-pad'], { env: LOCAL_CACHE }],
  ['pnpm-run-missing', 'pnpm', WS_NOGIT, null, 'pnpm run of a missing script', () => ['pnpm', 'run', 'nosuch'], { env: LOCAL_CACHE }],
  ['pnpm-add-404-net', 'pnpm', WS_NET, null, 'pnpm add of a package the loopback registry lacks, network on', () => ['pnpm', 'add', '--store-dir', '.pnpm-store', 'left-pad'], { env: LOCAL_CACHE }],

  // ------------------------------------------------------------------ pip / uv / pyenv / python
  ['pip-install-target-ro', 'pip', RO, ROFS(`${W}/pydeps`), 'pip install --target in the cwd, read-only', (x) => ['pip', 'install', '-q', '--no-index', '--find-links', x.wheels, '--target', 'pydeps', 'corpus-pkg'], { env: LOCAL_CACHE , knownMiss: 'pip prints a traceback whose last line names no keyword' }],
  ['pip-config-ro', 'pip', WS_NOGIT, ROFS(`${S}/home/.config`), 'pip config set, home read-only', () => ['pip', 'config', '--user', 'set', 'global.timeout', '5']],
  ['pip-install-refused-nonet', 'pip', WS_NOGIT, NET(), 'pip install from the loopback index, network off', () => ['pip', 'install', 'left-pad-py'], { env: LOCAL_CACHE }],
  ['pip-install-invalid-nonet', 'pip', WS_NOGIT, NET(), 'pip install from a .invalid index, network off', () => ['pip', 'install', '--index-url', 'https://pypi.example.invalid/simple/', 'left-pad-py'], { env: LOCAL_CACHE }],
  ['pip-install-timeout-nonet', 'pip', WS_NOGIT, NET(), 'pip install from a .invalid index, network off, killed by the timeout while retrying lookups (it logs each retry)', () => ['pip', 'install', '--retries', '20', '--index-url', 'https://pypi.example.invalid/simple/', 'left-pad-py'], { env: LOCAL_CACHE, timeout: 4000 }],
  ['uv-venv-ro', 'uv', RO, ROFS(`${S}/home/.cache/uv`), 'uv venv, read-only', () => ['uv', 'venv', '-q', '.venv']],
  ['uv-pip-refused-nonet', 'uv', WS_NOGIT, NET(), 'uv pip install from the loopback index, network off', () => ['uv', 'pip', 'install', '--system', '--dry-run', 'left-pad-py'], { env: LOCAL_CACHE }],
  ['venv-ro', 'python', RO, ROFS(`${W}/.venv`), 'python -m venv, read-only', () => ['python3', '-m', 'venv', '.venv']],
  ['pyenv-rehash-ro', 'pyenv', RO, ROFS(`${S}/pyenv/shims`), 'pyenv rehash, its shims dir read-only', () => ['pyenv', 'rehash'], { env: (x) => ({ PYENV_ROOT: x.pyenv }) }],
  ['pyenv-rehash-ws', 'pyenv', WS_NOGIT, ROFS(`${S}/pyenv/shims`), 'pyenv rehash from a workspace-write run', () => ['pyenv', 'rehash'], { env: (x) => ({ PYENV_ROOT: x.pyenv }) }],
  ['pyenv-local-ro', 'pyenv', RO, ROFS(`${W}/.python-version`), 'pyenv local writes .python-version, read-only', () => ['pyenv', 'local', 'system'], { env: (x) => ({ PYENV_ROOT: x.pyenv }) }],
  ['python-write-ro', 'python', RO, ROFS(`${W}/x.txt`), 'python open for writing, read-only', () => py("open('x.txt', 'w')")],
  ['python-write-outside', 'python', WS_NOGIT, ROFS(`${S}/outside/p.txt`), 'python writes outside the workspace', (x) => py(`open('${x.outside}/p.txt', 'w').write('x')`)],
  ['python-makedirs-ro', 'python', RO, ROFS(`${W}/a`), 'python os.makedirs, read-only', () => py("import os; os.makedirs('a/b/c')")],
  ['python-rename-ro', 'python', RO, ROFS(`${W}/other.txt`), 'python os.rename, read-only', () => py("import os; os.rename('other.txt', 'o2.txt')")],
  ['python-pathlib-home', 'python', WS_NOGIT, ROFS(`${S}/home/.cache`), 'python pathlib mkdir in ~/.cache, home read-only', () => py("import pathlib; pathlib.Path.home().joinpath('.cache/tool').mkdir(parents=True)")],
  ['python-urllib-refused-nonet', 'python', RO, NET(), 'python urllib to the loopback server, network off', (x) => py(`import urllib.request; urllib.request.urlopen('${url(x)}', timeout=5)`)],
  ['python-urllib-invalid-nonet', 'python', RO, NET(), 'python urllib to a .invalid host, network off', () => py("import urllib.request; urllib.request.urlopen('http://example.invalid', timeout=5)")],
  ['python-socket-refused-nonet', 'python', RO, NET(), 'python socket connect to the loopback server, network off', (x) => py(`import socket; socket.create_connection(('127.0.0.1', ${x.port}), timeout=5)`)],
  ['python-unix-socket-blocked', 'python', WS_NOGIT, EPERM('network'), 'python AF_UNIX connect to a host socket, unix sockets blocked', (x) => py(`import socket; s = socket.socket(socket.AF_UNIX); s.connect('${x.sock}')`)],
  ['pip-install-missing-file', 'pip', WS_NOGIT, null, 'pip install of a missing local path', () => ['pip', 'install', './nope'], { env: LOCAL_CACHE }],
  ['pip-install-missing-req', 'pip', WS_NOGIT, null, 'pip install -r of a missing file', () => ['pip', 'install', '-r', 'missing.txt'], { env: LOCAL_CACHE }],
  ['pip-install-404-net', 'pip', WS_NET, null, 'pip install of a package the loopback index lacks (404), network on', () => ['pip', 'install', 'left-pad-py'], { env: LOCAL_CACHE }],
  ['pip-install-refused-net', 'pip', WS_NET, null, 'pip install from a closed loopback port, network on', (x) => ['pip', 'install', '--retries', '0', '--index-url', dead(x, 'simple/'), 'left-pad-py'], { env: LOCAL_CACHE }],
  ['pip-install-invalid-net', 'pip', WS_NET, null, 'pip install from a .invalid index, network on', () => ['pip', 'install', '--retries', '0', '--index-url', 'https://pypi.example.invalid/simple/', 'left-pad-py'], { env: LOCAL_CACHE }],
  ['uv-pip-404-net', 'uv', WS_NET, null, 'uv pip install of a package the loopback index lacks, network on', () => ['uv', 'pip', 'install', '--system', '--dry-run', 'left-pad-py'], { env: LOCAL_CACHE }],
  ['uv-run-missing', 'uv', WS_NOGIT, null, 'uv run of a missing script', () => ['uv', 'run', '--no-project', 'missing.py'], { env: LOCAL_CACHE }],
  ['pyenv-local-missing', 'pyenv', WS_NOGIT, null, 'pyenv local of a version not installed', () => ['pyenv', 'local', '9.9.9'], { env: (x) => ({ PYENV_ROOT: x.pyenv }) }],
  ['pyenv-which-missing', 'pyenv', RO, null, 'pyenv which of a missing command', () => ['pyenv', 'which', 'nosuchcmd'], { env: (x) => ({ PYENV_ROOT: x.pyenv }) }],
  ['python-exception', 'python', WS_NOGIT, null, 'python exception', () => py('1/0')],
  ['python-syntax', 'python', RO, null, 'python syntax error', () => ['python3', 'syntax.py']],
  ['python-import-missing', 'python', RO, null, 'python import of a missing module', () => py('import nosuchmodule_xyz')],
  ['python-script-in-sandbox-dir', 'python', WS_NOGIT, null, 'python script under sandbox/ raising', () => ['python3', 'sandbox/run.py']],
  ['python-unittest-keyword-names', 'python', WS_NOGIT, null, 'unittest failure in a test named after keywords', () => ['python3', '-m', 'unittest', 'discover', '-s', 'tests', '-p', 'test_*.py']],
  ['python-open-missing', 'python', RO, null, 'python open of a missing file', () => py("open('missing.txt')")],
  ['python-urllib-404-net', 'python', RO_NET, null, 'python urllib 404 from the loopback server, network on', (x) => py(`import urllib.request; urllib.request.urlopen('${url(x, 'missing')}', timeout=5)`)],
  ['python-socket-refused-net', 'python', WS_NET, null, 'python connect to a closed loopback port, network on', (x) => py(`import socket; socket.create_connection(('127.0.0.1', ${x.closed}), timeout=5)`)],
  ['python-chmod000-own', 'python', WS_NOGIT, null, 'noexec script run by python subprocess (Permission denied inside the workspace)', () => py("import subprocess; subprocess.run(['./noexec.sh'], check=True)")],

  // ------------------------------------------------------------------ cargo
  ['cargo-build-ro', 'cargo', RO, ROFS(null), 'cargo build, read-only', () => ['cargo', 'build', '-q', '--offline', '--manifest-path', 'crate/Cargo.toml']],
  ['cargo-new-ro', 'cargo', RO, ROFS(null), 'cargo new, read-only', () => ['cargo', 'new', '-q', '--vcs', 'none', 'newcrate']],
  ['cargo-dep-home-ro', 'cargo', WS_NET, ROFS(`${S}/cargo-home/registry/index/127.0.0.1-HASH/.cache/oo/ra/oorandom`), 'cargo build with a registry dependency, CARGO_HOME read-only (index cache warning, then download error)', () => ['cargo', 'build', '--manifest-path', 'depcrate/Cargo.toml']],
  ['cargo-dep-refused-nonet', 'cargo', WS_NOGIT, NET(), 'cargo build with a loopback registry dependency, network off', () => ['cargo', 'build', '--manifest-path', 'depcrate/Cargo.toml'], { env: LOCAL_CARGO, setup: copyCargoHome }],
  ['cargo-test-fails', 'cargo', WS_NOGIT, null, 'cargo test with a failing test named after a keyword', () => ['cargo', 'test', '-q', '--offline', '--manifest-path', 'crate/Cargo.toml']],
  ['cargo-build-type-error', 'cargo', WS_NOGIT, null, 'cargo build of a crate with a type error', () => ['cargo', 'build', '-q', '--offline', '--manifest-path', 'badcrate/Cargo.toml']],
  ['cargo-run-missing-bin', 'cargo', WS_NOGIT, null, 'cargo run of a missing binary', () => ['cargo', 'run', '-q', '--offline', '--manifest-path', 'crate/Cargo.toml', '--bin', 'nosuch']],
  ['cargo-missing-manifest', 'cargo', RO, null, 'cargo build without a manifest', () => ['cargo', 'build', '--manifest-path', 'nope/Cargo.toml']],
  ['cargo-dep-missing-net', 'cargo', WS_NET, null, 'cargo build with a dependency the loopback registry lacks, network on', () => ['cargo', 'build', '--manifest-path', 'missingdep/Cargo.toml'], { env: LOCAL_CARGO, setup: copyCargoHome }],

  // ------------------------------------------------------------------ make / gcc
  ['make-ro', 'make', RO, ROFS(`${W}/out`), 'make creates out/, read-only', () => ['make']],
  ['make-install-outside', 'make', WS_NOGIT, ROFS(`${S}/outside/prefix`), 'make install outside the workspace', (x) => ['make', 'install', `PREFIX=${x.outside}/prefix`]],
  ['gcc-ro', 'gcc', RO, ROFS(W), 'gcc -o in the cwd, read-only (temp files and output)', () => ['gcc', '-o', 'app', 'hello.c']],
  ['gcc-output-outside', 'gcc', WS_NOGIT, ROFS(`${S}/outside/app`), 'gcc -o outside the workspace', (x) => ['gcc', '-o', `${x.outside}/app`, 'hello.c']],
  ['gcc-c-ro-tmp-ok', 'gcc', { key: 'ro-tmp', policy: () => ({ mode: 'read-only', tmp: 'private' }) }, ROFS(`${W}/hello.o`), 'gcc -c, read-only with a private /tmp', () => ['gcc', '-c', 'hello.c']],
  ['make-missing-target', 'make', WS_NOGIT, null, 'make of a missing target', () => ['make', 'nosuch']],
  ['make-compile-error', 'make', WS_NOGIT, null, 'make of a target whose C has an error', () => ['make', 'broken']],
  ['make-no-makefile', 'make', RO, null, 'make in a dir without a Makefile', (x) => ['make', '-C', x.outside]],
  ['gcc-syntax', 'gcc', WS_NOGIT, null, 'gcc of a file with an error', () => ['gcc', '-o', 'b', 'broken.c']],
  ['gcc-missing-file', 'gcc', WS_NOGIT, null, 'gcc of a missing file', () => ['gcc', 'missing.c']],
  ['gcc-link-error', 'gcc', WS_NOGIT, null, 'gcc link error (undefined reference)', () => ['gcc', '-o', 'l', 'linkfail.c']],

  // ------------------------------------------------------------------ node
  ['node-write-ro', 'node', RO, ROFS(`${W}/n.txt`), 'node writeFileSync, read-only', () => node("require('fs').writeFileSync('n.txt', 'x')")],
  ['node-mkdir-outside', 'node', WS_NOGIT, ROFS(`${S}/outside/d`), 'node mkdirSync outside the workspace', (x) => node(`require('fs').mkdirSync('${x.outside}/d')`)],
  ['node-promises-write-home', 'node', WS_NOGIT, ROFS(`${S}/home/.toolrc`), 'node fs.promises.writeFile in home, read-only home', () => node("require('fs/promises').writeFile(require('os').homedir() + '/.toolrc', 'x').catch(e => { console.error(e); process.exit(1) })")],
  ['node-rename-ro', 'node', RO, ROFS(`${W}/other.txt`), 'node renameSync, read-only', () => node("require('fs').renameSync('other.txt', 'o.txt')")],
  ['node-unlink-vendor', 'node', WS_RO_VENDOR, ROFS(`${W}/vendor/lib.txt`), 'node unlink in a readOnlyPaths dir', () => node("require('fs').unlinkSync('vendor/lib.txt')")],
  ['node-fetch-refused-nonet', 'node', RO, NET(), 'node fetch of the loopback server, network off', (x) => node(`fetch('${url(x)}').catch(e => { console.error(e); process.exit(1) })`)],
  ['node-fetch-invalid-nonet', 'node', RO, NET(), 'node fetch of a .invalid host, network off', () => node("fetch('http://example.invalid').catch(e => { console.error(e); process.exit(1) })")],
  ['node-connect-refused-nonet', 'node', RO, NET(), 'node net.connect to the loopback server, network off', (x) => node(`require('net').connect(${x.port}, '127.0.0.1').on('error', e => { console.error(e.message); process.exit(1) })`)],
  ['node-http-get-nonet', 'node', RO, NET(), 'node http.get of the loopback server (uncaught), network off', (x) => node(`require('http').get('${url(x)}')`)],
  ['node-unix-blocked', 'node', WS_NOGIT, EPERM('network', '/GEN/docker.sock'), 'node connect to a host unix socket, unix sockets blocked', (x) => node(`require('net').connect('${x.sock}').on('error', e => { console.error(e.message); process.exit(1) })`)],
  ['node-exception', 'node', WS_NOGIT, null, 'node exception', () => node('JSON.parse("{")')],
  ['node-syntax', 'node', RO, null, 'node syntax error', () => ['node', 'syntax.js']],
  ['node-missing-module', 'node', RO, null, 'node require of a missing module', () => node("require('nosuch-module-xyz')")],
  ['node-readfile-missing', 'node', RO, null, 'node readFileSync of a missing file', () => node("require('fs').readFileSync('missing.txt')")],
  ['node-script-in-sandbox-dir', 'node', WS_NOGIT, null, 'node script under sandbox/ throwing', () => ['node', 'sandbox/fail.js']],
  ['node-test-keyword-names', 'node', WS_NOGIT, null, 'node --test failing in a file named after keywords', () => ['node', '--test', 'tests/']],
  ['node-fetch-404-net', 'node', RO_NET, null, 'node fetch 404 from the loopback server, network on, exits 1', (x) => node(`fetch('${url(x, 'missing')}').then(r => { console.error('HTTP', r.status); process.exit(r.ok ? 0 : 1) })`)],
  ['node-fetch-refused-net', 'node', RO_NET, null, 'node fetch of a closed loopback port, network on', (x) => node(`fetch('${dead(x)}').catch(e => { console.error(e); process.exit(1) })`)],
  ['node-fetch-invalid-net', 'node', RO_NET, null, 'node fetch of a .invalid host, network on', () => node("fetch('http://example.invalid').catch(e => { console.error(e); process.exit(1) })")],
  ['node-lookup-code-nonet', 'node', WS_NOGIT, NET(), 'node dns.lookup printing only the error code (ENOTFOUND), network off', () => node("require('dns').lookup('registry.example.invalid', (e) => { console.error(e.code); process.exit(1) })")],
  ['node-lookup-code-allowlist', 'node', WS_ALLOW, NET(), 'node dns.lookup printing only the error code (ENOTFOUND), allow-list (no resolver inside)', () => node("require('dns').lookup('registry.example.invalid', (e) => { console.error(e.code); process.exit(1) })")],
  ['node-http-get-allowlist', 'node', WS_ALLOW, NET(), 'node 20 http.get ignores the proxy variables, allow-list (no resolver inside)', () => node("require('http').get('http://registry.example.invalid/').on('error', (e) => { console.error(e.message); process.exit(1) })")],
  ['node-unix-allowed-missing', 'node', WS_UNIX, null, 'node connect to a missing unix socket, unix sockets allowed', (x) => node(`require('net').connect('${x.outside}/none.sock').on('error', e => { console.error(e.message); process.exit(1) })`)],

  // ------------------------------------------------------------------ java
  ['java-write-ro', 'java', RO, ROFS(`${W}/out.txt`), 'java single-file program writing a file, read-only', () => ['java', 'Hello.java']],
  ['javac-ro', 'java', RO, ROFS(`${W}/Hello.class`), 'javac -d . writes classes, read-only', () => ['javac', '-d', '.', 'Hello.java']],
  ['java-compile-error', 'java', WS_NOGIT, null, 'java source with a type error', () => ['javac', '-d', 'classes', 'Broken.java']],
  ['java-exception', 'java', WS_NOGIT, null, 'java program throwing', () => ['java', 'Throws.java']],
  ['java-missing-class', 'java', RO, null, 'java of a missing class', () => ['java', '-cp', '.', 'NoSuchClass']],

  // ------------------------------------------------------------------ curl / wget
  ['curl-output-ro', 'curl', RO_NET, ROFS(null), 'curl -o into the cwd, read-only with network', (x) => ['curl', '-sS', '-o', 'page.html', url(x)], { knownMiss: 'curl (23) names neither the file nor the reason' }],
  ['curl-refused-nonet', 'curl', RO, NET(), 'curl the loopback server, network off', (x) => ['curl', '-sS', url(x)]],
  ['curl-invalid-nonet', 'curl', RO, NET(), 'curl a .invalid host, network off', () => ['curl', '-sS', 'http://example.invalid']],
  ['curl-upload-deny', 'curl', { key: 'ws-deny-net', policy: (x) => ({ mode: 'workspace-write', protectGit: false, network: true, denyRead: [`${x.ws}/secret`] }) }, HIDDEN(`${W}/secret/key`), 'curl -T of a denyRead file, network on', (x) => ['curl', '-sS', '-T', 'secret/key', url(x, 'up')], { knownMiss: 'curl -T says only "Can\'t open secret/key"' }],
  ['wget-output-ro', 'wget', RO_NET, ROFS(`${W}/page.html`), 'wget -O into the cwd, read-only with network', (x) => ['wget', '-q', '-O', 'page.html', url(x)]],
  ['wget-refused-nonet', 'wget', RO, NET(), 'wget the loopback server, network off', (x) => ['wget', '-nv', '-O', '/dev/null', url(x)]],
  ['wget-invalid-nonet', 'wget', RO, NET(), 'wget a .invalid host, network off', () => ['wget', '-nv', '-O', '/dev/null', 'http://example.invalid']],
  ['curl-404-net', 'curl', RO_NET, null, 'curl -f of a 404, network on', (x) => ['curl', '-sSf', url(x, 'missing')]],
  ['curl-refused-net', 'curl', RO_NET, null, 'curl a closed loopback port, network on', (x) => ['curl', '-sS', dead(x)]],
  ['curl-invalid-net', 'curl', RO_NET, null, 'curl a .invalid host, network on', () => ['curl', '-sS', 'http://example.invalid']],
  ['curl-output-missing-dir', 'curl', WS_NET, null, 'curl -o into a missing directory, network on', (x) => ['curl', '-sS', '-o', 'nodir/page.html', url(x)]],
  ['wget-404-net', 'wget', RO_NET, null, 'wget of a 404, network on', (x) => ['wget', '-nv', '-O', '/dev/null', url(x, 'missing')]],
  ['wget-refused-net', 'wget', RO_NET, null, 'wget a closed loopback port, network on', (x) => ['wget', '-nv', '-t', '1', '-O', '/dev/null', dead(x)]],

  // ------------------------------------------------------------------ ssh / rsync
  ['ssh-refused-nonet', 'ssh', RO, NET(), 'ssh to the loopback server, network off', (x) => ['ssh', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-p', String(x.port), '127.0.0.1', 'true']],
  ['ssh-invalid-nonet', 'ssh', RO, NET(), 'ssh to a .invalid host, network off', () => ['ssh', '-o', 'BatchMode=yes', 'host.example.invalid', 'true']],
  ['ssh-keygen-ro', 'ssh', RO, ROFS(`${W}/id_test`), 'ssh-keygen into the cwd, read-only', () => ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', 'id_test']],
  ['ssh-key-denyread', 'ssh', WS_DENY, NET(), 'ssh -i of a denyRead key to a .invalid host, network off (the failed lookup ends it)', () => bash('ssh -o BatchMode=yes -i ~/.ssh/id_rsa host.example.invalid true')],
  ['ssh-refused-net', 'ssh', RO_NET, null, 'ssh to a closed loopback port, network on', (x) => ['ssh', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-p', String(x.closed), '127.0.0.1', 'true']],
  ['ssh-invalid-net', 'ssh', RO_NET, null, 'ssh to a .invalid host, network on', () => ['ssh', '-o', 'BatchMode=yes', 'host.example.invalid', 'true']],
  ['ssh-keygen-missing-dir', 'ssh', WS_NOGIT, null, 'ssh-keygen into a missing directory', () => ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', 'nodir/id_test']],
  ['rsync-outside', 'rsync', WS_NOGIT, ROFS(`${S}/outside/dst`), 'rsync to outside the workspace', (x) => ['rsync', '-a', 'sandbox/', `${x.outside}/dst`]],
  ['rsync-ro', 'rsync', RO, ROFS(`${W}/copy`), 'rsync into the cwd, read-only', () => ['rsync', '-a', 'sandbox/', 'copy/']],
  ['rsync-missing-src', 'rsync', WS_NOGIT, null, 'rsync of a missing source', () => ['rsync', '-a', 'nosuch/', 'copy/']],
  ['rsync-verbose-keyword-names', 'rsync', WS_NOGIT, null, 'rsync -av lists keyword-named files, then fails on a missing source', () => ['rsync', '-av', 'sandbox', 'docs', 'logs', 'nosuch', 'copy/']],

  // ------------------------------------------------------------------ tar / sed / ln / cp / mv / chmod / coreutils
  ['tar-extract-ro', 'tar', RO, ROFS(`${W}/seccomp-landlock.md`), 'tar -xf into the cwd, read-only', () => ['tar', '-xf', 'archive.tar', '-C', 'sandbox', '--strip-components=1']],
  ['tar-create-outside', 'tar', WS_NOGIT, ROFS(`${S}/outside/a.tar`), 'tar -cf outside the workspace', (x) => ['tar', '-cf', `${x.outside}/a.tar`, 'sandbox']],
  ['tar-missing-archive', 'tar', RO, null, 'tar -xf of a missing archive', () => ['tar', '-xf', 'missing.tar']],
  ['tar-list-keyword-names', 'tar', RO, null, 'tar -tvf lists keyword-named members, then a missing member', () => ['tar', '-tvf', 'archive.tar', 'sandbox', 'docs', 'logs', 'nosuch']],
  ['tar-create-verbose-missing', 'tar', WS_NOGIT, null, 'tar -cvf lists keyword-named files, then a missing one', () => ['tar', '-cvf', 'out.tar', 'sandbox', 'docs', 'logs', 'nosuch']],
  ['sed-i-ro', 'sed', RO, ROFS(`${W}/sedXXXXXX`), 'sed -i, read-only', () => ['sed', '-i', 's/one/1/', 'tracked.txt']],
  ['sed-i-vendor', 'sed', WS_RO_VENDOR, ROFS(`${W}/vendor/sedXXXXXX`), 'sed -i in a readOnlyPaths dir', () => ['sed', '-i', 's/v/V/', 'vendor/lib.txt']],
  ['sed-bad-expr', 'sed', WS_NOGIT, null, 'sed with a bad expression', () => ['sed', '-i', 's/unterminated', 'tracked.txt']],
  ['sed-missing-file', 'sed', WS_NOGIT, null, 'sed -i of a missing file', () => ['sed', '-i', 's/a/b/', 'missing.txt']],
  ['ln-ro', 'ln', RO, ROFS(`${W}/link`), 'ln -s, read-only', () => ['ln', '-s', 'tracked.txt', 'link']],
  ['ln-outside', 'ln', WS_NOGIT, ROFS(`${S}/outside/link`), 'ln -s outside the workspace', (x) => ['ln', '-s', 'tracked.txt', `${x.outside}/link`]],
  ['ln-exists', 'ln', WS_NOGIT, null, 'ln onto an existing file', () => ['ln', '-s', 'tracked.txt', 'other.txt']],
  ['cp-ro', 'cp', RO, ROFS(`${W}/copy.txt`), 'cp into the cwd, read-only', () => ['cp', 'sandbox.txt', 'copy.txt']],
  ['cp-outside', 'cp', WS_NOGIT, ROFS(`${S}/outside/copy.txt`), 'cp outside the workspace', (x) => ['cp', 'sandbox.txt', `${x.outside}/copy.txt`]],
  ['cp-protectgit', 'cp', WS, ROFS(`${W}/.git/hooks/pre-commit`), 'cp a hook into .git, .git protected', () => ['cp', 'noexec.sh', '.git/hooks/pre-commit']],
  ['cp-missing', 'cp', WS_NOGIT, null, 'cp of a missing file', () => ['cp', 'missing.txt', 'x.txt']],
  ['cp-r-keyword-names-missing', 'cp', WS_NOGIT, null, 'cp -rv lists keyword-named files, then a missing source', () => ['cp', '-rv', 'sandbox', 'docs', 'logs', 'nosuch', 'other-dir-missing/']],
  ['mv-ro', 'mv', RO, ROFS(`${W}/moved.txt`), 'mv in the cwd, read-only', () => ['mv', 'other.txt', 'moved.txt']],
  ['mv-outside', 'mv', WS_NOGIT, ROFS(`${S}/outside/other.txt`), 'mv into a dir outside the workspace', (x) => ['mv', 'other.txt', `${x.outside}/`]],
  ['mv-missing', 'mv', WS_NOGIT, null, 'mv of a missing file', () => ['mv', 'missing.txt', 'x.txt']],
  ['chmod-ro', 'chmod', RO, ROFS(`${W}/tracked.txt`), 'chmod, read-only', () => ['chmod', '+x', 'tracked.txt']],
  ['chmod-foreign', 'chmod', WS_NOGIT, EPERM('filesystem', `${W}/private.txt`), 'chmod of a file owned by another user (works unsandboxed as root; the sandbox drops capabilities)', () => ['chmod', '644', 'private.txt']],
  ['chmod-missing', 'chmod', WS_NOGIT, null, 'chmod of a missing file', () => ['chmod', '+x', 'missing.sh']],
  ['cat-foreign', 'cat', RO, EACCES('filesystem', `${W}/private.txt`), 'cat a 0600 file of another user (readable unsandboxed as root)', () => ['cat', 'private.txt']],
  ['touch-ro', 'touch', RO, ROFS(`${W}/new.txt`), 'touch, read-only', () => ['touch', 'new.txt']],
  ['touch-outside', 'touch', WS_NOGIT, ROFS(`${S}/outside/f`), 'touch outside the workspace', (x) => ['touch', `${x.outside}/f`]],
  ['touch-protectgit', 'touch', WS, ROFS(`${W}/.git/x`), 'touch in .git, .git protected', () => ['touch', '.git/x']],
  ['mkdir-ro', 'mkdir', RO, ROFS(`${W}/build`), 'mkdir, read-only', () => ['mkdir', 'build']],
  ['rm-ro', 'rm', RO, ROFS(`${W}/other.txt`), 'rm, read-only', () => ['rm', 'other.txt']],
  ['rm-rf-ro', 'rm', RO, ROFS(`${W}/sandbox/fail.js`), 'rm -rf of a directory, read-only', () => ['rm', '-rf', 'sandbox']],
  ['bash-redirect-ro', 'bash', RO, ROFS(`${W}/out.txt`), 'bash redirect, read-only', () => bash('echo hi > out.txt')],
  ['dash-redirect-tmp-ro', 'sh', RO, ROFS('/tmp/sandspawn-dash-x'), 'dash redirect into /tmp, read-only', () => ['sh', '-c', 'echo x > /tmp/sandspawn-dash-x']],
  ['bash-redirect-home', 'bash', WS_NOGIT, ROFS(`${S}/home/.bashrc-test`), 'bash redirect into home, home read-only', () => bash('echo x > ~/.bashrc-test')],
  ['tee-vendor', 'tee', WS_RO_VENDOR, ROFS(`${W}/vendor/new.txt`), 'tee into a readOnlyPaths dir', () => bash('echo x | tee vendor/new.txt')],
  ['deny-cat', 'cat', WS_DENY, HIDDEN(`${W}/secret/key`), 'cat a denyRead file', () => ['cat', 'secret/key']],
  ['deny-ls', 'ls', WS_DENY, HIDDEN(`${W}/secret/key`), 'ls a denyRead file (exit 2)', () => ['ls', 'secret/key']],
  ['deny-python', 'python', WS_DENY, HIDDEN(`${W}/secret/key`), 'python open of a denyRead file', () => py("print(open('secret/key').read())")],
  ['deny-node', 'node', WS_DENY, HIDDEN(`${W}/secret/key`), 'node readFileSync of a denyRead file', (x) => node(`require('fs').readFileSync('${x.ws}/secret/key')`)],
  ['deny-home-ssh', 'cat', WS_DENY, HIDDEN(`${S}/home/.ssh/id_rsa`), 'cat ~/.ssh/id_rsa under denyRead', () => bash('cat ~/.ssh/id_rsa')],
  ['deny-other-missing', 'cat', WS_DENY, null, 'denyRead policy, an unrelated missing file', () => ['cat', 'nothere.txt']],
  ['cat-missing', 'cat', WS_NOGIT, null, 'cat a missing file', () => ['cat', 'missing.txt']],
  ['false', 'sh', WS_NOGIT, null, 'false', () => ['false']],
  ['grep-nomatch', 'grep', RO, null, 'grep without a match', () => ['grep', '-q', 'zzz', 'other.txt']],
  ['not-found', 'bash', WS_NOGIT, null, 'command not found (127)', () => bash('nosuchcommand-xyz')],
  ['noexec-script', 'bash', WS_NOGIT, null, 'Permission denied executing a non-executable script in the workspace (126)', () => bash('./noexec.sh')],
  ['grep-keyword-hits', 'grep', WS_NOGIT, null, 'grep -rn hits in keyword-named files, then fail', () => bash('grep -rn -i -e sandbox -e seccomp -e "operation not permitted" . --exclude-dir=.git --exclude=private.txt; exit 1')],
  ['grep-keyword-file-missing', 'grep', RO, null, 'grep in sandbox.txt plus a missing file (exit 2)', () => ['grep', 'sandbox', 'sandbox.txt', 'missing.txt']],
  ['ls-keyword-names-missing', 'ls', RO, null, 'ls of keyword-named dirs and a missing path', () => ['ls', '-R', 'sandbox', 'docs', 'logs', 'missing-dir']],
  ['ls-denial-named-files-fail', 'ls', WS_NOGIT, null, "ls shows files named 'permission denied.log' and 'read-only file system/', next to an unrelated failure", () => bash("mkdir -p names && cd names && touch 'permission denied.log' 'operation not permitted.txt' && mkdir -p 'read-only file system' && ls -p; exit 1")],
  ['find-keyword-names-fail', 'find', RO, null, 'find lists keyword-named files, then fails', () => bash("find . -name '*sandbox*' -o -name '*seccomp*' -o -name '*not-permitted*' | sort; exit 1")],
  ['diff-keyword-file', 'diff', RO, null, 'diff of sandbox.txt (exit 1)', () => ['diff', 'sandbox.txt', 'other.txt']],
  ['echo-eperm-text', 'bash', RO, null, 'a script that prints a keyword itself in a log line, then fails', () => bash('echo "checking: landlock support detected"; exit 1')],

  // ------------------------------------------------------------------ docker CLI against its socket
  ['docker-socket-blocked', 'docker', WS_NOGIT, EPERM('network', '/GEN/docker.sock'), 'docker version against a host socket, unix sockets blocked', () => ['docker', 'version']],
  ['docker-ps-blocked', 'docker', RO, EPERM('network', '/GEN/docker.sock'), 'docker ps against a host socket, unix sockets blocked', () => ['docker', 'ps']],
  ['docker-socket-404', 'docker', WS_UNIX, null, 'docker ps against a socket answering 404, unix sockets allowed', () => ['docker', 'ps']],
  ['docker-no-daemon', 'docker', WS_UNIX, null, 'docker ps with no daemon at DOCKER_HOST, unix sockets allowed', (x) => ['docker', '-H', `unix://${x.outside}/none.sock`, 'ps']],
]

module.exports = { CASES }
