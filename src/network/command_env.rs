//! The command's environment without the user's own (upstream) proxy: nothing in it may name that
//! proxy or carry its password, which only the host's proxy process uses. This holds under the
//! allow-list proxy and with the network off (`plan::child_env`); with the full network the
//! command connects through that proxy itself and gets its variables as they are. Under the
//! allow-list the helper (Linux) or the Seatbelt plan (macOS) sets HTTP(S)_PROXY, ALL_PROXY and
//! the package managers' variables to the run's proxy, but a command inherited every other one:
//! `ftp_proxy`, `SOCKS_PROXY`, `NPM_CONFIG_HTTPS_PROXY` (npm reads its variables in any case) with
//! `http://user:s3cret@...` came in as they were; and the JVM's `-Dhttps.proxyPassword=` in
//! `JAVA_TOOL_OPTIONS`, which the helper appends to, or `%2f` for a `%2F` in the password.
//!
//! So, whatever their source (the host's environment or `options.env`): every variable whose name
//! ends in `_proxy` or starts with `npm_config_` and holds `proxy`, in any case, is removed (the
//! run's own are set after this); option lists (`*_OPTS`, `*_OPTIONS`) lose their
//! `-D...proxyUser=`/`-D...proxyPassword=` options, and any other value holding `proxyPassword=`
//! goes; and so does every other variable whose value, as written or with its escapes decoded,
//! carries an upstream proxy's credential: its `user:password@` as written, `user:password`
//! decoded, the `Basic` token made of it, exactly the password, or (6 bytes or more) the password
//! as a word between separators. The credentials are those of the removed variables' URLs, of
//! `upstreamProxy`, and (when the upstream comes from the environment, as with the network off) of
//! the host process's own proxy variables.

use std::collections::BTreeMap;

use super::upstream::{percent_decode, UpstreamSetting};

/// Remove from `env` what names or carries the user's proxy. `host_env`: the host process's
/// variables, read only when `setting` takes the upstream from them.
pub fn scrub(env: &mut BTreeMap<String, String>, setting: &UpstreamSetting, host_env: impl Fn() -> Vec<(String, String)>) {
    let mut userinfos: Vec<String> = Vec::new();
    match setting {
        UpstreamSetting::Url(u) => userinfos.extend(u.userinfo.clone()),
        UpstreamSetting::FromEnvironment => userinfos.extend(host_env().iter().filter(|(k, _)| names_a_proxy(k)).filter_map(|(_, v)| userinfo(v))),
        UpstreamSetting::Off => {}
    }
    userinfos.extend(env.iter().filter(|(k, _)| names_a_proxy(k)).filter_map(|(_, v)| userinfo(v)));
    let secrets: Vec<Secret> = userinfos.iter().filter(|u| !u.is_empty()).map(|u| Secret::of(u)).collect();
    for (_, v) in env.iter_mut().filter(|(k, _)| is_option_list(k)) {
        *v = without_proxy_credentials(v);
    }
    env.retain(|k, v| !names_a_proxy(k) && !has_proxy_password(v) && !secrets.iter().any(|s| s.in_value(v)));
}

/// `JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS`, `GRADLE_OPTS`, `MAVEN_OPTS`, `SBT_OPTS`...: lists of
/// options separated by white space, where the JVM's proxy properties are given.
fn is_option_list(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("_opts") || n.ends_with("_options")
}

/// `-Dhttps.proxyPassword=...` and friends, in any case: the JVM's (and Gradle's, Maven's)
/// names for a proxy's credential, whoever's it is.
fn has_proxy_password(v: &str) -> bool {
    v.to_ascii_lowercase().contains("proxypassword=")
}

/// `list` without its `-D...proxyUser=` and `-D...proxyPassword=` options, the rest as written
/// (the helper's own proxy properties are appended after this). A quote in such an option may
/// hide more of its value in the next words: then the list is left whole, for `scrub` to remove.
fn without_proxy_credentials(list: &str) -> String {
    let credential = |word: &str| {
        let w = word.trim_end().to_ascii_lowercase();
        w.starts_with("-d") && (w.contains("proxypassword=") || w.contains("proxyuser="))
    };
    let words: Vec<&str> = list.split_inclusive(char::is_whitespace).collect();
    if !words.iter().any(|w| credential(w)) || words.iter().any(|w| credential(w) && w.contains(['"', '\''])) {
        return list.to_string();
    }
    words.into_iter().filter(|w| !credential(w)).collect::<String>().trim_end().to_string()
}

/// `http_proxy`, `FTP_PROXY`, `socks_proxy`, `NPM_CONFIG_HTTPS_PROXY`, `npm_config_https-proxy`...
fn names_a_proxy(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("_proxy") || (n.starts_with("npm_config_") && n.contains("proxy"))
}

/// The `user[:password]` of a proxy URL (`scheme://user:pw@host:port/`, or `user:pw@host:port`).
fn userinfo(url: &str) -> Option<String> {
    let rest = url.trim().split_once("://").map_or(url.trim(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.rsplit_once('@').map(|(u, _)| u.to_string()).filter(|u| !u.is_empty())
}

/// The forms one credential takes in a value.
struct Secret {
    /// As written in a URL, with the `@` that ends it (short user names match only in URL form).
    in_url: String,
    /// `user:password`, decoded, and its `Basic` token; only with a password.
    pair: Option<(String, String)>,
    /// The password, written and decoded: a value that is exactly one of them.
    password: Vec<String>,
}

impl Secret {
    fn of(userinfo: &str) -> Secret {
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        let decoded = format!("{}:{}", percent_decode(user), percent_decode(password));
        let pair = (!password.is_empty()).then(|| (decoded.clone(), super::credential::base64(decoded.as_bytes())));
        let password = if password.is_empty() { Vec::new() } else { vec![password.to_string(), percent_decode(password)] };
        Secret { in_url: format!("{userinfo}@"), pair, password }
    }

    /// In `v` as written or with its escapes decoded (`%2f` for `/` as well as `%2F`, or `%6De`).
    fn in_value(&self, v: &str) -> bool {
        let decoded = percent_decode(v);
        self.in_text(v) || (decoded != v && self.in_text(&decoded))
    }

    fn in_text(&self, v: &str) -> bool {
        v.contains(&self.in_url)
            || self.pair.as_ref().is_some_and(|(plain, token)| v.contains(plain.as_str()) || v.contains(token.as_str()))
            || self.password.iter().any(|p| v == p || (p.len() >= MIN_WORD_PASSWORD && has_word(v, p)))
    }
}

/// A password this long is looked for as a word of a value (`password s3cr/et`, `pw=s3cret`);
/// a shorter one only as the whole value, as it may well be a word of an innocent value.
const MIN_WORD_PASSWORD: usize = 6;

/// Does `word` stand in `v` with a separator (or the value's end) on each side?
fn has_word(v: &str, word: &str) -> bool {
    let separator = |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || matches!(c, '=' | ':' | '@' | '/' | '"' | '\'' | ',' | ';'));
    v.match_indices(word).any(|(i, _)| separator(v[..i].chars().next_back()) && separator(v[i + word.len()..].chars().next()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::upstream::ProxyUrl;

    /// The names `pairs` keeps after `scrub`, in order.
    fn kept(pairs: &[(&str, &str)], setting: &UpstreamSetting, host_env: impl Fn() -> Vec<(String, String)>) -> Vec<String> {
        let mut env: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        scrub(&mut env, setting, host_env);
        env.into_keys().collect()
    }

    #[test]
    fn every_proxy_variable_and_every_value_with_the_credential_goes() {
        let url = "http://user:s3cret@127.0.0.1:18128";
        let given = [
            ("HTTP_PROXY", url), ("ftp_proxy", url), ("FTP_PROXY", url), ("SOCKS_PROXY", "socks5://user:s3cret@127.0.0.1:1080"),
            ("NPM_CONFIG_HTTPS_PROXY", url), ("npm_config_https-proxy", url), ("Npm_Config_NoProxy", "x"),
            ("GIT_CONFIG_VALUE_0", url), ("CLOUDSDK_PROXY_PASSWORD", "s3cret"), ("AUTH", "Basic dXNlcjpzM2NyZXQ="),
            ("NOTE", "user:s3cret"),
            ("PATH", "/usr/bin"), ("GOPROXY", "https://proxy.golang.org"), ("YARN_HTTPS_PROXY_X", "1"), ("S", "s3cret-and-more"),
        ];
        assert_eq!(kept(&given, &UpstreamSetting::Off, Vec::new), ["GOPROXY", "PATH", "S", "YARN_HTTPS_PROXY_X"]);
    }

    #[test]
    fn the_upstreams_own_credential_whatever_the_command_was_given() {
        // extendEnv: false, or a caller that renamed the variable: the credential comes from the
        // upstream setting (the URL, or the host process's variables), not the command's variables.
        let given = [("TOKEN", "http://me:p%40ss@proxy.corp:3128"), ("PASS", "p@ss"), ("USER", "me"), ("HOME", "/root")];
        let url = UpstreamSetting::Url(ProxyUrl::parse("http://me:p%40ss@proxy.corp:3128").unwrap());
        assert_eq!(kept(&given, &url, Vec::new), ["HOME", "USER"], "a user name alone is no secret");
        let host = || vec![("https_proxy".to_string(), "http://me:p%40ss@proxy.corp:3128".to_string())];
        assert_eq!(kept(&given, &UpstreamSetting::FromEnvironment, host), ["HOME", "USER"]);
        let unread = || panic!("the host's variables are read only for the upstream from the environment");
        assert_eq!(kept(&given, &UpstreamSetting::Off, unread).len(), 4, "no proxy variable, no known credential: nothing goes");
    }

    #[test]
    fn the_credential_in_other_forms_goes_too() {
        // The JVM's properties, another escape of the same byte, a netrc line, a config line.
        let host = || vec![("HTTPS_PROXY".to_string(), "http://me:s3cr%2Fet@127.0.0.1:18999".to_string())];
        let given = [
            ("GIT_CFG", "http://me:s3cr%2fet@127.0.0.1:18999"), ("NETRC_LINE", "machine proxy login me password s3cr/et"),
            ("PIP_CONFIG", "proxy = me:s3cr/et"), ("QUOTED", "password=\"s3cr/et\""), ("LONGER", "s3cr/etc"), ("HOME", "/root"),
        ];
        assert_eq!(kept(&given, &UpstreamSetting::FromEnvironment, host), ["HOME", "LONGER"]);
        // Written in a URL with every byte escaped, and a short password only as the whole value.
        let url = UpstreamSetting::Url(ProxyUrl::parse("http://me:abc@proxy.corp:3128").unwrap());
        let given = [("A", "http://%6De:%61bc@proxy.corp:3128"), ("B", "abc"), ("C", "x abc y")];
        assert_eq!(kept(&given, &url, Vec::new), ["C"], "a password under 6 bytes is matched only as the whole value");
    }

    #[test]
    fn proxy_passwords_in_option_lists_are_stripped_and_elsewhere_removed() {
        let mut env: BTreeMap<String, String> = [
            ("JAVA_TOOL_OPTIONS", "-Xss4m -Dhttps.proxyHost=corp -Dhttps.proxyUser=me -Dhttps.proxyPassword=s3cret -Dfoo=1"),
            ("GRADLE_OPTS", "-Dhttp.proxyPassword=other1"), ("maven_opts", "-Xmx1g  -DHTTPS.PROXYPASSWORD=x"),
            ("JDK_JAVA_OPTIONS", "-Dhttp.proxyPassword=\"a b\" -Xss1m"), ("CONF", "systemProp.https.proxyPassword=x"),
        ].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        scrub(&mut env, &UpstreamSetting::Off, Vec::new);
        assert_eq!(env["JAVA_TOOL_OPTIONS"], "-Xss4m -Dhttps.proxyHost=corp -Dfoo=1", "the other options stay");
        assert_eq!(env["GRADLE_OPTS"], "");
        assert_eq!(env["maven_opts"], "-Xmx1g");
        assert!(!env.contains_key("JDK_JAVA_OPTIONS"), "a quoted password may span tokens: the whole list goes");
        assert!(!env.contains_key("CONF"));
    }
}
