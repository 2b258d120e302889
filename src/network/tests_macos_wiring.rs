//! The macOS wiring of the allow-list, run on Linux without Seatbelt: the runner's own steps
//! (`for_run::before_plan`, the Seatbelt plan and its environment, `for_run::start`) with a real
//! client (curl) given the plan's environment as the command would be, and curl without the
//! credential as another local process would be. Only `sandbox-exec` itself does not run here (the
//! profile's decisions are checked by `plan::seatbelt_eval`). Nothing leaves 127.0.0.1: the one
//! name asked for, `evil.test`, is refused by the policy before any lookup.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::denials::Via;
use super::for_run;
use super::policy::Refusal;
use crate::plan::test_support::policy;
use crate::plan::{build, PlanRequest};
use crate::platform::Platform;

/// An HTTP server on 127.0.0.1 answering `hello <path>` and counting requests.
async fn upstream() -> (u16, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (port, count) = (l.local_addr().unwrap().port(), Arc::new(AtomicUsize::new(0)));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                seen.fetch_add(1, Ordering::SeqCst);
                let path = String::from_utf8_lossy(&buf).split(' ').nth(1).unwrap_or("").to_string();
                let body = format!("hello {path}");
                let _ = s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).as_bytes()).await;
            });
        }
    });
    (port, count)
}

/// `curl -s ARGS` with exactly `env`; stdout and the exit code.
async fn curl(env: BTreeMap<String, String>, args: Vec<String>) -> (String, i32) {
    tokio::task::spawn_blocking(move || {
        let out = Command::new("curl").arg("-s").arg("--max-time").arg("10").args(&args).env_clear().envs(&env).output().expect("curl is installed");
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code().unwrap_or(-1))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_reaches_allowed_hosts_with_the_plans_environment_and_nobody_else_can_use_its_proxy() {
    let (up, requests) = upstream().await;
    let t = tempfile::tempdir().unwrap();
    let w = t.path().canonicalize().unwrap();
    let p = policy(json!({"mode": "read-only", "network": {"allowedDomains": ["127.0.0.1"], "allowPrivateAddresses": ["127.0.0.1"]}}), &w, Platform::Darwin);
    assert!(for_run::before_plan(&p, Platform::Linux).unwrap().is_none(), "Linux binds inside the sandbox instead");
    let loopback = for_run::before_plan(&p, Platform::Darwin).unwrap().expect("a listener for the macOS plan");
    let endpoint = loopback.endpoint.clone();
    let env: BTreeMap<String, String> = [("PATH", std::env::var("PATH").unwrap()), ("HOME", w.to_string_lossy().into_owned())].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let command = vec!["curl".to_string()];
    let plan = build(&PlanRequest {
        command: &command, cwd: &w, env: &env, policy: &p, platform: Platform::Darwin, bwrap: None, resolved_program: None,
        helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: Some(&endpoint),
    })
    .unwrap();
    assert_eq!(plan.program.to_str(), Some("/usr/bin/sandbox-exec"));
    assert_eq!(plan.net_ctl_fd, None, "no bridge on macOS");
    let proxy = for_run::start(&p, None, Some(loopback), None).unwrap().expect("the run's proxy");

    // The command: plain HTTP (HTTP_PROXY), a CONNECT tunnel (-p) and SOCKS5 with the same credential.
    let url = |path: &str| format!("http://127.0.0.1:{up}/{path}");
    let socks = plan.env["ALL_PROXY"].replacen("http://", "socks5h://", 1);
    assert_eq!(curl(plan.env.clone(), vec![url("plain")]).await, ("hello /plain".into(), 0));
    assert_eq!(curl(plan.env.clone(), vec!["-p".into(), url("tunnel")]).await, ("hello /tunnel".into(), 0));
    assert_eq!(curl(plan.env.clone(), vec!["--proxy".into(), socks, url("socks")]).await, ("hello /socks".into(), 0));
    let denied = curl(plan.env.clone(), vec!["-o".into(), "/dev/null".into(), "-w".into(), "%{http_code}".into(), "http://evil.test/".into()]).await;
    assert_eq!(denied, ("403".into(), 0), "the credential opens the proxy, not the policy");

    // Another local process: the port without the credential.
    let outsider: BTreeMap<String, String> = [("PATH".to_string(), std::env::var("PATH").unwrap())].into();
    let bare = format!("127.0.0.1:{}", endpoint.port);
    let http = curl(outsider.clone(), vec!["-o".into(), "/dev/null".into(), "-w".into(), "%{http_code}".into(), "--proxy".into(), format!("http://{bare}"), url("stolen")]).await;
    assert_eq!(http, ("407".into(), 0));
    let (_, tunnel) = curl(outsider.clone(), vec!["-p".into(), "--proxy".into(), format!("http://{bare}"), url("stolen")]).await;
    assert_eq!(tunnel, 56, "CONNECT refused with 407");
    let (_, socks) = curl(outsider, vec!["--proxy".into(), format!("socks5h://{bare}"), url("stolen")]).await;
    assert_eq!(socks, 97, "SOCKS5 without the user name and password");
    assert_eq!(requests.load(Ordering::SeqCst), 3, "only the command's three requests reached the upstream");

    let denials = proxy.finish().await.denials;
    let shown: Vec<(&str, Via, Refusal)> = denials.iter().map(|d| (d.host.as_str(), d.via, d.reason)).collect();
    assert_eq!(
        shown,
        vec![("evil.test", Via::Http, Refusal::NotAllowed), ("127.0.0.1", Via::Http, Refusal::Unauthenticated), ("127.0.0.1", Via::Connect, Refusal::Unauthenticated), ("", Via::Socks5, Refusal::Unauthenticated)]
    );
}
