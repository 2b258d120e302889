//! Whether a wildcard of `allowedDomains` would span owners: its base is a public suffix (`co.uk`,
//! `github.io`, `s3.amazonaws.com`), under which each name belongs to someone else, so `*.co.uk`
//! allows every site of every company in the UK and `*.github.io` every user's GitHub Pages site
//! (found by an attacker's review, mode30: "at least two labels" let them through). Decided by the
//! Public Suffix List, both its ICANN and its PRIVATE section, as the `psl` crate compiles it (a
//! match on labels, refreshed with each release of the crate): no file is read and nothing is built
//! at run time, and a lookup costs well under a microsecond.

/// Why a base spans owners: which section of the list says so, and whether the base itself is a
/// public suffix or only every name directly under it is (a wildcard rule of the list: `*.ck`,
/// `*.kawasaki.jp`, where `*.kawasaki.jp` is every city's own suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpansOwners {
    pub section: &'static str,
    pub itself: bool,
}

/// The section whose suffixes are countries' and registries': a wildcard on one is refused.
pub const ICANN: &str = "ICANN";

/// A label no exception rule of the list names: exceptions (`!city.kawasaki.jp`) are real hosts,
/// and asking about this one tells whether the list's wildcard rule covers every child of a base.
const PROBE: &str = "sandspawn-wildcard-probe";

/// `Some` when a wildcard on `base` (lower-case ASCII, no trailing dot) spans owners.
pub fn spans_owners(base: &str) -> Option<SpansOwners> {
    if let Some(section) = public_suffix(base) {
        return Some(SpansOwners { section, itself: true });
    }
    public_suffix(&format!("{PROBE}.{base}")).map(|section| SpansOwners { section, itself: false })
}

/// The list's section when `name` is, all of it, a public suffix the list names (not one it
/// assumes by its default rule for an unknown top-level name, such as `internal` or `test`).
fn public_suffix(name: &str) -> Option<&'static str> {
    let suffix = psl::suffix(name.as_bytes())?;
    if suffix.as_bytes() != name.as_bytes() {
        return None;
    }
    match suffix.typ()? {
        psl::Type::Icann => Some(ICANN),
        psl::Type::Private => Some("PRIVATE"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_suffixes_and_their_wildcard_children() {
        for (base, section, itself) in [
            ("co.uk", "ICANN", true),
            ("com.au", "ICANN", true),
            ("github.io", "PRIVATE", true),
            ("s3.amazonaws.com", "PRIVATE", true),
            ("foo.ck", "ICANN", true),
            ("githubusercontent.com", "PRIVATE", true),
            ("kawasaki.jp", "ICANN", false),
            ("compute.amazonaws.com", "PRIVATE", false),
        ] {
            assert_eq!(spans_owners(base), Some(SpansOwners { section, itself }), "{base}");
        }
        for base in ["example.co.uk", "github.com", "user.github.io", "sandspawn.internal", "example.test", "www.ck", "city.kawasaki.jp", "registry.npmjs.org", "amazonaws.com"] {
            assert_eq!(spans_owners(base), None, "{base}");
        }
    }
}
