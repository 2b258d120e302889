//! The command's environment as part of its tool caches' scope key (`scope::of`, through the
//! policy's confinement). Found by an attacker's review (cross40): the key held the writable roots
//! and what else confines a run, not what the run is given. A run given a small environment
//! (`extendEnv: false`, as a host gives a model's command) planted a tool in `~/.npm/_npx`, and a
//! run of the same roots and confinement given a token besides (a publish, a deploy: the host's
//! own command) ran it, the planted code holding the token. A variable is a capability as a
//! readable path is (a token, a socket's path, `LD_PRELOAD`, `PATH`), and which ones are cannot be
//! listed: every variable counts, by name and value, but the few a shell changes between any two
//! commands it runs.

use std::collections::BTreeMap;

/// What a shell changes by itself between two commands: its directory before and after a `cd`
/// (the cwd is the key's already, as a root or inside one), its nesting, the last command's path,
/// and the terminal's size and type (`TERM`, which a `pty` run is given: a terminfo entry's name,
/// not the path of one, `TERMINFO`). None names a capability; counted, each `cd` of a CLI user's
/// shell, a resized terminal or a run with a `pty` would have started cold caches of its own.
const SHELL_BOOKKEEPING: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM"];

/// SHA-256 of each name and value of `env` (sorted, the shell's bookkeeping left out), in hex: the
/// key holds no value itself (it is written in the scope's `roots` file).
pub fn of(env: &BTreeMap<String, String>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (name, value) in env.iter().filter(|(k, _)| !SHELL_BOOKKEEPING.contains(&k.as_str())) {
        // A name holds no '=' nor NUL, a value no NUL (`options`): the pairs cannot run together.
        h.update(name.as_bytes());
        h.update(b"=");
        h.update(value.as_bytes());
        h.update(b"\0");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn every_variable_counts_but_the_shell_s_bookkeeping() {
        let small = env(&[("HOME", "/h"), ("PATH", "/usr/bin")]);
        let key = super::of(&small);
        assert_eq!(key.len(), 64);
        assert!(!key.contains("/usr/bin"), "no value is written");
        assert_ne!(super::of(&env(&[("HOME", "/h"), ("PATH", "/usr/bin"), ("DEPLOY_TOKEN", "t")])), key, "a variable more");
        assert_ne!(super::of(&env(&[("HOME", "/h"), ("PATH", "/opt/x:/usr/bin")])), key, "another value");
        assert_ne!(super::of(&env(&[("HOME", "/h"), ("PATH", "/usr/bin"), ("TOKEN", "")])), key, "an empty one too");
        assert_ne!(super::of(&env(&[("HOME", "/h=PATH"), ("P", "/usr/bin")])), super::of(&env(&[("HOME", "/h"), ("PATH", "/usr/bin")])), "pairs do not run together");
        let shell = env(&[("HOME", "/h"), ("PATH", "/usr/bin"), ("PWD", "/w"), ("OLDPWD", "/x"), ("SHLVL", "2"), ("_", "/usr/bin/node"), ("COLUMNS", "80"), ("LINES", "24"), ("TERM", "xterm-256color")]);
        assert_eq!(super::of(&shell), key, "the shell's bookkeeping does not count");
        assert_ne!(super::of(&env(&[("HOME", "/h"), ("PATH", "/usr/bin"), ("TERMINFO", "/w/ti")])), key, "a terminfo path does");
    }
}
