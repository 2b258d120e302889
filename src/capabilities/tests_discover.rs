//! The PATH trust rule's directory part: a bwrap on PATH is used only from the system's own program
//! directories or a Nix/Guix store, because for root every file a run writes is root's (found by
//! review: a root run planted `<monorepo>/node_modules/.bin/bwrap`, and a later `npm run` in a
//! package below it executed that on the host).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::discover::{distrust, is_system_program_dir, Trust};

fn trust() -> Trust {
    Trust { home: Some("/nonexistent-home".into()), temp: vec![] }
}

#[test]
fn a_path_bwrap_outside_the_system_program_directories_is_refused() {
    // A real file, root's when the tests run as root, in a workspace-like place outside HOME and
    // the temporary directories (the crate's target directory): what a root run could have planted.
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    fs::create_dir_all(&base).unwrap();
    let mono = tempfile::tempdir_in(&base).unwrap();
    fs::set_permissions(mono.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let bin = mono.path().join("node_modules/.bin");
    fs::create_dir_all(&bin).unwrap();
    for d in [mono.path().join("node_modules"), bin.clone()] {
        fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let planted = bin.join("bwrap");
    fs::write(&planted, "#!/bin/sh\nexit 1\n").unwrap();
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    let planted = fs::canonicalize(&planted).unwrap();
    let why = distrust(&planted, &trust()).expect("a bwrap in <workspace>/node_modules/.bin was trusted");
    assert!(why.contains("system program directory") && why.contains("SANDSPAWN_BWRAP=/path/to/bwrap"), "{why}");

    // The same shapes without real files: the rule is decided by the directory before anything else.
    for p in ["/usr/src/app/node_modules/.bin/bwrap", "/work/x/node_modules/.bin/bwrap", "/opt/bubblewrap/bin/bwrap", "/usr/libexec/bwrap"] {
        let why = distrust(Path::new(p), &trust()).unwrap_or_else(|| panic!("{p} was trusted"));
        assert!(why.contains("system program directory"), "{p}: {why}");
    }
    // Root's own /usr/bin (/usr/bin/env stands for /usr/bin/bwrap on every host) passes.
    assert_eq!(distrust(Path::new("/usr/bin/env"), &trust()), None);
}

#[test]
fn the_system_program_directories_and_the_nix_and_guix_stores() {
    for d in ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/local/sbin", "/nix/store/abc-bubblewrap-0.8.0/bin", "/gnu/store/abc-bubblewrap-0.8.0/bin"] {
        assert!(is_system_program_dir(Path::new(d)), "{d}");
    }
    for d in ["/usr", "/usr/src/app/node_modules/.bin", "/usr/local", "/opt/bin", "/nix/store/bin", "/nix/store/x/y/bin", "/nix/store/x/sbin", "/work/nix/store/x/bin", "/usr/bin/sub", "/run/current-system/sw/bin"] {
        assert!(!is_system_program_dir(Path::new(d)), "{d}");
    }
}

#[test]
fn a_path_bwrap_with_another_hard_link_is_refused() {
    // Found by an attacker's review (with SANDSPAWN_BWRAP): a run that may write another name of
    // the file rewrites it in place. perf's build-id cache (`~/.debug/usr/bin/bwrap/<id>/elf`) is
    // such a name for root.
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    fs::create_dir_all(&base).unwrap();
    let top = tempfile::tempdir_in(&base).unwrap();
    fs::set_permissions(top.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let file = fs::canonicalize(top.path()).unwrap().join("bwrap");
    fs::write(&file, "").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
    // The ownership part alone (the directory part would refuse this place first).
    let why = || super::discover::not_roots_alone(&file, &trust());
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(why(), None);
    }
    fs::hard_link(&file, top.path().join("other-name")).unwrap();
    assert!(why().is_some_and(|w| w.contains("2 hard links")), "{:?}", why());
}
