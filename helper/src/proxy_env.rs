//! The environment that points a command's tools at the network allow-list proxy. The port is known
//! only inside the sandbox (the helper binds it), so the helper sets these just before it execs the
//! command; they are computed here, in pure code, so the list is unit-tested.
//!
//! One port serves HTTP (CONNECT and absolute-form) and SOCKS5, so every variable names the same
//! `http://127.0.0.1:PORT` (a literal address, not `localhost`: some clients resolve `localhost` to
//! `::1` first). `ALL_PROXY` is `http://` too: httpx and gRPC fail on `socks5h://` without extras.
//! `NO_PROXY` keeps the sandbox's own loopback direct (a test server started inside still works);
//! private ranges are deliberately not listed, so they reach the proxy and get a named refusal.

/// The variables for a proxy on `127.0.0.1:port`. `inherited_java_tool_options` is the value the
/// command would otherwise see: the proxy properties are appended to it, not put in its place.
pub fn variables(port: u16, inherited_java_tool_options: Option<&str>) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
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
    for name in ["NO_PROXY", "no_proxy"] {
        set(name, "localhost,127.0.0.1,::1");
    }
    // Node >= 22.21 / >= 24 honours the variables above for fetch and http only with this.
    set("NODE_USE_ENV_PROXY", "1");
    set("ELECTRON_GET_USE_PROXY", "true");
    set("CLOUDSDK_PROXY_TYPE", "http");
    set("CLOUDSDK_PROXY_ADDRESS", "127.0.0.1");
    set("CLOUDSDK_PROXY_PORT", &port.to_string());
    set("RSYNC_PROXY", &format!("127.0.0.1:{port}"));
    let java = format!(
        "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={port} \
         -Dhttp.nonProxyHosts=localhost|127.*|[::1]"
    );
    let java = match inherited_java_tool_options.filter(|s| !s.trim().is_empty()) {
        Some(before) => format!("{before} {java}"),
        None => java,
    };
    set("JAVA_TOOL_OPTIONS", &java);
    set("SANDSPAWN_NETWORK", "proxy");
    vars
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
    fn java_options_are_appended() {
        let vars = variables(1, Some("-Xmx1g"));
        assert!(get(&vars, "JAVA_TOOL_OPTIONS").starts_with("-Xmx1g -Dhttp.proxyHost="));
        assert!(!get(&variables(1, Some("  ")), "JAVA_TOOL_OPTIONS").starts_with(' '));
    }
}
