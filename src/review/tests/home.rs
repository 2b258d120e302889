//! The host user's home in a reviewed root (a cwd of `$HOME`, a `HOME` inside the workspace): what
//! the host runs or trusts there (`planted::home`, the protected names at the home) is judged on
//! the set, as a direct run finds it read-only. Before, a run wrote `~/.ssh/authorized_keys` and
//! `~/.config/git/config` into the set with no risk, and a plain apply landed them. The home is
//! the one recorded with the set: the process applying it may have another `HOME`.

use super::*;
use crate::planted::RiskKind;

/// A set over a workspace holding the host's home `ws/home` (with `.ssh/authorized_keys` and
/// `.config`, then what `host` makes in the workspace), recorded as its runs saw it.
fn home_in_workspace(host: impl FnOnce(&Path, &Path)) -> (Fixture, PathBuf) {
    let mut f = fixture();
    let home = f.ws.join("home");
    put(&home, ".ssh/authorized_keys", "mine\n");
    std::fs::create_dir(home.join(".config")).unwrap();
    host(&f.ws, &home);
    begin_now(&mut f);
    f.set.meta.homes = vec![home.clone()];
    f.set.meta.config_homes = vec![home.join(".config")];
    (f, home)
}

fn protected_at(risks: &[(String, RiskKind)], at: &str) -> bool {
    risks.iter().any(|(p, k)| p == at && *k == RiskKind::ProtectedNameCreated)
}

#[test]
fn what_the_host_runs_from_a_home_in_the_root_is_a_risk_held_back() {
    let (f, home) = home_in_workspace(|_, _| {});
    let up = f.set.upper(0);
    put(&up, "home/.ssh/authorized_keys", "mine\nattacker\n");
    put(&up, "home/.config/git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
    put(&up, "home/.local/bin/git", "#!/bin/sh\n");
    put(&up, "home/.envrc", "x\n");
    put(&up, "free.txt", "ok\n");
    let risks = risks_of(&f);
    for at in ["/home/.ssh", "/home/.config/git", "/home/.local/bin", "/home/.envrc"] {
        assert!(protected_at(&risks, at), "{at}: {risks:?}");
    }
    // `.local`, made at the home's top, is one too (`review::home_config`): beyond the held list.
    assert!(protected_at(&risks, "/home/.local"), "{risks:?}");
    assert_eq!(risks.len(), 5, "{risks:?}");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    // `.local` held back whole holds `.local/bin` with it.
    assert_eq!(out.held_back.len(), 4, "{out:?}");
    assert_eq!(std::fs::read_to_string(home.join(".ssh/authorized_keys")).unwrap(), "mine\n");
    for planted in [".config/git", ".local/bin", ".envrc"] {
        assert!(home.join(planted).symlink_metadata().is_err(), "{planted} landed");
    }
    assert_eq!(std::fs::read_to_string(f.ws.join("free.txt")).unwrap(), "ok\n");
}

#[test]
fn a_home_path_swapped_from_above_or_reached_through_a_link_is_a_risk() {
    // The host's `.ssh` leads to the workspace's `keys`: written there, it is what sshd reads.
    let (f, home) = home_in_workspace(|ws, home| {
        put(ws, "keys/authorized_keys", "mine\n");
        std::fs::remove_dir_all(home.join(".ssh")).unwrap();
        std::os::unix::fs::symlink("../keys", home.join(".ssh")).unwrap();
    });
    let up = f.set.upper(0);
    put(&up, "keys/authorized_keys", "mine\nattacker\n");
    // `.config` replaced by a link to a copy holding `git/config`.
    std::fs::create_dir_all(up.join("home")).unwrap();
    std::os::unix::fs::symlink("cfg", up.join("home/.config")).unwrap();
    put(&up, "home/cfg/git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
    let risks = risks_of(&f);
    assert!(protected_at(&risks, "/keys"), "{risks:?}");
    assert!(protected_at(&risks, "/home/.config"), "{risks:?}");
    assert!(protected_at(&risks, "/home/cfg/git"), "where the swapped .config leads in the set: {risks:?}");
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(std::fs::read_to_string(f.ws.join("keys/authorized_keys")).unwrap(), "mine\n");
    assert!(home.join(".config").symlink_metadata().unwrap().is_dir(), ".config stays the host's directory");
}

/// An attacker's review (review mode too): the set linked a toolchain into the home's `.rustup` and
/// made it rustup's default, and a plain apply landed it (the host's next `cargo` ran it).
#[test]
fn rustup_and_ipythons_config_in_a_home_are_risks() {
    let (f, _home) = home_in_workspace(|_, home| put(home, ".rustup/settings.toml", "default_toolchain = \"stable\"\n"));
    let up = f.set.upper(0);
    put(&up, "home/.rustup/settings.toml", "default_toolchain = \"dev\"\n");
    put(&up, "home/.rustup/toolchains/dev/bin/cargo", "#!/bin/sh\n");
    put(&up, "home/.ipython/profile_default/ipython_config.py", "import os\n");
    put(&up, "home/.config/mimeapps.list", "[Default Applications]\n");
    let risks = risks_of(&f);
    for at in ["/home/.rustup", "/home/.ipython", "/home/.config/mimeapps.list"] {
        assert!(protected_at(&risks, at), "{at}: {risks:?}");
    }
}

/// An attacker's review: files the host's global git configuration includes, inside the root
/// (`~/.gitconfig.local`, a dotfiles checkout `~/.gitconfig` includes or links to), took a run's
/// `core.fsmonitor` and a plain apply landed it (the host's next `git status` anywhere ran it).
#[test]
fn files_the_global_git_configuration_reads_are_risks() {
    let (f, home) = home_in_workspace(|ws, home| {
        put(home, ".gitconfig", "[include]\n\tpath = ~/.gitconfig.local\n\tpath = ~/dots.inc\n");
        put(ws, "dots/linked", "");
        std::os::unix::fs::symlink(ws.join("dots/linked"), home.join("dots.inc")).unwrap();
    });
    let _home = crate::planted::home::test_home::set(home.clone());
    let up = f.set.upper(0);
    put(&up, "home/.gitconfig.local", "[core]\n\tfsmonitor = /x\n");
    put(&up, "dots/linked", "[core]\n\tfsmonitor = /x\n");
    let risks = risks_of(&f);
    assert!(protected_at(&risks, "/home/.gitconfig.local"), "{risks:?}");
    assert!(protected_at(&risks, "/dots/linked"), "{risks:?}");
}

/// An attacker's review: the global `init.templateDir` (a dotfiles link into the workspace) and an
/// absolute global `core.hooksPath`, in a root with no repository, took a run's hooks with
/// `hostRisks` empty, and a plain apply landed them (the host's next `git clone`/`commit` ran them).
#[test]
fn the_global_template_directory_and_hooks_path_are_risks() {
    let (f, home) = home_in_workspace(|ws, home| {
        put(home, ".gitconfig", "[init]\n\ttemplateDir = ~/.git_template\n[core]\n\thooksPath = ~/.githooks\n");
        put(ws, "dots/git_template/hooks/post-checkout", "#!/bin/sh\n");
        std::os::unix::fs::symlink(ws.join("dots/git_template"), home.join(".git_template")).unwrap();
    });
    let _home = crate::planted::home::test_home::set(home.clone());
    let up = f.set.upper(0);
    put(&up, "dots/git_template/hooks/post-checkout", "#!/bin/sh\nevil\n");
    put(&up, "home/.githooks/pre-commit", "#!/bin/sh\nevil\n");
    let risks = risks_of(&f);
    assert!(protected_at(&risks, "/dots/git_template"), "{risks:?}");
    assert!(protected_at(&risks, "/home/.githooks"), "{risks:?}");
}

/// An attacker's review (stow-style dotfiles, review mode): the home outside the root, its
/// `.bashrc`, `.ssh/config` and `bin` links into the reviewed `dotfiles`; only the global
/// `.gitconfig` was held back, and a plain apply landed the rest (the host's next interactive
/// shell ran the line). A program the global configuration names by path is held back too.
#[test]
fn home_paths_linked_into_the_root_are_risks() {
    let mut f = fixture();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().canonicalize().unwrap();
    put(&f.ws, "bash/.bashrc", "export PS1\n");
    put(&f.ws, "ssh/config", "Host *\n");
    put(&f.ws, "bin/hello", "#!/bin/sh\n");
    put(&f.ws, "tools/x", "");
    std::fs::create_dir(home.join(".ssh")).unwrap();
    std::os::unix::fs::symlink(f.ws.join("bash/.bashrc"), home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink(f.ws.join("ssh/config"), home.join(".ssh/config")).unwrap();
    std::os::unix::fs::symlink(f.ws.join("bin"), home.join("bin")).unwrap();
    put(&home, ".gitconfig", &format!("[core]\n\tpager = {}/tools/pager\n", f.ws.display()));
    begin_now(&mut f);
    f.set.meta.homes = vec![home.clone()];
    f.set.meta.protected_names = vec![".bashrc".into()];
    let _home = crate::planted::home::test_home::set(home.clone());
    let up = f.set.upper(0);
    put(&up, "bash/.bashrc", "export PS1\ntouch /tmp/pwned\n");
    put(&up, "ssh/config", "Host *\n  ProxyCommand sh -c boom\n");
    put(&up, "bin/fsmon", "#!/bin/sh\n");
    put(&up, "tools/pager", "#!/bin/sh\n");
    put(&up, "free.txt", "ok\n");
    let risks = risks_of(&f);
    for at in ["/bash/.bashrc", "/ssh/config", "/bin", "/tools/pager"] {
        assert!(protected_at(&risks, at), "{at}: {risks:?}");
    }
    assert_eq!(risks.len(), 4, "{risks:?}");
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(std::fs::read_to_string(f.ws.join("bash/.bashrc")).unwrap(), "export PS1\n");
    assert!(f.ws.join("bin/fsmon").symlink_metadata().is_err());
    assert_eq!(std::fs::read_to_string(f.ws.join("free.txt")).unwrap(), "ok\n");
}

/// An attacker's review (stow2.sh, review mode): `~/.config -> <ws>/cfg` and `~/.bashrc ->
/// <ws>/gone/.bashrc`, neither target there yet; the set's `cfg/git/config` (a `core.fsmonitor`)
/// and `gone/.bashrc` carried no risk and a plain apply landed them. Both are held back now.
#[test]
fn dangling_home_links_into_the_root_are_risks() {
    let mut f = fixture();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().canonicalize().unwrap();
    std::os::unix::fs::symlink(f.ws.join("gone/.bashrc"), home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink(f.ws.join("cfg"), home.join(".config")).unwrap();
    begin_now(&mut f);
    f.set.meta.homes = vec![home.clone()];
    f.set.meta.config_homes = vec![home.join(".config")];
    f.set.meta.protected_names = vec![".bashrc".into()];
    let _home = crate::planted::home::test_home::set(home.clone());
    let up = f.set.upper(0);
    put(&up, "gone/.bashrc", "touch /tmp/pwned\n");
    put(&up, "cfg/git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
    put(&up, "free.txt", "ok\n");
    let risks = risks_of(&f);
    for at in ["/gone/.bashrc", "/cfg/git"] {
        assert!(protected_at(&risks, at), "{at}: {risks:?}");
    }
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(f.ws.join("gone/.bashrc").symlink_metadata().is_err());
    assert!(f.ws.join("cfg/git/config").symlink_metadata().is_err());
    assert_eq!(std::fs::read_to_string(f.ws.join("free.txt")).unwrap(), "ok\n");
}

/// An attacker's review (linkchain.sh, review mode): `~/.bashrc -> <ws>/active/bashrc`, itself a
/// link to `../pkgs/bash/bashrc`; only the chain's end was guarded, and the set's
/// `ln -sf evil-bashrc active/bashrc` carried no risk: a plain apply landed it, and the host's
/// next interactive shell ran `evil-bashrc`. Each link on the way is guarded too.
#[test]
fn a_link_on_the_way_of_a_home_link_is_guarded() {
    let mut f = fixture();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().canonicalize().unwrap();
    put(&f.ws, "pkgs/bash/bashrc", "# mine\n");
    std::fs::create_dir(f.ws.join("active")).unwrap();
    std::os::unix::fs::symlink("../pkgs/bash/bashrc", f.ws.join("active/bashrc")).unwrap();
    std::os::unix::fs::symlink(f.ws.join("active/bashrc"), home.join(".bashrc")).unwrap();
    begin_now(&mut f);
    f.set.meta.homes = vec![home.clone()];
    f.set.meta.protected_names = vec![".bashrc".into()];
    let _home = crate::planted::home::test_home::set(home.clone());
    let up = f.set.upper(0);
    put(&up, "active/evil-bashrc", "touch /tmp/pwned\n");
    std::os::unix::fs::symlink("evil-bashrc", up.join("active/bashrc")).unwrap();
    let risks = risks_of(&f);
    assert!(protected_at(&risks, "/active/bashrc"), "{risks:?}");
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(std::fs::read_link(f.ws.join("active/bashrc")).unwrap(), PathBuf::from("../pkgs/bash/bashrc"));
}

/// An attacker's review (rfix23c): entries made two levels below the home's `.config` (lxsession's
/// `LXDE-pi/autostart`), one below a dot-directory at its top (`.mozilla/native-messaging-hosts`)
/// and two below `.local/share` (fish's `vendor_conf.d`) were not risks. Those on the held list
/// are; the rest within those depths are too (not deeper, not in `.cache`).
#[test]
fn entries_two_levels_down_in_a_homes_config_and_data_are_risks() {
    let dirs = [".config/lxsession/LXDE-pi", ".mozilla/native-messaging-hosts", ".local/share/fish/vendor_conf.d", ".config/tool/a/b", ".olddot/sub/deeper", ".local/share/app/sub/deeper", ".cache/tool/sub"];
    let (f, _home) = home_in_workspace(|_, home| dirs.iter().for_each(|d| std::fs::create_dir_all(home.join(d)).unwrap()));
    let up = f.set.upper(0);
    let reported = [".config/lxsession/LXDE-pi/autostart", ".mozilla/native-messaging-hosts/x.json", ".local/share/fish/vendor_conf.d/x.fish", ".config/tool/a/x", ".olddot/sub/x", ".local/share/app/sub/x"];
    let quiet = [".config/tool/a/b/x", ".olddot/sub/deeper/x", ".local/share/app/sub/deeper/x", ".cache/tool/sub/x", ".cache/new/x"];
    for p in reported.iter().chain(quiet.iter()) {
        put(&up, &format!("home/{p}"), "x\n");
    }
    let risks = risks_of(&f);
    let near = |p: &str| risks.iter().any(|(r, k)| *k == RiskKind::ProtectedNameCreated && Path::new(&format!("/home/{p}")).starts_with(r) && r.len() > "/home/.x".len());
    for p in reported {
        assert!(near(p), "{p}: {risks:?}");
    }
    for p in quiet {
        assert!(!near(p), "{p}: {risks:?}");
    }
}
