//! A small evaluator of the SBPL sandspawn emits (tests only), so profiles are checked by what they
//! decide, not only by their text: "may the command do `file-write-create` on P?", "`file-read-data`
//! of P?", "`network-outbound` to this address and port?", "to this Unix socket?".
//!
//! What it reads: `(version 1)`, `(allow|deny OPERATION... FILTER...)` where several filters mean
//! any of them and none means all; the filters `literal`, `path`, `subpath` (a path and everything
//! below it), `regex` (`seatbelt_eval_regex`), `require-not`, `require-all`, `require-any`, `remote
//! ip "HOST:PORT"` (`localhost` or `*`; a port or `*`), `remote unix-socket` with an optional
//! `path-literal`, `local unix-socket`, `ipc-posix-name` with its `-prefix` and `-regex` forms; strings or `(param "NAME")` for the `-D` parameters.
//! Operations match exactly, by a trailing `*` as a prefix (`file-write*`; not `file-write-setugid`,
//! as on macOS 12.3 and later), or `default`. The last
//! rule that matches decides, as in Seatbelt. `extension` is a sandbox extension the command holds
//! (none, in every question). A filter it does not know (`vnode-type`,
//! `sysctl-name`, ...) is fine in a rule that cannot apply; in one that might, the question panics
//! rather than being answered by a guess.

use std::net::IpAddr;

use super::seatbelt_eval_regex::Regex;

/// What is asked about.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    Path(&'a str),
    Ip(IpAddr, u16),
    UnixSocket(&'a str),
    /// The name of a POSIX semaphore or shared memory object (`sem_open`, `shm_open`).
    IpcName(&'a str),
}

#[derive(Debug)]
enum Filter {
    Literal(String),
    Subpath(String),
    Regex(Regex),
    Not(Box<Filter>),
    All(Vec<Filter>),
    Any(Vec<Filter>),
    /// `remote ip`: `*` or `localhost` as the host; `None` for the port `*`.
    RemoteIp { any_host: bool, port: Option<u16> },
    /// `remote unix-socket` (any socket) or with its `path-literal`.
    RemoteUnix(Option<String>),
    LocalUnix,
    /// `ipc-posix-name` (the name itself), `ipc-posix-name-prefix`, `ipc-posix-name-regex`.
    IpcName(IpcName),
    /// `(extension "...")`: a sandbox extension the process holds. The questions are those of a
    /// command that holds none (Seatbelt issues the pty one for a pty the command opened itself).
    Extension,
    /// Something the evaluator does not model, by name (shown when a question panics on it).
    #[allow(dead_code)]
    Unknown(String),
}

#[derive(Debug)]
enum IpcName {
    Exactly(String),
    Prefix(String),
    Regex(Regex),
}

#[derive(Debug)]
struct Rule {
    allow: bool,
    operations: Vec<String>,
    filters: Vec<Filter>,
}

/// A parsed profile with its parameters filled in.
#[derive(Debug)]
pub struct Profile {
    rules: Vec<Rule>,
}

/// Tokens of the S-expression text.
#[derive(Debug, Clone, PartialEq)]
enum Expr {
    List(Vec<Expr>),
    Atom(String),
    Str(String),
    Regex(String),
}

impl Profile {
    /// `text` with its `-DNAME=value` parameters.
    pub fn parse(text: &str, params: &[(String, String)]) -> Result<Profile, String> {
        let mut rules = Vec::new();
        for form in read_all(text)? {
            let Expr::List(items) = form else { return Err(format!("a top-level atom: {form:?}")) };
            let head = match items.first() {
                Some(Expr::Atom(a)) => a.as_str(),
                other => return Err(format!("a form without a name: {other:?}")),
            };
            match head {
                "version" => continue,
                "allow" | "deny" => {}
                other => return Err(format!("unknown form ({other} ...)")),
            }
            let mut operations = Vec::new();
            let mut filters = Vec::new();
            for item in &items[1..] {
                match item {
                    Expr::Atom(op) if filters.is_empty() => operations.push(op.clone()),
                    Expr::List(_) => filters.push(filter(item, params)?),
                    other => return Err(format!("unexpected {other:?} in a rule")),
                }
            }
            rules.push(Rule { allow: head == "allow", operations, filters });
        }
        Ok(Profile { rules })
    }

    /// A plan's profile with the `-D` parameters of its argv.
    pub fn of_plan(plan: &super::LaunchPlan) -> Profile {
        let params: Vec<(String, String)> = plan
            .args
            .iter()
            .take_while(|a| *a != "--")
            .filter_map(|a| a.strip_prefix("-D")?.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        Profile::parse(plan.profile.as_deref().expect("a Seatbelt plan"), &params).expect("a profile the evaluator reads")
    }

    /// Does the profile allow `operation` on `target`?
    pub fn allows(&self, operation: &str, target: Target) -> bool {
        let mut decision = None;
        for rule in self.rules.iter().filter(|r| r.operations.iter().any(|o| op_matches(o, operation))) {
            let matched = if rule.filters.is_empty() {
                Some(true)
            } else {
                rule.filters.iter().map(|f| eval(f, target)).fold(Some(false), or)
            };
            match matched {
                Some(true) => decision = Some(rule.allow),
                Some(false) => {}
                None => panic!("cannot decide {operation} on {target:?}: {rule:?}"),
            }
        }
        decision.unwrap_or_else(|| panic!("no rule decides {operation} (the profile has no (deny default))"))
    }

    pub fn may_write(&self, path: &str) -> bool {
        let create = self.allows("file-write-create", Target::Path(path));
        assert_eq!(create, self.allows("file-write-data", Target::Path(path)), "create and write differ for {path}");
        create
    }

    pub fn may_read(&self, path: &str) -> bool {
        self.allows("file-read-data", Target::Path(path))
    }

    pub fn may_connect(&self, ip: &str, port: u16) -> bool {
        self.allows("network-outbound", Target::Ip(ip.parse().expect("an address"), port))
    }
}

fn op_matches(rule: &str, asked: &str) -> bool {
    rule == "default" || rule == asked || rule.strip_suffix('*').is_some_and(|prefix| asked.starts_with(prefix) && !NOT_BY_WILDCARD.contains(&asked))
}

/// Operations a wildcard no longer covers: since macOS 12.3 `file-write*` leaves out
/// `file-write-setugid` (Homebrew/brew#13404), which only `default` or its own name decides. (On
/// older systems it covers it: a profile must decide it by name to mean the same on both.)
const NOT_BY_WILDCARD: &[&str] = &["file-write-setugid"];

/// Three-valued: `None` is "cannot tell".
fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn eval(f: &Filter, target: Target) -> Option<bool> {
    match (f, target) {
        (Filter::Not(inner), _) => eval(inner, target).map(|b| !b),
        (Filter::All(fs), _) => fs.iter().map(|f| eval(f, target)).fold(Some(true), and),
        (Filter::Any(fs), _) => fs.iter().map(|f| eval(f, target)).fold(Some(false), or),
        (Filter::Unknown(_), _) => None,
        (Filter::Extension, _) => Some(false),
        (Filter::Literal(p), Target::Path(t)) => Some(p == t),
        (Filter::Subpath(p), Target::Path(t)) => Some(t == p || t.starts_with(&format!("{}/", p.trim_end_matches('/')))),
        (Filter::Regex(r), Target::Path(t)) => Some(r.is_match(t)),
        (Filter::RemoteIp { any_host, port }, Target::Ip(ip, p)) => {
            // `localhost` is modelled as every loopback address (wider than Seatbelt may be: a
            // check that the proxy's port alone is reachable is then, if anything, stricter).
            Some((*any_host || ip.is_loopback() || is_mapped_loopback(ip)) && port.is_none_or(|want| want == p))
        }
        (Filter::IpcName(IpcName::Exactly(n)), Target::IpcName(t)) => Some(n == t),
        (Filter::IpcName(IpcName::Prefix(n)), Target::IpcName(t)) => Some(t.starts_with(n.as_str())),
        (Filter::IpcName(IpcName::Regex(r)), Target::IpcName(t)) => Some(r.is_match(t)),
        (Filter::RemoteUnix(path), Target::UnixSocket(s)) => Some(path.as_deref().is_none_or(|want| want == s)),
        // A path filter never matches a connection, nor a network filter a path.
        _ => Some(false),
    }
}

fn is_mapped_loopback(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()))
}

fn filter(e: &Expr, params: &[(String, String)]) -> Result<Filter, String> {
    let Expr::List(items) = e else { return Err(format!("a filter must be a list: {e:?}")) };
    let Some(Expr::Atom(name)) = items.first() else { return Err(format!("a filter without a name: {e:?}")) };
    let args = &items[1..];
    let path = |i: usize| -> Result<String, String> { string(args.get(i).ok_or(format!("({name}) without an argument"))?, params) };
    Ok(match name.as_str() {
        "literal" | "path" => Filter::Literal(path(0)?),
        "subpath" => Filter::Subpath(path(0)?),
        "regex" => match args {
            [Expr::Regex(r)] => Filter::Regex(Regex::parse(r)?),
            _ => return Err(format!("(regex) takes one #\"...\" literal: {e:?}")),
        },
        "require-not" => match args {
            [inner] => Filter::Not(Box::new(filter(inner, params)?)),
            _ => return Err("(require-not) takes one filter".into()),
        },
        "require-all" => Filter::All(args.iter().map(|a| filter(a, params)).collect::<Result<_, _>>()?),
        "require-any" => Filter::Any(args.iter().map(|a| filter(a, params)).collect::<Result<_, _>>()?),
        "extension" => Filter::Extension,
        "ipc-posix-name" => Filter::IpcName(IpcName::Exactly(path(0)?)),
        "ipc-posix-name-prefix" => Filter::IpcName(IpcName::Prefix(path(0)?)),
        "ipc-posix-name-regex" => match args {
            [Expr::Regex(r)] => Filter::IpcName(IpcName::Regex(Regex::parse(r)?)),
            _ => return Err(format!("(ipc-posix-name-regex) takes one #\"...\" literal: {e:?}")),
        },
        "remote" | "local" => remote(name, args, params)?,
        other => Filter::Unknown(other.to_string()),
    })
}

fn remote(name: &str, args: &[Expr], params: &[(String, String)]) -> Result<Filter, String> {
    match (name, args) {
        ("remote", [Expr::Atom(kind), Expr::Str(spec)]) if kind == "ip" => {
            let (host, port) = spec.rsplit_once(':').ok_or(format!("ip filter without a port: {spec:?}"))?;
            let any_host = match host {
                "*" => true,
                "localhost" => false,
                other => return Err(format!("Seatbelt takes only '*' or 'localhost' as a host, not {other:?}")),
            };
            let port = if port == "*" { None } else { Some(port.parse().map_err(|_| format!("bad port in {spec:?}"))?) };
            Ok(Filter::RemoteIp { any_host, port })
        }
        ("remote", [Expr::Atom(kind)]) if kind == "unix-socket" => Ok(Filter::RemoteUnix(None)),
        ("remote", [Expr::Atom(kind), Expr::List(inner)]) if kind == "unix-socket" => match inner.as_slice() {
            [Expr::Atom(f), arg] if f == "path-literal" => Ok(Filter::RemoteUnix(Some(string(arg, params)?))),
            _ => Err(format!("unsupported unix-socket filter {inner:?}")),
        },
        ("local", [Expr::Atom(kind)]) if kind == "unix-socket" => Ok(Filter::LocalUnix),
        _ => Ok(Filter::Unknown(format!("({name} {args:?})"))),
    }
}

/// A string argument: a literal, or `(param "NAME")` looked up in the `-D` parameters.
fn string(e: &Expr, params: &[(String, String)]) -> Result<String, String> {
    match e {
        Expr::Str(s) => Ok(s.clone()),
        Expr::List(items) => match items.as_slice() {
            [Expr::Atom(p), Expr::Str(name)] if p == "param" => {
                params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).ok_or(format!("parameter {name} is not given (-D{name}=...)"))
            }
            _ => Err(format!("expected a string or (param ...), got {e:?}")),
        },
        other => Err(format!("expected a string, got {other:?}")),
    }
}

fn read_all(text: &str) -> Result<Vec<Expr>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let mut out = Vec::new();
    while skip_blank(&chars, &mut at) {
        out.push(read(&chars, &mut at)?);
    }
    Ok(out)
}

/// Skip whitespace and `;` comments; `false` at the end.
fn skip_blank(c: &[char], at: &mut usize) -> bool {
    while let Some(&ch) = c.get(*at) {
        if ch == ';' {
            while c.get(*at).is_some_and(|&x| x != '\n') {
                *at += 1;
            }
        } else if ch.is_whitespace() {
            *at += 1;
        } else {
            return true;
        }
    }
    false
}

fn read(c: &[char], at: &mut usize) -> Result<Expr, String> {
    match c[*at] {
        '(' => {
            *at += 1;
            let mut items = Vec::new();
            loop {
                if !skip_blank(c, at) {
                    return Err("unclosed '('".into());
                }
                if c[*at] == ')' {
                    *at += 1;
                    return Ok(Expr::List(items));
                }
                items.push(read(c, at)?);
            }
        }
        ')' => Err(format!("unbalanced ')' at {at}")),
        '"' => quoted(c, at, true).map(Expr::Str),
        '#' if c.get(*at + 1) == Some(&'"') => {
            *at += 1;
            // A regex literal keeps its backslashes for the regex engine.
            quoted(c, at, false).map(Expr::Regex)
        }
        _ => {
            let start = *at;
            while c.get(*at).is_some_and(|&x| !x.is_whitespace() && x != '(' && x != ')' && x != '"' && x != ';') {
                *at += 1;
            }
            Ok(Expr::Atom(c[start..*at].iter().collect()))
        }
    }
}

/// The string at `c[*at] == '"'`; `unescape`: `\x` stands for `x` (strings), else kept (regexes).
fn quoted(c: &[char], at: &mut usize, unescape: bool) -> Result<String, String> {
    *at += 1;
    let mut s = String::new();
    while let Some(&ch) = c.get(*at) {
        *at += 1;
        match ch {
            '"' => return Ok(s),
            '\\' => {
                let next = *c.get(*at).ok_or("a string ends in '\\'")?;
                *at += 1;
                if !unescape {
                    s.push('\\');
                }
                s.push(next);
            }
            _ => s.push(ch),
        }
    }
    Err("unterminated string".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Profile {
        Profile::parse(text, &[("ROOT".into(), "/ws".into()), ("RO".into(), "/ws/.git".into())]).unwrap()
    }

    #[test]
    fn last_match_wins_and_filters_combine() {
        let prof = p(r#"(version 1)
(deny default)
(allow file-read*)
(allow file-write* (require-all (subpath (param "ROOT")) (require-not (literal (param "RO"))) (require-not (subpath (param "RO")))))
(deny file-write* (require-all (subpath (param "ROOT")) (regex #"/\.envrc(/.*)?$")))
(deny file-read* (literal "/ws/secret") (subpath "/ws/secret"))"#);
        assert!(prof.may_write("/ws") && prof.may_write("/ws/a/b"));
        assert!(!prof.may_write("/ws/.git") && !prof.may_write("/ws/.git/config") && prof.may_write("/ws/.gitx"));
        assert!(!prof.may_write("/ws/sub/.envrc") && !prof.may_write("/wsx/a") && !prof.may_write("/"));
        assert!(prof.may_read("/etc/passwd") && !prof.may_read("/ws/secret") && !prof.may_read("/ws/secret/k") && prof.may_read("/ws/secretx"));
        assert!(!prof.may_connect("127.0.0.1", 80), "(deny default)");
    }

    /// `file-write*` does not cover `file-write-setugid` (macOS 12.3+): under `(deny default)` it
    /// stays denied unless allowed by name.
    #[test]
    fn a_wildcard_leaves_out_the_set_id_bits() {
        let prof = p("(deny default)\n(allow file-write* (subpath \"/ws\"))");
        assert!(prof.allows("file-write-mode", Target::Path("/ws/f")) && !prof.allows("file-write-setugid", Target::Path("/ws/f")));
        let named = p("(deny default)\n(allow file-write-setugid (subpath \"/ws\"))");
        assert!(named.allows("file-write-setugid", Target::Path("/ws/f")));
    }

    #[test]
    fn network_filters() {
        let prof = p("(deny default)\n(allow network-outbound (remote ip \"localhost:8080\"))\n(allow network-outbound (remote unix-socket (path-literal \"/run/a.sock\")))");
        assert!(prof.may_connect("127.0.0.1", 8080) && prof.may_connect("::1", 8080) && prof.may_connect("::ffff:127.0.0.1", 8080));
        assert!(!prof.may_connect("127.0.0.1", 8081) && !prof.may_connect("10.0.0.1", 8080));
        assert!(prof.allows("network-outbound", Target::UnixSocket("/run/a.sock")) && !prof.allows("network-outbound", Target::UnixSocket("/run/b.sock")));
        let open = p("(deny default)\n(allow network-outbound)");
        assert!(open.may_connect("93.184.216.34", 443));
    }

    #[test]
    fn ipc_name_filters() {
        let prof = p("(deny default)\n(allow ipc-posix-sem (ipc-posix-name-prefix \"/mp-\"))\n(allow ipc-posix-shm-read* (ipc-posix-name-regex #\"^/k[0-9]+$\") (ipc-posix-name \"apple.x\"))");
        assert!(prof.allows("ipc-posix-sem", Target::IpcName("/mp-ab")) && !prof.allows("ipc-posix-sem", Target::IpcName("/mpx")));
        assert!(!prof.allows("ipc-posix-sem", Target::Path("/mp-ab")), "a name filter never matches a path");
        assert!(prof.allows("ipc-posix-shm-read-data", Target::IpcName("/k12")) && prof.allows("ipc-posix-shm-read-data", Target::IpcName("apple.x")));
        assert!(!prof.allows("ipc-posix-shm-read-data", Target::IpcName("/k12x")) && !prof.allows("ipc-posix-shm-read-data", Target::IpcName("apple.xy")));
    }

    #[test]
    #[should_panic(expected = "cannot decide")]
    fn a_filter_it_does_not_model_is_not_guessed() {
        p("(deny default)\n(allow file-write-data (require-any (literal \"/dev/null\") (vnode-type CHARACTER-DEVICE)))").may_write("/x");
    }

    #[test]
    fn bad_profiles_are_errors() {
        for bad in ["(allow file-read* (literal (param \"NOPE\")))", "(allow", "(allow x))", "(frobnicate)", "(allow network-outbound (remote ip \"10.0.0.1:80\"))", "(allow file-write* (regex #\"a{2}\"))"] {
            assert!(Profile::parse(bad, &[]).is_err(), "{bad}");
        }
    }
}
