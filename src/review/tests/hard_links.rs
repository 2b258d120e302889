//! A file the run linked under many names. Found by an attacker's review: a run wrote 16 MiB once
//! and linked it 100 times (17 MiB in its set), and apply copied the data once per name (1.6 GiB
//! on the host; with ext4's 65,000 links per inode, 1 GB in a set would have been 65 TB on apply).
//! Apply now lands the names of one file of the set as one file on the host.

use std::os::unix::fs::MetadataExt;

use super::*;

/// `names` of one file in the set's upper directory, `len` bytes of data, with `mode`.
fn linked(f: &Fixture, names: &[&str], len: usize, mode: u32) {
    let up = f.set.upper(0);
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
    put(&up, names[0], "");
    std::fs::write(up.join(names[0]), &data).unwrap();
    std::fs::set_permissions(up.join(names[0]), std::fs::Permissions::from_mode(mode)).unwrap();
    for n in &names[1..] {
        std::fs::create_dir_all(up.join(n).parent().unwrap()).unwrap();
        std::fs::hard_link(up.join(names[0]), up.join(n)).unwrap();
    }
}

#[test]
fn the_names_of_one_file_land_as_one_file() {
    let mut f = fixture();
    begin_now(&mut f);
    let mut names = vec!["big".to_string()];
    names.extend((0..50).map(|i| format!("l/d{}/f{i}", i % 3)));
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let len = 4 << 20;
    linked(&f, &names, len, 0o4755);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty() && out.held_back.is_empty(), "{out:?}");
    let first = std::fs::symlink_metadata(f.ws.join("big")).unwrap();
    assert_eq!((first.nlink(), first.len(), first.mode() & 0o7777), (51, len as u64, 0o755), "one file of 51 names, its set-id bits dropped");
    for n in &names {
        assert_eq!(std::fs::symlink_metadata(f.ws.join(n)).unwrap().ino(), first.ino(), "{n}");
    }
    let mut allocated = 0;
    for n in &names {
        allocated += std::fs::symlink_metadata(f.ws.join(n)).unwrap().blocks() * 512;
    }
    // Each name counts the one inode's blocks: one file's worth is `allocated / names`.
    assert!(allocated / names.len() as u64 <= len as u64 + (1 << 20), "{allocated}");
    assert!(!f.set.dir.exists(), "a set applied whole is removed");
}

/// The first name is held back (a protected name): the next one gets the data, the rest link to it.
#[test]
fn a_held_back_first_name_leaves_the_data_to_the_next() {
    let mut f = fixture();
    begin_now(&mut f);
    linked(&f, &[".envrc", "a", "b", "c"], 1000, 0o644);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(out.held_back.len(), 1, "{out:?}");
    assert!(!f.ws.join(".envrc").exists());
    let ino = |n: &str| std::fs::symlink_metadata(f.ws.join(n)).unwrap().ino();
    assert!(ino("a") == ino("b") && ino("b") == ino("c"));
    assert_eq!(std::fs::symlink_metadata(f.ws.join("a")).unwrap().nlink(), 3);
    assert_eq!(std::fs::read(f.ws.join("c")).unwrap().len(), 1000);
}

/// A host change to the first landed name meanwhile (replaced by another file) is not linked to:
/// the later name gets the set's data.
#[test]
fn a_landed_name_replaced_on_the_host_is_not_linked_to() {
    let mut f = fixture();
    begin_now(&mut f);
    linked(&f, &["a", "b"], 100, 0o644);
    let out = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("a")]), force: false }).unwrap();
    assert_eq!(out.applied.len(), 1);
    std::fs::remove_file(f.ws.join("a")).unwrap();
    std::fs::write(f.ws.join("a"), "host's own").unwrap();
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty(), "{out:?}");
    assert_eq!(std::fs::read(f.ws.join("b")).unwrap().len(), 100);
    assert_eq!(std::fs::read_to_string(f.ws.join("a")).unwrap(), "host's own");
}

/// The set's file under 20 names over the host's file under the same 20 names (the same bytes):
/// compared once, not once per name (each comparison of up to 256 MiB is the host's time).
#[test]
fn a_linked_file_over_a_linked_host_file_is_compared_once() {
    let mut f = fixture();
    let names: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let len = 4 << 20;
    linked(&f, &names, len, 0o644);
    let up = f.set.upper(0);
    std::fs::copy(up.join(names[0]), f.ws.join(names[0])).unwrap();
    for n in &names[1..] {
        std::fs::hard_link(f.ws.join(names[0]), f.ws.join(n)).unwrap();
    }
    begin_now(&mut f);
    let before = crate::review::changes::tests::bytes_read_by_this_thread();
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let read = crate::review::changes::tests::bytes_read_by_this_thread() - before;
    assert!(s.changes.is_empty(), "{:?}", s.changes);
    assert!(read < 4 * len as u64, "{read} bytes read to compare {} names of one file", names.len());
}
