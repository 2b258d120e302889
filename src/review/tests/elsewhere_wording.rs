//! What a risk says of a file another tool's configuration names (`elsewhere::By`). Found by an
//! attacker's review (hostb37): every such file was said with git's words ("a repository's
//! configuration includes it (include.path), and git on the host reads it ...") whichever tool
//! named it, so a reviewer was told git reads the script an `.envrc` sources or the program a
//! `.vscode/settings.json` names. Each must say the tool whose configuration names it.

use super::*;

/// The details of the set's risks, by path below the workspace.
fn details_of(f: &Fixture) -> Vec<(String, String)> {
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let ws = f.ws.to_string_lossy().into_owned();
    s.host_risks.iter().map(|r| (r.path.strip_prefix(&ws).unwrap_or(&r.path).to_string(), r.detail.clone())).collect()
}

#[test]
fn a_file_another_tools_configuration_names_is_said_as_that_tools() {
    let mut f = fixture();
    // A repository at `g/` including a file of its worktree: git's own words stay git's.
    for (rel, text) in [("g/.git/HEAD", "ref: refs/heads/main\n"), ("g/.git/config", "[include]\n\tpath = ../tools/gitconfig\n"), ("g/tools/gitconfig", "[alias]\n\tst = status\n")] {
        put(&f.ws, rel, text);
    }
    std::fs::create_dir_all(f.ws.join("g/.git/objects")).unwrap();
    std::fs::create_dir_all(f.ws.join("g/.git/refs/heads")).unwrap();
    // (the configuration, its text, the file it names, words the risk must hold)
    let cases = [
        (".cargo/config.toml", "[build]\nrustc-wrapper = \"tools/wrap.sh\"\n", "tools/wrap.sh", ".cargo configuration"),
        (".yarnrc.yml", "yarnPath: .yarn/releases/yarn-4.5.0.cjs\n", ".yarn/releases/yarn-4.5.0.cjs", "yarn configuration"),
        (".mvn/jvm.config", "-javaagent:tools/agent.jar\n", "tools/agent.jar", ".mvn directory"),
        (".envrc", "source_env scripts/dev-env.sh\n", "scripts/dev-env.sh", "an .envrc sources"),
        (".vscode/settings.json", "{ \"clangd.path\": \"tools/clangd\" }\n", "tools/clangd", "editor's project settings"),
        (".idea/watcherTasks.xml", "<option name=\"program\" value=\"$ProjectFileDir$/tools/fmt.sh\" />\n", "tools/fmt.sh", "editor's project settings"),
        ("mise.toml", "[env]\n_.source = \"scripts/mise-env.sh\"\n", "scripts/mise-env.sh", "mise configuration"),
    ];
    for (config, text, named, _) in &cases {
        put(&f.ws, config, text);
        put(&f.ws, named, "exit 0\n");
    }
    begin_now(&mut f);
    let up = f.set.upper(0);
    for (_, _, named, _) in &cases {
        put(&up, named, "touch /tmp/pwned\n");
    }
    let details = details_of(&f);
    for (config, _, named, says) in &cases {
        let at = format!("/{named}");
        let Some((_, detail)) = details.iter().find(|(p, _)| *p == at) else { panic!("{at} ({config}): no risk in {details:?}") };
        assert!(detail.contains(says), "{at} ({config}) must say {says:?}: {detail}");
        assert!(!detail.contains("include.path"), "{at} ({config}) said with git's words: {detail}");
    }
    put(&up, "g/tools/gitconfig", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
    let details = details_of(&f);
    let git = details.iter().find(|(p, _)| p == "/g/tools/gitconfig").map(|(_, d)| d.as_str());
    assert!(git.is_some_and(|d| d.contains("include.path") && !d.contains("cargo")), "{git:?}");
}
