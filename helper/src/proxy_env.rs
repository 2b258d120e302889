//! The environment that points a command's tools at the network allow-list proxy. On Linux the
//! port is known only inside the sandbox (the helper binds it), so the helper sets these just
//! before it execs the command; on macOS the addon binds the port on the host's loopback and puts
//! them in the plan. They are computed here, in pure code, so the list is unit-tested.
//!
//! One port serves HTTP (CONNECT and absolute-form) and SOCKS5, so every variable names the same
//! `http://127.0.0.1:PORT` (a literal address, not `localhost`: some clients resolve `localhost` to
//! `::1` first). `ALL_PROXY` is `http://` too: httpx and gRPC fail on `socks5h://` without extras.

/// Where the proxy listens, which decides what the command is told.
#[derive(Debug, Clone, Copy)]
pub enum Listener<'a> {
    /// Linux: the loopback of the sandbox's own network namespace. `NO_PROXY` keeps that loopback
    /// direct (a test server started inside still works); private ranges are deliberately not
    /// listed, so they reach the proxy and get a named refusal.
    SandboxLoopback,
    /// macOS: the host's loopback, shared with every host process, so the URLs carry the run's
    /// credential (`user`, `secret`: URL-safe as they are). `NO_PROXY` is empty: the profile lets
    /// the command connect to the proxy's port only, so a direct `localhost` connection would
    /// fail unexplained, while through the proxy it gets a named refusal (or, listed in
    /// `allowPrivateAddresses`, goes through).
    HostLoopback { user: &'a str, secret: &'a str },
}

/// The variables for a proxy on `127.0.0.1:port` in the sandbox's namespace (Linux).
pub fn variables(port: u16, inherited_java_tool_options: Option<&str>) -> Vec<(String, String)> {
    variables_for(Listener::SandboxLoopback, port, inherited_java_tool_options)
}

/// The variables for a proxy on `127.0.0.1:port` of `listener`. `inherited_java_tool_options` is
/// the value the command would otherwise see: the proxy properties are appended to it, not put in
/// its place.
pub fn variables_for(listener: Listener, port: u16, inherited_java_tool_options: Option<&str>) -> Vec<(String, String)> {
    let userinfo = match listener {
        Listener::SandboxLoopback => String::new(),
        Listener::HostLoopback { user, secret } => format!("{user}:{secret}@"),
    };
    let url = format!("http://{userinfo}127.0.0.1:{port}");
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: &str| vars.push((k.to_string(), v.to_string()));
    for name in [
        "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy",
        // npm, yarn (classic and berry), bundler, pip, gRPC, websocket clients.
        "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
        "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY", "PIP_PROXY", "GRPC_PROXY", "grpc_proxy",
        "WS_PROXY", "WSS_PROXY",
    ] {
        set(name, &url);
    }
    let no_proxy = match listener {
        Listener::SandboxLoopback => "localhost,127.0.0.1,::1",
        Listener::HostLoopback { .. } => "",
    };
    for name in ["NO_PROXY", "no_proxy"] {
        set(name, no_proxy);
    }
    // Node >= 22.21 / >= 24 honours the variables above for fetch and http only with this.
    set("NODE_USE_ENV_PROXY", "1");
    set("ELECTRON_GET_USE_PROXY", "true");
    set("CLOUDSDK_PROXY_TYPE", "http");
    set("CLOUDSDK_PROXY_ADDRESS", "127.0.0.1");
    set("CLOUDSDK_PROXY_PORT", &port.to_string());
    if let Listener::HostLoopback { user, secret } = listener {
        set("CLOUDSDK_PROXY_USERNAME", user);
        set("CLOUDSDK_PROXY_PASSWORD", secret);
    }
    set("RSYNC_PROXY", &format!("{userinfo}127.0.0.1:{port}"));
    let java = java_options(listener, port);
    let java = match inherited_java_tool_options.filter(|s| !s.trim().is_empty()) {
        Some(before) => format!("{before} {java}"),
        None => java,
    };
    set("JAVA_TOOL_OPTIONS", &java);
    set("SANDSPAWN_NETWORK", "proxy");
    vars
}

/// The JVM reads no proxy variables, only these properties.
fn java_options(listener: Listener, port: u16) -> String {
    let base = format!("-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={port}");
    match listener {
        Listener::SandboxLoopback => format!("{base} -Dhttp.nonProxyHosts=localhost|127.*|[::1]"),
        // The user and password properties are read by Gradle (and by code that installs an
        // Authenticator); the JDK's own clients send Basic on CONNECT only with the tunneling
        // scheme list emptied. Seatbelt's `localhost` does not match the IPv4-mapped addresses the
        // JVM uses on a dual stack, hence IPv4 only. An empty nonProxyHosts replaces the JVM's
        // default (localhost and 127.*), which would go direct and be refused unexplained.
        Listener::HostLoopback { user, secret } => format!(
            "{base} -Dhttp.nonProxyHosts= -Dhttp.proxyUser={user} -Dhttp.proxyPassword={secret} -Dhttps.proxyUser={user} \
             -Dhttps.proxyPassword={secret} -Djdk.http.auth.tunneling.disabledSchemes= -Djava.net.preferIPv4Stack=true"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(vars: &'a [(String, String)], k: &str) -> &'a str {
        vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("{k} missing"))
    }

    #[test]
    fn every_tool_points_at_the_same_port() {
        let vars = variables(41234, None);
        for k in ["HTTP_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "npm_config_https_proxy", "PIP_PROXY", "GRPC_PROXY"] {
            assert_eq!(get(&vars, k), "http://127.0.0.1:41234", "{k}");
        }
        assert_eq!(get(&vars, "NO_PROXY"), "localhost,127.0.0.1,::1");
        assert_eq!(get(&vars, "RSYNC_PROXY"), "127.0.0.1:41234");
        assert_eq!(get(&vars, "SANDSPAWN_NETWORK"), "proxy");
        assert!(get(&vars, "JAVA_TOOL_OPTIONS").starts_with("-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=41234"));
        let mut names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "no variable twice");
    }

    #[test]
    fn on_the_hosts_loopback_every_url_carries_the_runs_credential() {
        let vars = variables_for(Listener::HostLoopback { user: "sandspawn", secret: "00ff" }, 41234, Some("-Xmx1g"));
        for k in ["HTTP_PROXY", "https_proxy", "ALL_PROXY", "npm_config_https_proxy", "PIP_PROXY", "GRPC_PROXY", "WSS_PROXY"] {
            assert_eq!(get(&vars, k), "http://sandspawn:00ff@127.0.0.1:41234", "{k}");
        }
        assert_eq!(get(&vars, "NO_PROXY"), "", "the host's localhost goes through the proxy too");
        assert_eq!(get(&vars, "RSYNC_PROXY"), "sandspawn:00ff@127.0.0.1:41234");
        assert_eq!((get(&vars, "CLOUDSDK_PROXY_USERNAME"), get(&vars, "CLOUDSDK_PROXY_PASSWORD")), ("sandspawn", "00ff"));
        let java = get(&vars, "JAVA_TOOL_OPTIONS");
        assert!(java.starts_with("-Xmx1g -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=41234"), "{java}");
        for p in ["-Dhttps.proxyUser=sandspawn", "-Dhttps.proxyPassword=00ff", "-Djava.net.preferIPv4Stack=true", "-Dhttp.nonProxyHosts= "] {
            assert!(java.contains(p), "{p} in {java}");
        }
        assert!(!java.contains("  "), "{java}");
        let linux = variables(41234, None);
        assert!(linux.iter().all(|(_, v)| !v.contains('@')), "no credential where no other process can connect");
        assert!(linux.iter().all(|(k, _)| !k.starts_with("CLOUDSDK_PROXY_USER")));
    }

    #[test]
    fn java_options_are_appended() {
        let vars = variables(1, Some("-Xmx1g"));
        assert!(get(&vars, "JAVA_TOOL_OPTIONS").starts_with("-Xmx1g -Dhttp.proxyHost="));
        assert!(!get(&variables(1, Some("  ")), "JAVA_TOOL_OPTIONS").starts_with(' '));
    }
}
