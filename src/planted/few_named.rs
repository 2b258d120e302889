//! The names a `hostRisks` detail lists: a few, then how many more. A run controls how many names
//! there are (hooks in a directory, keys in a configuration) and how long each is (a config's
//! subsection name is as long as its file). Found by an attacker's review (cross26): each new
//! repository's `hooks-written` detail named every hook of a hooks directory they all shared, and
//! 40 repositories over 20,000 links with 247-byte names made 199 MB of `hostRisks`.
//!
//! With every list bounded here, a detail holds at most `MAX_NAMED` names of `MAX_NAME_BYTES` and a
//! few paths (each at most PATH_MAX): no length bound on a whole detail is needed on top.

use std::collections::BTreeSet;

/// At most this many names in one list of a detail.
pub const MAX_NAMED: usize = 16;

/// At most this many bytes of one name (a file name has at most 255): a longer one is cut, with `…`.
pub const MAX_NAME_BYTES: usize = 256;

/// The first `MAX_NAMED` distinct names by order, kept as names are added one at a time, and how
/// many were added: never more than `MAX_NAMED` names held, however many come.
#[derive(Debug, Default)]
pub struct Fewest {
    first: BTreeSet<String>,
    count: usize,
}

impl Fewest {
    pub fn add(&mut self, name: String) {
        self.count += 1;
        if self.first.len() == MAX_NAMED && self.first.last().is_some_and(|last| *last <= name) {
            return;
        }
        self.first.insert(name);
        if self.first.len() > MAX_NAMED {
            self.first.pop_last();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The names kept, then how many more (`said`).
    pub fn said(&self) -> String {
        said(self.first.iter(), self.count)
    }
}

/// `names` as a detail says them (`said`), all of them counted.
pub fn listed(names: &[String]) -> String {
    said(names.iter(), names.len())
}

/// The first `MAX_NAMED` of `names`, each cut to `MAX_NAME_BYTES`, then "and K more" of `count` in all.
pub fn said<'a>(names: impl Iterator<Item = &'a String>, count: usize) -> String {
    let named: Vec<String> = names.take(MAX_NAMED).map(|n| shown(n)).collect();
    let shown = named.join(", ");
    match count.saturating_sub(named.len()) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// The first `MAX_NAMED` of `lines` (a result's `notEnforced` lines, one per file a run can
/// multiply), then `rest(k)` for the `k` more of `count` in all. Found by an attacker's review
/// (cross32): a run made 6,000 repositories whose config and hook were hard links of one file each,
/// and every later run's result said 12,000 lines, megabytes of every result.
pub fn lines(lines: &mut dyn Iterator<Item = String>, count: usize, rest: impl FnOnce(usize) -> String) -> Vec<String> {
    let mut out: Vec<String> = lines.take(MAX_NAMED).collect();
    if count > out.len() {
        out.push(rest(count - out.len()));
    }
    out
}

/// `name`, or its first `MAX_NAME_BYTES` (less, to end on a character) and `…` when longer.
pub fn shown(name: &str) -> String {
    if name.len() <= MAX_NAME_BYTES {
        return name.to_string();
    }
    let mut end = MAX_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &name[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_the_bound_are_counted_in_one() {
        let many = (0..1000).map(|i| format!("line {i}"));
        let said = lines(&mut many.into_iter(), 1000, |k| format!("{k} more"));
        assert_eq!((said.len(), said[0].as_str(), said[MAX_NAMED].as_str()), (MAX_NAMED + 1, "line 0", "984 more"));
        let few = lines(&mut ["a".to_string()].into_iter(), 1, |k| format!("{k} more"));
        assert_eq!(few, vec!["a"]);
    }

    #[test]
    fn a_few_names_are_said_in_order_and_the_rest_counted() {
        let mut f = Fewest::default();
        assert!(f.is_empty());
        for i in (0..1_000).rev() {
            f.add(format!("h{i:04}"));
        }
        assert_eq!(f.first.len(), MAX_NAMED, "no more held than said");
        let s = f.said();
        assert!(s.starts_with("h0000, h0001, ") && s.ends_with("h0015 and 984 more"), "{s}");
        assert_eq!(listed(&["a".into(), "b".into()]), "a, b");
    }

    #[test]
    fn a_long_name_is_cut_on_a_character() {
        let long = format!("a{}", "é".repeat(1_000));
        let s = listed(&[long]);
        assert!(s.len() <= MAX_NAME_BYTES + "…".len() && s.ends_with('…'), "{} bytes", s.len());
        assert_eq!(listed(&["x".repeat(MAX_NAME_BYTES)]), "x".repeat(MAX_NAME_BYTES));
    }
}
