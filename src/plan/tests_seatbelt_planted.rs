//! What a darwin profile lets a command leave for the host (found by an attacker's review of the
//! Seatbelt side, each shown with the evaluator): case variants of `.git` and of the protected
//! names (macOS volumes are case-insensitive by default, so `.GIT` is `.git` to git), case variants
//! of the home's paths kept absent, the macOS paths of a home inside a writable root, and every
//! POSIX semaphore on the machine.

use super::*;
use crate::plan::seatbelt_eval::{Profile, Target};
use crate::planted::home::test_home;

fn darwin(p: &crate::policy::ResolvedPolicy, cwd: &Path) -> Profile {
    let cmd = v(&["true"]);
    let env = BTreeMap::new();
    Profile::of_plan(&build(&PlanRequest {
        command: &cmd, cwd, env: &env, policy: p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None,
    }).unwrap())
}

fn workspace_write(cwd: &Path) -> Profile {
    darwin(&policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only"}), cwd, Platform::Darwin), cwd)
}

#[test]
fn case_variants_of_git_and_of_protected_names_are_refused() {
    let (_t, top) = tmp();
    let ws = top.join("ws"); // no .git at the top: a missing one cannot be created either
    fs::create_dir_all(ws.join("sub")).unwrap();
    fs::create_dir_all(ws.join("node_modules/p")).unwrap();
    let prof = workspace_write(&ws);
    for rel in [
        ".git/config", ".GIT/config", ".Git/hooks/pre-commit", "sub/.GIT/config", "sub/.gIt", ".zshrc", ".ZSHRC", ".Envrc", ".VSCode/tasks.json",
        "sub/.ENVRC", ".MCP.json", ".npmRC", "sub/.Cargo/config.toml",
    ] {
        assert!(!prof.may_write(&s(&ws.join(rel))), "{rel} is refused");
    }
    // Only those names: others with the same letters, and packages' own .vscode, stay writable.
    for rel in ["sub/.GITignore", "sub/x.GIT", ".github/ci.yml", "sub/.ENVRC.example", "node_modules/p/.VSCode/settings.json", "src/Git/x"] {
        assert!(prof.may_write(&s(&ws.join(rel))), "{rel} is writable");
    }
}

/// APFS compares names case-folded, and Unicode's folding takes some letters outside ASCII to ASCII
/// ones: U+017F (long s) to `s`, U+212A (Kelvin) to `k`, and in full folding the ligatures U+FB00..
/// FB06 to `ff`, `fi`, `fl`, `ffi`, `ffl`, `st`, and `ß`/U+1E9E to `ss`. Each such spelling of a
/// protected name, `.git` or a missing home path must be refused as the ASCII one is; and the
/// code points HFS+ ignores in names (U+200C..200F, U+202A..202E, U+206A..206F, U+FEFF) inside one.
#[test]
fn folded_spellings_of_git_protected_names_and_home_paths_are_refused() {
    let (_t, top) = tmp();
    let ws = top.join("ws");
    fs::create_dir_all(ws.join("sub")).unwrap();
    fs::create_dir_all(ws.join("node_modules/p")).unwrap();
    let prof = workspace_write(&ws);
    for rel in [
        ".v\u{17f}code/tasks.json", "sub/.V\u{17F}Code/settings.json", ".z\u{17f}hrc", ".gitcon\u{fb01}g", ".gitmodule\u{17f}", ".npmrc\u{200c}",
        "\u{feff}.git/config", ".g\u{200d}it/HEAD", ".envr\u{202e}c", "sub/.\u{206a}vscode/tasks.json", ".Gitcon\u{FB01}G", ".ZPRO\u{FB01}LE",
        ".MCP.j\u{17f}on", ".ide\u{200f}a/workspace.xml",
    ] {
        assert!(!prof.may_write(&s(&ws.join(rel))), "{rel:?} is refused");
    }
    // Only those names: the same letters in another name, and packages' own, stay writable.
    for rel in [".v\u{17f}codex/x", "node_modules/p/.v\u{17f}code/x", "sub/\u{17f}rc", "caf\u{e9}\u{200c}.txt", "\u{645}\u{200c}\u{6cc}.md"] {
        assert!(prof.may_write(&s(&ws.join(rel))), "{rel:?} is writable");
    }
    let home = top.join("Users/me");
    fs::create_dir_all(home.join("proj")).unwrap();
    fs::create_dir_all(home.join("Library")).unwrap();
    let _home = test_home::set(home.clone());
    let prof = workspace_write(&home);
    for rel in [
        ".s\u{17f}h/authorized_keys", ".\u{df}h/authorized_keys", ".\u{1e9e}H/config", ".con\u{fb01}g/git/config",
        "Library/LaunchAgent\u{17f}/x.plist", "Library/Launch\u{200c}Agents/x.plist",
    ] {
        assert!(!prof.may_write(&s(&home.join(rel))), "~/{rel:?} is refused");
    }
    for rel in ["proj/.s\u{17f}h/x", "proj/\u{fb01}le"] {
        assert!(prof.may_write(&s(&home.join(rel))), "~/{rel:?} is writable");
    }
}

#[test]
fn case_variants_of_missing_home_paths_are_refused_at_their_depth_only() {
    let (_t, top) = tmp();
    let home = top.join("Users/me");
    fs::create_dir_all(home.join("proj")).unwrap();
    fs::create_dir_all(home.join("Library")).unwrap(); // always there on a Mac
    let _home = test_home::set(home.clone());
    let prof = workspace_write(&home);
    for rel in [".ssh/authorized_keys", ".SSH/authorized_keys", ".Config/git/config", ".config/GIT/config", ".Local/bin/git", "BIN/git", "library/launchagents/x.plist"] {
        assert!(!prof.may_write(&s(&home.join(rel))), "~/{rel} is refused");
    }
    // The same names deeper are not the home's: a project's bin or .ssh stays writable.
    for rel in ["proj/bin/x", "proj/BIN/x", "proj/.SSH/x", "proj/Library/LaunchAgents/x", "Library/Logs/x.log", "notes.txt"] {
        assert!(prof.may_write(&s(&home.join(rel))), "~/{rel} is writable");
    }
}

#[test]
fn macos_home_paths_are_kept_when_a_writable_root_holds_the_home() {
    let (_t, top) = tmp();
    let home = top.join("Users/me");
    for d in ["Library/LaunchAgents", "Library/Application Support/Code/User", "Library/Preferences", "Library/Caches", ".ssh"] {
        fs::create_dir_all(home.join(d)).unwrap();
    }
    let _home = test_home::set(home.clone());
    let prof = workspace_write(&home);
    for rel in [
        "Library/LaunchAgents",
        "Library/LaunchAgents/com.evil.plist",
        "Library/Application Support/Code/User/settings.json",
        "Library/Application Support/Code/User/tasks.json",
        "Library/Application Support/Cursor/User/settings.json",
        "Library/Application Support/Claude/claude_desktop_config.json",
        "Library/Application Support/iTerm2/Scripts/AutoLaunch/x.py",
        "Library/Preferences/com.apple.Terminal.plist",
        "Library/Services/x.workflow/Contents/document.wflow",
        "Library/Workflows/x",
        "Library/Scripts/x.scpt",
        "Library/Keychains/login.keychain-db",
        "Library/Python/3.12/lib/python/site-packages/x.pth",
        ".ssh/authorized_keys",
    ] {
        assert!(!prof.may_write(&s(&home.join(rel))), "~/{rel} is refused");
    }
    for rel in ["Library/Caches/com.example.app/x", "Library/Caches", "Library/Logs/x.log", "code/x.rs"] {
        assert!(prof.may_write(&s(&home.join(rel))), "~/{rel} stays writable");
    }
    // A tool cache that does not exist yet is refused in a plan another program runs, as an
    // existing one is read-only: nobody moves aside after it what the command made there (the
    // runner's own runs let the tools create it, see `tool_caches::held_home`).
    assert!(!prof.may_write(&s(&home.join("Library/Caches/pip/http/x"))), "~/Library/Caches/pip is refused");
    // On Linux the macOS list is not the home's (a Linux home has no such paths to keep).
    let linux = policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only"}), &home, Platform::Linux);
    assert!(!linux.writable_roots[0].read_only.iter().chain(linux.writable_roots[0].missing_read_only.iter().map(|m| &m.path)).any(|p| p.starts_with(home.join("Library"))));
}

#[test]
fn posix_semaphores_only_under_python_multiprocessing_names() {
    let (_t, top) = tmp();
    for mode in ["read-only", "workspace-write"] {
        let p = policy_as_given(json!({"mode": mode, "tmp": "read-only"}), &top, Platform::Darwin);
        let prof = darwin(&p, &top);
        // The operation as the profile names it (Codex's name for every semaphore operation).
        assert!(prof.allows("ipc-posix-sem", Target::IpcName("/mp-k2j8x9qa")), "{mode}: multiprocessing's");
        for other in ["/host-lock", "/com.apple.x", "mp-x", "/mpx", "/psm_x"] {
            assert!(!prof.allows("ipc-posix-sem", Target::IpcName(other)), "{mode}: {other}");
        }
    }
}

/// parity17: a writable root nested in another (the cwd a package, `writableRoots` the monorepo; or
/// a workspace in `/tmp` with the default `tmp: 'writable'`) keeps its carve-outs only in its own
/// clause of `(allow file-write* ...)`: the outer root's clause allows them.
#[test]
fn parity17_carve_outs_of_a_nested_root_stay_read_only() {
    let (_t, top) = tmp();
    let (mono, pkg) = (top.join("mono"), top.join("mono/pkg"));
    for d in [".git/hooks", ".husky/_", "ro", "tools", "scripts"] {
        fs::create_dir_all(pkg.join(d)).unwrap();
    }
    fs::write(pkg.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(pkg.join(".git/config"), "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../tools/gitconfig\n").unwrap();
    fs::write(pkg.join("tools/gitconfig"), "[user]\n").unwrap();
    fs::write(pkg.join("scripts/pre-commit"), "#!/bin/sh\n").unwrap();
    std::os::unix::fs::symlink("../../scripts/pre-commit", pkg.join(".git/hooks/pre-push")).unwrap();
    let ro = s(&pkg.join("ro"));
    let alone = darwin(&policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only", "readOnlyPaths": [ro]}), &pkg, Platform::Darwin), &pkg);
    let nested = darwin(&policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only", "readOnlyPaths": [ro], "writableRoots": [s(&mono)]}), &pkg, Platform::Darwin), &pkg);
    for rel in [".husky/_/pre-commit", "ro/x", "tools/gitconfig", "scripts/pre-commit"] {
        assert!(!alone.may_write(&s(&pkg.join(rel))), "{rel}: refused with the package alone");
        assert!(!nested.may_write(&s(&pkg.join(rel))), "{rel}: refused when the monorepo is a writable root too");
    }
}

/// parity17: in the runner's own runs (`Absent::UndoneAfter`) a missing home path below a missing
/// directory is carved by its whole path (`~/.config/git`), so the profile lets the command make
/// `~/.config` whole by renaming a directory it filled into place (undone only after the run).
#[test]
fn parity17_missing_home_path_by_renaming_a_directory_above_it() {
    let (_t, top) = tmp();
    let home = top.join("Users/me");
    fs::create_dir_all(home.join("Library")).unwrap();
    let _home = test_home::set(home.clone());
    let mut p = crate::policy::resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "read-only"})), &crate::policy::PolicyContext { cwd: home.clone(), tmpdir: None, platform: Platform::Darwin, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::UndoneAfter);
    let prof = darwin(&p, &home);
    let missing: Vec<String> = p.writable_roots.iter().flat_map(|r| r.missing_read_only.iter()).map(|m| s(&m.path)).filter(|m| m.contains(".config")).collect();
    eprintln!("missing carve-outs under .config: {missing:?}");
    assert!(!prof.may_write(&s(&home.join(".config/git/config"))), "writing ~/.config/git/config directly is refused");
    // mkdir -p staging/git && echo ... > staging/git/config && mv staging .config
    for (op, rel) in [("file-write-create", "staging/git/config"), ("file-write-unlink", "staging"), ("file-write-create", ".config")] {
        assert!(!prof.allows(op, crate::plan::seatbelt_eval::Target::Path(&s(&home.join(rel)))) || rel.starts_with("staging"), "{op} {rel}: the rename into ~/.config is allowed");
    }
}

/// parity17, the home variant: the cwd `~/dotfiles` (a stow layout, `~/.bashrc` a link into it)
/// with `writableRoots: [~]`. The link's target is kept read-only in the cwd's clause; the home's
/// clause allowed it.
#[test]
fn parity17_a_home_link_s_target_stays_read_only_when_the_home_is_a_writable_root_too() {
    let (_t, top) = tmp();
    let home = top.join("Users/me");
    let dots = home.join("dotfiles");
    fs::create_dir_all(&dots).unwrap();
    fs::create_dir_all(home.join("Library")).unwrap();
    fs::write(dots.join("bashrc"), "export A=1\n").unwrap();
    std::os::unix::fs::symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
    let _home = test_home::set(home.clone());
    let alone = workspace_write(&dots);
    let nested = darwin(&policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [s(&home)]}), &dots, Platform::Darwin), &dots);
    let target = s(&dots.join("bashrc"));
    assert!(!alone.may_write(&target), "refused with ~/dotfiles alone");
    assert!(!nested.may_write(&target), "refused when the home is a writable root too");
    assert!(nested.may_write(&s(&dots.join("notes"))) && nested.may_write(&s(&home.join("notes"))), "the rest stays writable");
    // The cwd cannot be renamed out of its rules into the home's clause (as bwrap pins it).
    assert!(!nested.allows("file-write-unlink", Target::Path(&s(&dots))), "~/dotfiles can be renamed away");
}

/// APFS compares names normalization-insensitively: a name created decomposed (`u` + U+0308) is
/// the composed `ü` to every later lookup, and the other way round. A protected name or a missing
/// `readOnlyPaths` entry with a letter outside ASCII must be refused in both spellings (found by an
/// attacker's review, seat40: only the spelling given was).
#[test]
fn decomposed_and_composed_spellings_of_protected_names_and_carve_outs_are_refused() {
    let (_t, top) = tmp();
    let ws = top.join("ws");
    fs::create_dir_all(ws.join("sub")).unwrap();
    for (given, other) in [("caf\u{e9}.json", "cafe\u{301}.json"), ("cafe\u{301}.json", "caf\u{e9}.json")] {
        let ro = ws.join(format!("\u{dc}ber-{given}"));
        let p = policy_as_given(
            json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": [given], "readOnlyPaths": [s(&ro)]}),
            &ws,
            Platform::Darwin,
        );
        let prof = darwin(&p, &ws);
        for rel in [given.to_string(), other.to_string(), format!("sub/{other}"), "sub/CAFE\u{301}.JSON".into(), "sub/CAF\u{c9}.json".into()] {
            assert!(!prof.may_write(&s(&ws.join(&rel))), "{given:?}: {rel:?} is refused");
        }
        for rel in [format!("\u{dc}ber-{other}"), format!("U\u{308}ber-{other}/x"), format!("u\u{308}BER-{given}"), format!("\u{fc}ber-{given}/x")] {
            assert!(!prof.may_write(&s(&ws.join(&rel))), "{given:?}: {rel:?} is refused");
        }
        for rel in ["sub/cafe.json", "sub/caf\u{e8}.json", "sub/cafe\u{300}.json", "U\u{308}ber-x"] {
            assert!(prof.may_write(&s(&ws.join(rel))), "{given:?}: {rel:?} is writable");
        }
    }
}

/// Seatbelt judges an existing entry by the name stored on disk, and APFS stores a name in the
/// normalization it was created with (Finder and Cocoa's file-system representation: decomposed).
/// A `denyRead` or `readOnlyPaths` entry given composed must hold for the decomposed spelling too
/// (found by an attacker's review, seat40: `Privé` denied, `Prive\u{301}/key` readable).
#[test]
fn deny_read_and_read_only_paths_hold_in_their_decomposed_spelling() {
    let (_t, top) = tmp();
    let ws = top.join("ws");
    let (secret, frozen) = (ws.join("Priv\u{e9}"), ws.join("Ge\u{e4}ndert"));
    fs::create_dir_all(&secret).unwrap();
    fs::create_dir_all(&frozen).unwrap();
    let p = policy_as_given(
        json!({"mode": "workspace-write", "tmp": "read-only", "denyRead": [s(&secret)], "readOnlyPaths": [s(&frozen)]}),
        &ws,
        Platform::Darwin,
    );
    let prof = darwin(&p, &ws);
    for path in [secret.join("key"), ws.join("Prive\u{301}/key"), ws.join("Prive\u{301}")] {
        assert!(!prof.may_read(&s(&path)) && !prof.may_write(&s(&path)), "{path:?} is denied");
    }
    for path in [frozen.join("x"), ws.join("Gea\u{308}ndert/x")] {
        assert!(prof.may_read(&s(&path)) && !prof.may_write(&s(&path)), "{path:?} is read-only");
    }
    assert!(prof.may_read(&s(&ws.join("Prive/key"))) && prof.may_write(&s(&ws.join("Geandert/x"))));
}

/// macOS reaches the data volume's firmlinked folders both at `/Users/...` and at
/// `/System/Volumes/Data/Users/...`; the kernel names an entry by the first (firmlinks resolved).
/// A `denyRead` entry given by the second spelling must hold for the first (found by an attacker's
/// review, seat40: only the spelling given was denied; the kernel's spelling is unverified on a Mac).
#[test]
fn deny_read_given_through_the_data_volume_holds_at_the_firmlinked_path() {
    let (_t, top) = tmp();
    let ws = top.join("ws");
    fs::create_dir_all(&ws).unwrap();
    let mut p = policy_as_given(json!({"mode": "workspace-write", "tmp": "read-only"}), &ws, Platform::Darwin);
    // As resolution keeps it on a Mac, where it exists (a missing denyRead entry is dropped here).
    p.deny_read.push(PathBuf::from("/System/Volumes/Data/Users/me/.aws"));
    let prof = darwin(&p, &ws);
    for path in ["/Users/me/.aws/credentials", "/System/Volumes/Data/Users/me/.aws/credentials"] {
        assert!(!prof.may_read(path), "{path} is denied");
    }
    assert!(prof.may_read("/Users/me/.awsx") && prof.may_read("/System/Volumes/Data/Users/me/x"));
}
