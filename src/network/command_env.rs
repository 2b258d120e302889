//! The command's environment under the allow-list proxy: nothing in it may name the user's own
//! (upstream) proxy or carry its password, which only the host's proxy process uses. The helper
//! (Linux) or the Seatbelt plan (macOS) sets HTTP(S)_PROXY, ALL_PROXY and the package managers'
//! variables to the run's proxy, but a command inherited every other one: `ftp_proxy`,
//! `SOCKS_PROXY`, `NPM_CONFIG_HTTPS_PROXY` (npm reads its variables in any case) with
//! `http://user:s3cret@...` came in as they were.
//!
//! So, whatever their source (the host's environment or `options.env`): every variable whose name
//! ends in `_proxy` or starts with `npm_config_` and holds `proxy`, in any case, is removed (the
//! run's own are set after this), and so is every other variable whose value carries an upstream
//! proxy's credential: its `user:password@` as written in the URL, `user:password` decoded, the
//! `Basic` token made of it, or exactly the password. The credentials are those of the removed
//! variables' URLs, of `upstreamProxy`, and (when the upstream comes from the environment) of the
//! host process's own proxy variables.

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
    env.retain(|k, v| !names_a_proxy(k) && !secrets.iter().any(|s| s.in_value(v)));
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

    fn in_value(&self, v: &str) -> bool {
        v.contains(&self.in_url)
            || self.pair.as_ref().is_some_and(|(plain, token)| v.contains(plain.as_str()) || v.contains(token.as_str()))
            || self.password.iter().any(|p| v == p)
    }
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
}
