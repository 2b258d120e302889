//! Replays `__test__/denial-corpus/corpus.json` (real outputs recorded under bwrap by
//! `generate.sh`) through the classifier with each case's policy as the context.

use serde_json::Value;

use super::*;

#[test]
fn denial_corpus_labels_hold() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/denial-corpus/corpus.json");
    let text = std::fs::read_to_string(&path)
        .expect("corpus.json (run __test__/denial-corpus/generate.sh)");
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() >= 40, "corpus has {} cases", cases.len());

    let mut failures = Vec::new();
    let mut heuristic_wrong = Vec::new();
    let mut no_ctx_wrong = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let sandbox = SandboxType::parse(case["sandboxType"].as_str().unwrap()).unwrap();
        let stdout = case["stdout"].as_str().unwrap_or("");
        let stderr = case["stderr"].as_str().unwrap_or("");
        let aggregated = format!("{stdout}{stderr}");
        let out = CommandOutput {
            exit_code: case["exitCode"].as_i64().map(|c| c as i32),
            signal: case["signal"].as_str(),
            stdout,
            stderr,
            aggregated: &aggregated,
        };
        let mut policy = case["policy"].clone();
        policy["cwd"] = case["cwd"].clone();
        let ctx = DenialContext::from_json(&policy).unwrap_or_else(|e| panic!("{id}: {e}"));
        let got = classify_sandbox_denial(sandbox, &out, Some(&ctx));
        let expected = &case["expected"];

        let ok = match (&got, expected) {
            (None, Value::Null) => true,
            (Some(d), Value::Object(e)) => {
                d.reason.as_str() == e["reason"].as_str().unwrap()
                    && d.kind.as_str() == e["kind"].as_str().unwrap()
                    && d.path.as_deref() == e["path"].as_str()
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{id}: expected {expected}, got {got:?}"));
        }
        if let Some(d) = &got {
            assert!(d.snippet.chars().count() <= 512, "{id}");
        }
        let truly_denied = !expected.is_null();
        if is_likely_sandbox_denied(sandbox, &out) != truly_denied {
            heuristic_wrong.push(id);
        }
        if classify_sandbox_denial(sandbox, &out, None).is_some() != truly_denied {
            no_ctx_wrong.push(id);
        }
    }
    let denials = cases.iter().filter(|c| !c["expected"].is_null()).count();
    eprintln!(
        "denial corpus: {} cases ({} denials, {} not); classify_sandbox_denial with policy: {} wrong; \
         without policy: {} wrong {:?}; is_likely_sandbox_denied (Codex keywords): {} wrong {:?}",
        cases.len(),
        denials,
        cases.len() - denials,
        failures.len(),
        no_ctx_wrong.len(),
        no_ctx_wrong,
        heuristic_wrong.len(),
        heuristic_wrong
    );
    assert!(
        failures.is_empty(),
        "mislabelled corpus cases:\n{}",
        failures.join("\n")
    );
}
