//! Signal names as Node.js spells them (`'SIGTERM'`), and the reverse mapping for results.

use nix::sys::signal::Signal;

/// Parse `'SIGTERM'` (or a signal number, as Node also accepts) into a signal.
pub fn parse_signal(name: &str) -> Option<Signal> {
    if let Ok(n) = name.parse::<i32>() {
        return Signal::try_from(n).ok();
    }
    if !name.starts_with("SIG") {
        return None;
    }
    name.parse::<Signal>().ok()
}

pub fn signal_from_number(n: i32) -> Option<Signal> {
    Signal::try_from(n).ok()
}

pub fn signal_name(sig: Signal) -> &'static str {
    sig.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_numbers() {
        assert_eq!(parse_signal("SIGTERM"), Some(Signal::SIGTERM));
        assert_eq!(parse_signal("SIGKILL"), Some(Signal::SIGKILL));
        assert_eq!(parse_signal("9"), Some(Signal::SIGKILL));
        assert_eq!(parse_signal("TERM"), None);
        assert_eq!(parse_signal("SIGNOPE"), None);
        assert_eq!(parse_signal(""), None);
        assert_eq!(signal_name(Signal::SIGSEGV), "SIGSEGV");
    }
}
