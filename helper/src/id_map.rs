//! Reading a user namespace's id map (`/proc/self/uid_map`): which id outside an id inside is.
//! The helper asks it to tell whether the host user is root (`blocked_carve_out`).

/// The id outside that `inside` maps to in `map` (lines of `inside-first outside-first count`), or
/// `None` where no line covers it.
pub fn outside_of(map: &str, inside: u32) -> Option<u32> {
    map.lines().find_map(|line| {
        let mut n = line.split_whitespace().map(|w| w.parse::<u64>().ok());
        let (Some(Some(first)), Some(Some(outside)), Some(Some(count))) = (n.next(), n.next(), n.next()) else { return None };
        let at = u64::from(inside);
        (first <= at && at < first + count).then(|| u32::try_from(outside + (at - first)).ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_outside_id_of_an_inside_one() {
        assert_eq!(outside_of("         0       1000          1\n", 0), Some(1000), "bwrap's one line as root inside");
        assert_eq!(outside_of("      1000       1000          1\n", 1000), Some(1000));
        assert_eq!(outside_of("         0          0 4294967295\n", 0), Some(0), "the initial namespace");
        assert_eq!(outside_of("0 100000 65536\n", 5), Some(100_005), "a range");
        assert_eq!(outside_of("0 1000 1\n", 1), None, "not mapped");
        assert_eq!(outside_of("garbage\n\n", 0), None);
    }
}
