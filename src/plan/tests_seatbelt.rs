use super::*;
use crate::plan::seatbelt::check_sexpr;

#[test]
fn sexpr_checker_works() {
    assert!(check_sexpr("(a (b \"c)\") #\"^x(\")").is_ok());
    assert!(check_sexpr("(a (b)").is_err());
    assert!(check_sexpr("(a))").is_err());
    assert!(check_sexpr("(a \"b)").is_err());
    assert!(check_sexpr("(a #\"b)").is_err());
    assert!(check_sexpr("x (a)").is_err());
}

#[test]
fn seatbelt_workspace_write_profile_and_params() {
    let (_t, w) = tmp();
    let odd = w.join("a b\"c é");
    fs::create_dir_all(odd.join(".git")).unwrap();
    fs::write(odd.join(".git/HEAD"), "x").unwrap();
    fs::write(odd.join("secret"), "x").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "denyRead": [s(&odd.join("secret"))],
        "readOnlyPaths": [s(&odd.join("missing"))]}), &odd, Platform::Darwin);
    let plan = plan_with_env(&p, &odd, Platform::Darwin, &["ls", "-a"], &BTreeMap::new());
    assert_eq!(plan.program, PathBuf::from("/usr/bin/sandbox-exec"));
    assert_eq!(plan.argv0, "sandbox-exec");
    let prof = plan.profile.clone().unwrap();
    check_sexpr(&prof).unwrap();
    assert!(!prof.contains(&s(&odd)), "paths only via -D params");
    assert_eq!(plan.args[0], "-p");
    assert_eq!(plan.args[1], prof);
    assert_eq!(&plan.args[2..], &v(&[
        &format!("-DDENY_READ_0={}", s(&odd.join("secret"))),
        // Paths with letters outside ASCII in their decomposed spelling too (`other_spellings`).
        &format!("-DDENY_READ_0_NFD={}", s(&odd.join("secret")).replace('\u{e9}', "e\u{301}")),
        &format!("-DWRITABLE_ROOT_0={}", s(&odd)),
        &format!("-DWRITABLE_ROOT_0_RO_0={}", s(&odd.join(".git"))),
        &format!("-DWRITABLE_ROOT_0_RO_0_NFD={}", s(&odd.join(".git")).replace('\u{e9}', "e\u{301}")),
        &format!("-DWRITABLE_ROOT_0_RO_1={}", s(&odd.join("missing"))),
        &format!("-DWRITABLE_ROOT_0_RO_1_NFD={}", s(&odd.join("missing")).replace('\u{e9}', "e\u{301}")),
        // The denied file is named by path: its root stays where it is (`pins::above_kept`).
        &format!("-DKEEP_IN_PLACE_0={}", s(&odd)),
        "--", "ls", "-a",
    ])[..]);
    assert!(prof.contains("(deny file-write-unlink (literal (param \"KEEP_IN_PLACE_0\")))"));
    assert!(prof.starts_with("(version 1)\n(deny default)\n"));
    assert!(prof.contains("(allow file-read*)\n(deny file-read* (literal (param \"DENY_READ_0\")) (subpath (param \"DENY_READ_0\")) (literal (param \"DENY_READ_0_NFD\")) (subpath (param \"DENY_READ_0_NFD\")))"));
    // The missing one in any case too, by its name below the root at its depth (no path written).
    let missing = format!("^{}/[mM][iI](([sS]|\u{17f})([sS]|\u{17f})|\u{df}|\u{1e9e})[iI][nN][gG](/.*)?$", "/[^/]+".repeat(odd.components().count() - 1));
    assert!(prof.contains(&format!("(allow file-write*\n  (require-all (subpath (param \"WRITABLE_ROOT_0\")) (require-not (literal (param \"WRITABLE_ROOT_0_RO_0\"))) (require-not (subpath (param \"WRITABLE_ROOT_0_RO_0\"))) (require-not (literal (param \"WRITABLE_ROOT_0_RO_0_NFD\"))) (require-not (subpath (param \"WRITABLE_ROOT_0_RO_0_NFD\"))) (require-not (literal (param \"WRITABLE_ROOT_0_RO_1\"))) (require-not (subpath (param \"WRITABLE_ROOT_0_RO_1\"))) (require-not (literal (param \"WRITABLE_ROOT_0_RO_1_NFD\"))) (require-not (subpath (param \"WRITABLE_ROOT_0_RO_1_NFD\"))) (require-not (regex #\"{missing}\"))))")), "{prof}");
    assert!(!prof.contains("network-outbound"), "network off, sockets blocked: (deny default) covers it");
    assert_eq!(plan.env.get("SANDSPAWN_SANDBOX").map(String::as_str), Some("seatbelt"));
    assert_eq!(plan.env.get("SANDSPAWN_NETWORK_DISABLED").map(String::as_str), Some("1"));
    assert_eq!((plan.status_fd, plan.report_fd, plan.helper), (None, None, None));
}

#[test]
fn seatbelt_read_only_network_and_sockets() {
    let (_t, w) = tmp();
    let p = policy(json!("read-only"), &w, Platform::Darwin);
    let plan = plan_with_env(&p, &w, Platform::Darwin, &["true"], &BTreeMap::new());
    assert_eq!(&plan.args[2..], &v(&["--", "true"])[..]);
    let prof = plan.profile.unwrap();
    check_sexpr(&prof).unwrap();
    assert!(!prof.contains("(allow file-write*\n") && !prof.contains("network-"));
    let p = policy(json!({"network": true}), &w, Platform::Darwin);
    let prof = seatbelt::profile(&p, None, &[], &[]).0;
    check_sexpr(&prof).unwrap();
    assert!(prof.contains("(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)"));
    let sock = w.join("agent.sock");
    let p = policy(json!({"allowUnixSockets": [s(&sock)]}), &w, Platform::Darwin);
    let (prof, params) = seatbelt::profile(&p, None, &[], &[]);
    check_sexpr(&prof).unwrap();
    assert!(prof.contains("(allow network-outbound (remote unix-socket (path-literal (param \"UNIX_SOCKET_0\"))))"));
    assert_eq!(params, vec![("UNIX_SOCKET_0".to_string(), sock)]);
    let p = policy(json!({"allowUnixSockets": true}), &w, Platform::Darwin);
    let prof = seatbelt::profile(&p, None, &[], &[]).0;
    check_sexpr(&prof).unwrap();
    assert!(prof.contains("(allow network-outbound (remote unix-socket))"));
}

#[test]
fn seatbelt_denies_planting_git_and_protected_names_at_any_depth() {
    let (_t, w) = tmp();
    let sub = w.join("libs/sub");
    fs::create_dir_all(sub.join(".git/hooks")).unwrap();
    fs::write(sub.join(".git/HEAD"), "x").unwrap();
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": [".envrc", ".mcp.json", "odd(name)"]}), &w, Platform::Darwin);
    let plan = plan_with_env(&p, &w, Platform::Darwin, &["true"], &BTreeMap::new());
    let prof = plan.profile.clone().unwrap();
    check_sexpr(&prof).unwrap();
    assert!(!prof.contains(&s(&w)), "paths only via -D params");
    // In any case: `.GIT` is `.git` on a case-insensitive volume.
    let git = "(deny file-write* (require-all (subpath (param \"WRITABLE_ROOT_0\")) (regex #\"/\\.[gG][iI][tT](/.*)?$\")))\n";
    // And in the spellings case folding takes to them (`.mcp.jſon`), or with a code point HFS+ ignores.
    let ignorable = crate::plan::seatbelt_case::ignorable_spelling(&[".envrc", ".mcp.json", "odd(name)"]);
    let names = format!("(deny file-write* (require-all (subpath (param \"WRITABLE_ROOT_0\")) (require-any (regex #\"/(\\.[eE][nN][vV][rR][cC]|\\.[mM][cC][pP]\\.[jJ]([sS]|\u{17f})[oO][nN]|[oO][dD][dD]\\([nN][aA][mM][eE]\\))(/.*)?$\") (regex #\"{ignorable}\")) (require-not (regex #\"/node_modules/\"))))\n");
    let allow = prof.find("(allow file-write*\n").unwrap();
    let (gi, ni) = (prof.find(git).expect(&prof), prof.find(&names).expect(&prof));
    assert!(allow < gi && gi < ni, "the denies follow the allow they restrict (last match wins)");
    // The nested repository found by the walk and the names at both tops are carved out too.
    let params: Vec<String> = plan.args.iter().filter(|a| a.starts_with("-DWRITABLE_ROOT_0_RO_")).cloned().collect();
    for path in [sub.join(".git"), w.join(".envrc"), sub.join(".envrc"), sub.join(".mcp.json")] {
        assert!(params.iter().any(|a| a.ends_with(&format!("={}", s(&path)))), "{} not carved: {params:?}", path.display());
    }
    // Off: neither rule.
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "protectGit": false, "protectedNames": []}), &w, Platform::Darwin);
    let prof = seatbelt::profile(&p, None, &[], &[]).0;
    assert!(!prof.contains("regex #\"/"), "{prof}");
}

/// A darwin plan with the allow-list, as the runner builds it: `endpoint` bound for the run.
fn allow_list_plan(w: &Path, endpoint: Option<&crate::network::loopback::Endpoint>) -> crate::Result<LaunchPlan> {
    let p = policy(json!({"mode": "workspace-write", "tmp": "read-only", "network": {"allowedDomains": ["registry.npmjs.org"]}}), w, Platform::Darwin);
    let env: BTreeMap<String, String> = [("NO_PROXY".to_string(), "corp.example".to_string()), ("JAVA_TOOL_OPTIONS".to_string(), "-Xss4m".to_string())].into();
    let cmd = v(&["npm", "install"]);
    build(&PlanRequest {
        command: &cmd, cwd: w, env: &env, policy: &p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: endpoint.is_some(), terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: endpoint,
    })
}

#[test]
fn seatbelt_allow_list_names_the_runs_proxy_and_its_credential() {
    let (_t, w) = tmp();
    let endpoint = crate::network::loopback::bind().unwrap().endpoint;
    let plan = allow_list_plan(&w, Some(&endpoint)).unwrap();
    let prof = plan.profile.clone().unwrap();
    check_sexpr(&prof).unwrap();
    let port = endpoint.port;
    assert!(prof.contains(&format!("(allow network-outbound (remote ip \"localhost:{port}\"))\n")), "{prof}");
    assert_eq!(prof.matches("network-outbound").count(), 1, "one outbound rule, the proxy's: {prof}");
    assert!(!prof.contains("(allow network-inbound") && !prof.contains("network-bind") && !prof.contains("(allow system-socket)\n"));
    assert!(!prof.contains(endpoint.credential.secret()), "the credential is no rule");
    let url = format!("http://sandspawn:{}@127.0.0.1:{port}", endpoint.credential.secret());
    for k in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "https_proxy", "npm_config_https_proxy", "PIP_PROXY"] {
        assert_eq!(plan.env.get(k), Some(&url), "{k}");
    }
    assert_eq!(plan.env.get("NO_PROXY").map(String::as_str), Some(""), "the caller's exclusions would go direct and fail unexplained");
    assert_eq!(plan.env.get("SANDSPAWN_NETWORK").map(String::as_str), Some("proxy"));
    assert!(plan.env["JAVA_TOOL_OPTIONS"].starts_with("-Xss4m -Dhttp.proxyHost=127.0.0.1"));
    assert!(!plan.env.contains_key("SANDSPAWN_NETWORK_DISABLED") && !plan.env.contains_key("npm_config_fetch_retries"));
    assert_eq!((plan.env["PIP_RETRIES"].as_str(), plan.env["CARGO_NET_RETRY"].as_str()), ("1", "1"), "a refused host is not retried for seconds");
    assert_eq!(plan.net_ctl_fd, None);
    // The credential appears in the plan's environment only, never in its argv.
    assert!(plan.args.iter().all(|a| !a.contains(endpoint.credential.secret())));
}

#[test]
fn seatbelt_allow_list_without_the_runners_proxy_is_refused() {
    let (_t, w) = tmp();
    let e = allow_list_plan(&w, None).unwrap_err();
    assert_eq!(e.code.as_str(), "ERR_SANDBOX_UNSUPPORTED");
    assert!(e.message.contains("spawnSandboxed"), "{}", e.message);
    // And a profile asked for without a port has no network at all.
    let p = policy(json!({"network": {"allowedDomains": ["x.example"]}}), &w, Platform::Darwin);
    assert!(!seatbelt::profile(&p, None, &[], &[]).0.contains("network-"));
}

#[test]
fn seatbelt_network_off_keeps_the_proxy_password_out_also_from_the_caches_variables() {
    let (_t, w) = tmp();
    let env = env_with_proxy_password();
    let mut p = policy(json!("read-only"), &w, Platform::Darwin);
    // `macos_run::prepare` appends to the caller's MAVEN_OPTS, read before the plan scrubs it.
    p.tool_caches.caches.push(crate::tool_caches::PrivateCache {
        name: "maven".into(), path: w.join("m2"), layers: Vec::new(), upper: None, work: None, dir: None,
        variables: [("MAVEN_OPTS".to_string(), "-Dhttps.proxyPassword=s3cr/et -Dmaven.repo.local=/store/m".to_string())].into(), before: None,
    });
    let plan = plan_with_env(&p, &w, Platform::Darwin, &["true"], &env);
    assert!(plan.env.values().all(|v| !v.contains("s3cr")), "{:?}", plan.env);
    assert_eq!(plan.env.get("MAVEN_OPTS").map(String::as_str), Some("-Dmaven.repo.local=/store/m"));
    assert_eq!(plan.env.get("JAVA_TOOL_OPTIONS").map(String::as_str), Some("-Xss4m"));
}
