//! The running kernel's release, for the features a release number tells apart where nothing else
//! does without risk (`task_budget`: before 6.14 the file it writes is the host's global one).

/// The running kernel's release (`uname -r`), empty if it cannot be had.
pub fn running() -> String {
    // SAFETY: utsname is plain data, filled by uname; its fields are NUL-terminated.
    unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut name) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(name.release.as_ptr()).to_string_lossy().into_owned()
    }
}

/// Whether `release` (as `uname -r` gives it) is `major.minor` or later; an unreadable one is not.
pub fn at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit()).map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_compare_by_major_then_minor() {
        for (release, expected) in [("6.18.44-fc-v1272", true), ("6.14.0", true), ("7.0.1-arch1", true), ("6.13.12", false), ("5.15.0-105-generic", false), ("4.18.0-553.el8_10.x86_64", false), ("", false), ("garbage", false)] {
            assert_eq!(at_least(release, 6, 14), expected, "{release}");
        }
        assert!(!running().is_empty());
    }
}
