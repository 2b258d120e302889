//! Questions without a proxy: a table answers (after a delay, or never), and the counts show
//! what was asked.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;

/// Answers from `answers` after `delay` (`None`: never; `Err`: a failing callback), counting
/// every question and the most open at once.
struct Table {
    answers: HashMap<String, Option<Result<Decision, String>>>,
    delay: Duration,
    asked: Mutex<Vec<Question>>,
    open: AtomicUsize,
    most_open: AtomicUsize,
    /// When set, no answer is given before the test opens it (`add_permits`): what must happen
    /// while questions are open then cannot be outrun by a delay on a loaded machine.
    gate: Option<Arc<tokio::sync::Semaphore>>,
}

struct Shared(Arc<Table>);

impl Asker for Shared {
    fn ask(&self, q: Question) -> Pin<Box<dyn Future<Output = Result<Decision, String>> + Send>> {
        let me = self.0.clone();
        me.asked.lock().unwrap().push(q.clone());
        let now = me.open.fetch_add(1, Ordering::SeqCst) + 1;
        me.most_open.fetch_max(now, Ordering::SeqCst);
        let answer = me.answers.get(&q.host).cloned().unwrap_or(Some(Ok(Decision::Deny)));
        let delay = me.delay;
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            if let Some(gate) = &me.gate {
                drop(gate.acquire().await);
            }
            let out = match answer {
                Some(a) => a,
                None => std::future::pending().await,
            };
            me.open.fetch_sub(1, Ordering::SeqCst);
            out
        })
    }
}

fn table(answers: &[(&str, Option<Result<Decision, String>>)], delay: Duration) -> Arc<Table> {
    Arc::new(Table {
        answers: answers.iter().map(|(h, a)| (h.to_string(), a.clone())).collect(),
        delay,
        asked: Mutex::new(Vec::new()),
        open: AtomicUsize::new(0),
        most_open: AtomicUsize::new(0),
        gate: None,
    })
}

/// A table that denies everything once `gate` is opened.
fn gated_table() -> (Arc<Table>, Arc<tokio::sync::Semaphore>) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let t = Table { gate: Some(gate.clone()), ..Arc::into_inner(table(&[], Duration::ZERO)).unwrap() };
    (Arc::new(t), gate)
}

/// Questions without the run's pace and with the most `maxQuestions`: what the tests of other
/// bounds ask would otherwise wait for its turn (4,096 questions take minutes at the pace).
fn unpaced(asker: Arc<dyn Asker>, timeout: Duration) -> Questions {
    let fast = crate::network::pace::Rate { burst: 1e9, per_second: 1e9 };
    Questions::bounded(asker, timeout, MOST_MAX_QUESTIONS, fast)
}

fn q(host: &str, port: u16) -> Question {
    Question { host: host.into(), port, protocol: Via::Connect }
}

async fn allowed(qs: &Arc<Questions>, question: Question) -> bool {
    qs.allowed(question, |fut| {
        tokio::spawn(fut);
    })
    .await
    .is_ok()
}

#[tokio::test]
async fn concurrent_requests_share_one_question_and_run_answers_stick() {
    let t = table(&[("a.test", Some(Ok(Decision::AllowRun))), ("b.test", Some(Ok(Decision::Allow))), ("c.test", Some(Ok(Decision::DenyRun)))], Duration::from_millis(50));
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(10)));
    let many = concurrently(&qs, (0..20).map(|_| q("a.test", 443)).collect()).await;
    assert!(many.iter().all(|a| *a), "all twenty allowed");
    assert!(allowed(&qs, q("a.test", 443)).await, "later requests: the run's answer, no question");
    assert!(allowed(&qs, q("b.test", 80)).await);
    assert!(allowed(&qs, q("b.test", 80)).await);
    assert!(!allowed(&qs, q("c.test", 443)).await);
    assert!(!allowed(&qs, q("c.test", 443)).await);
    let asked: Vec<(String, u16)> = t.asked.lock().unwrap().iter().map(|q| (q.host.clone(), q.port)).collect();
    assert_eq!(asked, [("a.test".into(), 443), ("b.test".into(), 80), ("b.test".into(), 80), ("c.test".into(), 443)], "allow is per request, *-run per run");
    let log = serde_json::to_value(qs.decisions().0).unwrap();
    assert_eq!(log[0], serde_json::json!({"host": "a.test", "port": 443, "decision": "allow-run", "source": "callback"}));
    assert_eq!(log.as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn no_answer_in_time_and_failed_callbacks_deny() {
    let t = table(&[("slow.test", None), ("broken.test", Some(Err("threw".into())))], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_millis(100)));
    assert!(!allowed(&qs, q("slow.test", 443)).await);
    assert!(!allowed(&qs, q("broken.test", 443)).await);
    let sources: Vec<(Decision, Source)> = qs.decisions().0.iter().map(|d| (d.decision, d.source)).collect();
    assert_eq!(sources, [(Decision::Deny, Source::Timeout), (Decision::Deny, Source::Error)]);
    assert!(!allowed(&qs, q("slow.test", 443)).await, "a timeout is no run answer: asked again, denied again");
    assert_eq!(t.asked.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn open_questions_are_bounded_per_run() {
    let answers: Vec<(String, Option<Result<Decision, String>>)> = (0..12).map(|i| (format!("h{i}.test"), Some(Ok(Decision::Allow)))).collect();
    let refs: Vec<(&str, Option<Result<Decision, String>>)> = answers.iter().map(|(h, a)| (h.as_str(), a.clone())).collect();
    let t = table(&refs, Duration::from_millis(30));
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(10)));
    let all = concurrently(&qs, (0..12).map(|i| q(&format!("h{i}.test"), 443)).collect()).await;
    assert!(all.iter().all(|a| *a));
    assert_eq!(t.asked.lock().unwrap().len(), 12);
    assert!(t.most_open.load(Ordering::SeqCst) <= MAX_OPEN, "at most {MAX_OPEN} open, saw {}", t.most_open.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_question_cancelled_with_the_run_denies() {
    let t = table(&[("x.test", None)], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t)), Duration::from_secs(60)));
    // The run's proxy is gone: its task runner drops the question at once.
    assert_eq!(qs.allowed(q("x.test", 443), drop).await, Err(Refusal::Declined));
}

/// `n` requests for `prefix0.test`, `prefix1.test`, ..., each a task of its own.
fn requests(qs: &Arc<Questions>, prefix: &str, n: usize) -> Vec<tokio::task::JoinHandle<Result<(), Refusal>>> {
    (0..n)
        .map(|i| {
            let (qs, question) = (qs.clone(), q(&format!("{prefix}{i}.test"), 443));
            tokio::spawn(async move { qs.allowed(question, |fut| drop(tokio::spawn(fut))).await })
        })
        .collect()
}

async fn until(what: impl Fn() -> bool) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while !what() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("reached in time");
}

#[tokio::test]
async fn a_question_every_request_of_which_went_away_is_dropped_unasked() {
    // Gated, not delayed: with answers after 100 ms, a loaded machine (CI) answered the live
    // questions before the abandoned ones were all queued, and some of those were then asked.
    let (t, gate) = gated_table();
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(60)));
    let live = requests(&qs, "live", MAX_OPEN);
    until(|| t.asked.lock().unwrap().len() == MAX_OPEN).await;
    // A command that opens a connection to a made-up name and closes it at once, many times.
    let gone = requests(&qs, "gone", 50);
    until(|| qs.state.lock().unwrap().pending.len() == MAX_OPEN + 50).await;
    gone.iter().for_each(|g| g.abort());
    until(|| qs.state.lock().unwrap().pending.len() == MAX_OPEN).await;
    gate.add_permits(tokio::sync::Semaphore::MAX_PERMITS);
    for l in live {
        assert_eq!(l.await.unwrap(), Err(Refusal::Declined));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(t.asked.lock().unwrap().len(), MAX_OPEN, "none of the abandoned questions was asked");
    assert_eq!(qs.state.lock().unwrap().reserved, 0, "an abandoned question gives its place among the allows back");
    assert_eq!(qs.decisions().0.len(), MAX_OPEN);
    assert!(qs.state.lock().unwrap().pending.is_empty());
    assert!(!allowed(&qs, q("gone7.test", 443)).await, "asked anew");
    assert_eq!(t.asked.lock().unwrap().len(), MAX_OPEN + 1);
}

#[tokio::test]
async fn past_the_waiting_bound_a_request_is_refused_at_once() {
    let t = table(&[], Duration::from_secs(3600));
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(3600)));
    let waiting = requests(&qs, "w", MAX_WAITING);
    until(|| qs.state.lock().unwrap().pending.len() == MAX_WAITING).await;
    let more = tokio::time::timeout(Duration::from_secs(1), qs.allowed(q("one-more.test", 443), |fut| drop(tokio::spawn(fut))));
    assert_eq!(more.await.expect("refused at once"), Err(Refusal::QuestionLimit));
    assert!(tokio::time::timeout(Duration::from_secs(1), allowed(&qs, q("w3.test", 443))).await.is_err(), "an open question is still joined");
    qs.end();
    for w in waiting {
        assert_eq!(w.await.unwrap(), Err(Refusal::Declined), "the end of the run denies every waiting request");
    }
    assert_eq!(t.asked.lock().unwrap().len(), MAX_OPEN);
}

#[tokio::test]
async fn nothing_is_asked_once_the_run_ended() {
    let t = table(&[], Duration::from_millis(100));
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(60)));
    let all = requests(&qs, "h", 40);
    until(|| t.asked.lock().unwrap().len() == MAX_OPEN).await;
    qs.end();
    for r in all {
        assert_eq!(r.await.unwrap(), Err(Refusal::Declined));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(t.asked.lock().unwrap().len(), MAX_OPEN, "the slots the end freed asked nothing");
    assert!(!allowed(&qs, q("later.test", 443)).await);
    assert_eq!(t.asked.lock().unwrap().len(), MAX_OPEN);
}

/// Each question asked by a task of its own, all at once.
async fn concurrently(qs: &Arc<Questions>, questions: Vec<Question>) -> Vec<bool> {
    let tasks: Vec<_> = questions
        .into_iter()
        .map(|question| {
            let qs = qs.clone();
            tokio::spawn(async move { allowed(&qs, question).await })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_run_answer_for_plain_http_is_not_one_for_a_tunnel() {
    let t = table(&[("a.test", Some(Ok(Decision::AllowRun)))], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(10)));
    let via = |protocol| Question { host: "a.test".into(), port: 8080, protocol };
    for protocol in [Via::Http, Via::Http, Via::Connect, Via::Socks5, Via::Connect] {
        assert!(allowed(&qs, via(protocol)).await);
    }
    let asked: Vec<Via> = t.asked.lock().unwrap().iter().map(|q| q.protocol).collect();
    assert_eq!(asked, [Via::Http, Via::Connect], "inspected requests and raw tunnels are asked about apart; CONNECT and SOCKS5 are both tunnels");
}

#[tokio::test]
async fn only_denials_are_left_out_of_the_list_and_allows_stay_bounded() {
    // MAX_DECISIONS made-up hosts denied, more past them, then the allowed host: it is listed.
    let t = table(&[("ok.test", Some(Ok(Decision::Allow)))], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(10)));
    for i in 0..MAX_DECISIONS + 10 {
        assert!(!allowed(&qs, q(&format!("h{i}.test"), 443)).await);
    }
    assert!(allowed(&qs, q("ok.test", 443)).await);
    let (log, omitted) = qs.decisions();
    assert_eq!((log.len(), omitted), (MAX_DECISIONS + 1, Omitted { denials: 10, repeated_allows: 0 }));
    assert_eq!((log[MAX_DECISIONS].host.as_str(), log[MAX_DECISIONS].decision), ("ok.test", Decision::Allow));

    // Past MAX_ALLOWS listed allows: a repeat for a listed host is asked and counted, another host
    // is refused unasked (its allow could not be listed).
    let t = table(&[("ok.test", Some(Ok(Decision::Allow))), ("new.test", Some(Ok(Decision::Allow)))], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_secs(10)));
    for _ in 0..MAX_ALLOWS + 3 {
        assert!(allowed(&qs, q("ok.test", 443)).await);
    }
    let before = t.asked.lock().unwrap().len();
    assert_eq!(qs.allowed(q("new.test", 443), |fut| drop(tokio::spawn(fut))).await, Err(Refusal::QuestionLimit));
    assert_eq!(t.asked.lock().unwrap().len(), before, "not asked");
    let (log, omitted) = qs.decisions();
    assert_eq!((log.len(), omitted), (MAX_ALLOWS, Omitted { denials: 0, repeated_allows: 3 }));
}

/// Answers `allow` to every question; one for a host starting with `slow` after `delay` (a
/// prompt, a policy service), others at once.
struct AllowAll {
    delay: Duration,
    asked: Mutex<Vec<String>>,
}

impl Asker for Arc<AllowAll> {
    fn ask(&self, q: Question) -> Pin<Box<dyn Future<Output = Result<Decision, String>> + Send>> {
        self.asked.lock().unwrap().push(q.host.clone());
        let delay = if q.host.starts_with("slow") { self.delay } else { Duration::ZERO };
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            Ok(Decision::Allow)
        })
    }
}

#[tokio::test]
async fn concurrent_questions_for_new_hosts_near_the_bound_never_give_an_unlisted_allow() {
    // A reviewer's run: the listed allows nearly full, then more concurrent tunnels to new hosts
    // than there is room for, each allowed after a while. Each allowed one is listed; the others
    // are refused unasked (`question_limit`), and nothing is counted as omitted.
    let room = 6;
    let asker = Arc::new(AllowAll { delay: Duration::from_millis(100), asked: Mutex::new(Vec::new()) });
    let qs = Arc::new(unpaced(Arc::new(asker.clone()), Duration::from_secs(10)));
    for _ in 0..MAX_ALLOWS - room {
        assert!(allowed(&qs, q("ok.test", 443)).await);
    }
    let new = requests(&qs, "slow", 10);
    let mut allowed_hosts = Vec::new();
    for (i, r) in new.into_iter().enumerate() {
        match r.await.unwrap() {
            Ok(()) => allowed_hosts.push(format!("slow{i}.test")),
            Err(refusal) => assert_eq!(refusal, Refusal::QuestionLimit),
        }
    }
    let (log, omitted) = qs.decisions();
    let listed: HashSet<&str> = log.iter().filter(|d| d.decision.allows()).map(|d| d.host.as_str()).collect();
    let unlisted: Vec<&String> = allowed_hosts.iter().filter(|h| !listed.contains(h.as_str())).collect();
    assert!(unlisted.is_empty(), "allowed but not listed: {unlisted:?}");
    let asked_new = asker.asked.lock().unwrap().iter().filter(|h| h.starts_with("slow")).count();
    assert_eq!((allowed_hosts.len(), asked_new), (room, room), "as many new hosts asked and allowed as the list has room for");
    assert_eq!((log.len(), omitted), (MAX_ALLOWS, Omitted::default()));
    assert_eq!(qs.state.lock().unwrap().reserved, 0, "every place held was taken or given back");
}

#[tokio::test]
async fn a_question_for_a_new_host_holds_a_place_among_the_allows_until_answered() {
    // Room for two more allows, both held by questions nobody answers: a third new host is refused
    // unasked, a repeat for a listed host is asked (and only counted: no place is free to list it);
    // once the two time out (denied), their places are free again.
    let t = table(&[("ok.test", Some(Ok(Decision::Allow))), ("new.test", Some(Ok(Decision::Allow))), ("hold0.test", None), ("hold1.test", None)], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t.clone())), Duration::from_millis(300)));
    for _ in 0..MAX_ALLOWS - 2 {
        assert!(allowed(&qs, q("ok.test", 443)).await);
    }
    let holds = requests(&qs, "hold", 2);
    until(|| qs.state.lock().unwrap().reserved == 2).await;
    assert_eq!(qs.allowed(q("new.test", 443), |fut| drop(tokio::spawn(fut))).await, Err(Refusal::QuestionLimit));
    assert!(allowed(&qs, q("ok.test", 443)).await, "a repeat for a listed host is still asked");
    for h in holds {
        assert_eq!(h.await.unwrap(), Err(Refusal::Declined));
    }
    assert!(allowed(&qs, q("new.test", 443)).await, "asked once the held places are free");
    let asked = t.asked.lock().unwrap().iter().filter(|q| q.host == "new.test").count();
    assert_eq!(asked, 1, "new.test asked only once there was a place for its allow");
    let (log, omitted) = qs.decisions();
    assert_eq!(log.last().map(|d| (d.host.as_str(), d.decision)), Some(("new.test", Decision::Allow)));
    assert_eq!((log.len(), omitted), (MAX_ALLOWS - 1 + 2, Omitted { denials: 0, repeated_allows: 1 }));
    assert_eq!(qs.state.lock().unwrap().reserved, 0);
}

#[tokio::test]
async fn a_question_dropped_with_the_run_gives_its_place_back_when_asked_anew() {
    let t = table(&[("y.test", Some(Ok(Decision::Allow)))], Duration::ZERO);
    let qs = Arc::new(unpaced(Arc::new(Shared(t)), Duration::from_secs(10)));
    assert_eq!(qs.allowed(q("y.test", 443), drop).await, Err(Refusal::Declined));
    assert_eq!(qs.state.lock().unwrap().reserved, 1, "a dead entry holds its place until replaced");
    assert!(allowed(&qs, q("y.test", 443)).await);
    assert_eq!(qs.state.lock().unwrap().reserved, 0);
    assert_eq!(qs.decisions().0.len(), 1);
}

/// Found by an attacker's review (net45, after net44 measured 21,412 calls in 8 s): a command
/// making up names had the caller asked about each. At most `maxQuestions` distinct hosts, ports
/// and kinds are asked about; another is refused unasked, and those asked about may be again.
#[tokio::test]
async fn at_most_max_questions_distinct_hosts_are_asked_about() {
    let t = table(&[], Duration::ZERO);
    let qs = Arc::new(Questions::bounded(Arc::new(Shared(t.clone())), Duration::from_secs(10), 3, crate::network::pace::QUESTIONS));
    for i in 0..3 {
        assert_eq!(qs.allowed(q(&format!("h{i}.test"), 443), |f| drop(tokio::spawn(f))).await, Err(Refusal::Declined));
    }
    for i in 3..6 {
        assert_eq!(qs.allowed(q(&format!("h{i}.test"), 443), |f| drop(tokio::spawn(f))).await, Err(Refusal::QuestionLimit), "h{i} refused unasked");
    }
    assert_eq!(qs.allowed(q("h0.test", 443), |f| drop(tokio::spawn(f))).await, Err(Refusal::Declined), "a host asked about before is asked again");
    let asked: Vec<String> = t.asked.lock().unwrap().iter().map(|q| q.host.clone()).collect();
    assert_eq!(asked, ["h0.test", "h1.test", "h2.test", "h0.test"]);
}

/// The same review: a command repeating one host answered `deny` had the caller asked each time.
/// Questions are asked at the run's pace; one whose turn does not come within its timeout is a
/// timeout deny, and the caller is not called for it.
#[tokio::test]
async fn questions_are_asked_at_the_run_s_pace() {
    let t = table(&[], Duration::ZERO);
    let slow = crate::network::pace::Rate { burst: 5.0, per_second: 0.001 };
    let qs = Arc::new(Questions::bounded(Arc::new(Shared(t.clone())), Duration::from_millis(200), 256, slow));
    for _ in 0..8 {
        assert!(!allowed(&qs, q("again.test", 443)).await);
    }
    assert_eq!(t.asked.lock().unwrap().len(), 5, "the burst, then none within the timeouts");
    let sources: Vec<Source> = qs.decisions().0.iter().map(|d| d.source).collect();
    assert_eq!(sources, [[Source::Callback; 5].as_slice(), &[Source::Timeout; 3]].concat());
}

/// The pace is for hosts not allowed: a host the caller answered `allow` is asked about again at
/// once, as an install fetching from it hundreds of times needs.
#[tokio::test]
async fn a_host_last_allowed_is_asked_again_without_waiting_for_the_pace() {
    let t = table(&[("ok.test", Some(Ok(Decision::Allow)))], Duration::ZERO);
    let slow = crate::network::pace::Rate { burst: 1.0, per_second: 0.001 };
    let qs = Arc::new(Questions::bounded(Arc::new(Shared(t.clone())), Duration::from_millis(200), 256, slow));
    for i in 0..20 {
        assert!(allowed(&qs, q("ok.test", 443)).await, "request {i}");
    }
    assert!(!allowed(&qs, q("other.test", 443)).await, "another host waits for the pace: a timeout");
    assert_eq!(t.asked.lock().unwrap().len(), 20);
}
