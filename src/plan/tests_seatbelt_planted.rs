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
