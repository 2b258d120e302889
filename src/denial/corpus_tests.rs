//! Replays `__test__/denial-corpus/corpus.json` (real outputs of real tools recorded under
//! sandspawn by `generate.js`) through both classifiers with each case's policy and cwd, asserts
//! every label, and prints precision and recall of `classify_sandbox_denial` beside Codex's
//! keyword heuristic (`is_likely_sandbox_denied`). Cases marked `knownMiss` are denials the
//! classifier does not detect: they must stay undetected (update the label when one gets fixed).

use serde_json::Value;

use super::*;

/// Detection counts over the corpus: a "positive" is a case labelled as a denial.
#[derive(Default)]
pub(super) struct Score {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Score {
    fn add(&mut self, labelled: bool, said: bool) {
        match (labelled, said) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }
    fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
    fn line(&self, name: &str) -> String {
        format!(
            "{name}: precision {:.1} %, recall {:.1} % (tp {}, fp {}, fn {}, tn {})",
            100.0 * self.precision(),
            100.0 * self.recall(),
            self.tp,
            self.fp,
            self.fn_,
            self.tn
        )
    }
}

fn load() -> Vec<Value> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/denial-corpus/corpus.json");
    let text = std::fs::read_to_string(&path)
        .expect("corpus.json (run node __test__/denial-corpus/generate.js)");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn denial_corpus_labels_hold() {
    let cases = load();
    assert!(cases.len() >= 150, "corpus has {} cases", cases.len());

    let mut failures = Vec::new();
    let (mut ours, mut codex, mut no_policy) = (Score::default(), Score::default(), Score::default());
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let sandbox = SandboxType::parse(case["sandboxType"].as_str().unwrap()).unwrap();
        let cwd = std::path::Path::new(case["cwd"].as_str().unwrap());
        let out = CommandOutput {
            exit_code: case["exitCode"].as_i64().map(|c| c as i32),
            signal: case["signal"].as_str(),
            stdout: case["stdout"].as_str().unwrap_or(""),
            stderr: case["stderr"].as_str().unwrap_or(""),
            aggregated: case["aggregatedOutput"].as_str().unwrap_or(""),
            cwd: Some(cwd),
        };
        let ctx = DenialContext::from_json(&case["policy"])
            .unwrap_or_else(|e| panic!("{id}: {e}"))
            .with_cwd(cwd);
        let got = classify_sandbox_denial(sandbox, &out, Some(&ctx));
        let expected = &case["expected"];
        // A known miss (the output says nothing the classifier could use) must stay a miss, so that
        // fixing it updates the label; it counts against recall.
        let known_miss = case["knownMiss"].is_string();
        let ok = known_miss && got.is_none() || !known_miss && match (&got, expected) {
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
            if let Some(p) = &d.path {
                assert!(p.starts_with('/'), "{id}: relative path {p}");
            }
        }
        let labelled = !expected.is_null();
        ours.add(labelled, got.is_some());
        codex.add(labelled, is_likely_sandbox_denied(sandbox, &out));
        no_policy.add(labelled, classify_sandbox_denial(sandbox, &out, None).is_some());
    }
    eprintln!("denial corpus: {} cases ({} denials)", cases.len(), ours.tp + ours.fn_);
    eprintln!("  {}", ours.line("classify_sandbox_denial (with the run's policy)"));
    eprintln!("  {}", no_policy.line("classify_sandbox_denial (no policy)"));
    eprintln!("  {}", codex.line("is_likely_sandbox_denied (Codex keywords)"));
    assert!(
        failures.is_empty(),
        "{} mislabelled corpus cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ours.precision() >= 0.98 && ours.recall() >= 0.95);
}
