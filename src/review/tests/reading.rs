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
