//! Asking about a host while its request waits (`NetworkPolicy.onRequest`): the run's proxy holds
//! a connection to a host on neither list until the caller answers. An address literal is asked
//! about only once it passed the address guard; a name before it is looked up (so a name the
//! command makes up reaches no name server unless the caller allows it), and an allowed name that
//! resolves to a refused address is then refused as `private_address`.
//!
//! One question per host, port and kind (plain HTTP, or a tunnel: CONNECT and SOCKS5) at a time:
//! concurrent requests for it wait for the same answer. `allow-run` and `deny-run` answer every
//! later request of the run for that host, port and kind. The
//! questions in flight are bounded per run (`MAX_OPEN`): a command that opens hundreds of unknown
//! hosts at once queues behind them, each within its timeout; at most `MAX_WAITING` wait at once,
//! and a request beyond is refused without a question (`question_limit`). No answer in time, a
//! callback that throws, rejects or answers something else: a deny. The question runs as a task of
//! the proxy, so a client that gives up does not cancel the answer the others wait for; but a
//! question every client of which gave up before its turn is dropped unasked (a command that opens
//! and closes connections to made-up names in a loop queued one per connection without bound). The
//! end of the run (`end`) cancels every question still open, and none is asked after it.
//!
//! What a command can make the caller answer is bounded per run, since each question calls the
//! host's JavaScript or asks a person (an attacker's review, net45, measured 21,412 calls in 8 s of
//! a command making up names): questions are asked at the run's pace (`pace::QUESTIONS`, waited
//! for within the question's timeout; not a host whose last answer allowed it), and at most
//! `maxQuestions` distinct hosts, ports and kinds are asked about; a question about another is
//! refused unasked (`question_limit`).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use std::sync::Weak;

use tokio::sync::{watch, Semaphore};
use tokio_util::sync::CancellationToken;

use super::denials::Via;
use super::pace::{Paced, Rate, QUESTIONS};
use super::policy::{Refusal, DEFAULT_MAX_QUESTIONS, MOST_MAX_QUESTIONS};

/// What the caller answered (`NetworkDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    Allow,
    Deny,
    AllowRun,
    DenyRun,
}

impl Decision {
    pub fn parse(s: &str) -> Option<Decision> {
        match s {
            "allow" => Some(Decision::Allow),
            "deny" => Some(Decision::Deny),
            "allow-run" => Some(Decision::AllowRun),
            "deny-run" => Some(Decision::DenyRun),
            _ => None,
        }
    }

    fn allows(self) -> bool {
        matches!(self, Decision::Allow | Decision::AllowRun)
    }

    fn for_the_run(self) -> bool {
        matches!(self, Decision::AllowRun | Decision::DenyRun)
    }
}

/// Where a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Callback,
    /// No answer within `requestTimeoutMs`: denied.
    Timeout,
    /// The callback threw, rejected or answered something that is no decision: denied.
    Error,
}

/// One entry of `SpawnResult.networkDecisions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkDecision {
    pub host: String,
    pub port: u16,
    pub decision: Decision,
    pub source: Source,
}

/// What the caller is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub host: String,
    pub port: u16,
    pub protocol: Via,
}

/// The caller's side: the binding calls JavaScript; tests answer from a table. `Err` is a callback
/// that failed (its text is for the caller's own warning, already given).
pub trait Asker: Send + Sync {
    fn ask(&self, q: Question) -> Pin<Box<dyn Future<Output = Result<Decision, String>> + Send>>;
}

/// `Arc<dyn Asker>` that can sit in a request (which is `Debug` and `Clone`).
#[derive(Clone)]
pub struct AskHandle(pub Arc<dyn Asker>);

impl std::fmt::Debug for AskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AskHandle")
    }
}

/// Questions in flight per run; more wait for a free one (within their timeout).
pub const MAX_OPEN: usize = 4;
/// Questions of a run being asked or waiting for an open slot; a request for another host beyond
/// them is refused at once (`Refusal::QuestionLimit`). As many as the run's connections.
pub const MAX_WAITING: usize = 256;
/// Deny decisions (`deny`, `deny-run`, timeouts, errors) listed per run; later ones still apply,
/// only not listed: `omitted` counts them. Allow decisions never count against it: a command that
/// asks about hundreds of made-up hosts first must not hide the host the caller let data go to.
pub const MAX_DECISIONS: usize = 256;
/// Allow decisions listed per run, each in order. Past them a repeated allow for a host, port and
/// kind already listed is only counted (`Omitted::repeated_allows`: the list already says data may
/// have gone there), and a question about any other is not asked: refused
/// (`Refusal::QuestionLimit`), so no allow ever goes unlisted and the list stays bounded (an
/// `allow` answers one request, so a long run could otherwise be asked without end). A question
/// about a host not listed holds a place among them while it is open (`State::reserved`): checked
/// only when asked, concurrent questions near the bound were all asked, and their allows went
/// unlisted.
pub const MAX_ALLOWS: usize = 4096;
/// `deny-run` answers kept per run (see `Questions::ask`).
pub const MAX_DENIED_FOR_RUN: usize = 4096;
// Every question's allow has a place among the listed ones.
const _: () = assert!(MOST_MAX_QUESTIONS <= MAX_ALLOWS);

/// What one question covers: a host and port, and whether the proxy parses the requests (plain
/// HTTP, `true`) or moves raw bytes (a CONNECT or SOCKS5 tunnel): a caller that allowed inspected
/// requests to a host has not allowed a tunnel there.
type Key = (String, u16, bool);

/// The questions of one run.
pub struct Questions {
    asker: Arc<dyn Asker>,
    timeout: Duration,
    /// Distinct keys the caller may be asked about (`maxQuestions`).
    most: usize,
    /// The run's pace of questions asked (`pace::QUESTIONS`).
    pace: Paced,
    open: Arc<Semaphore>,
    state: Mutex<State>,
    /// Cancelled when the run ends (`end`): nothing is asked after it.
    over: CancellationToken,
}

type Answer = watch::Sender<Option<bool>>;

/// A question being asked or waiting for a slot.
struct Pending {
    /// Where its answer will be. Weak: the question's task holds the sender, so a question dropped
    /// with the run denies its waiters, and the task sees when no request waits for it any more
    /// (no receiver left).
    answer: Weak<Answer>,
    /// Its key had no listed allow when it was asked: it holds a place among `MAX_ALLOWS`.
    reserved: bool,
    /// Its key was never asked about: it holds a place among `maxQuestions` (`State::counting`).
    counted: bool,
}

/// Decisions made but not listed, apart: an omitted allow is always one for a host, port and kind
/// the list already has an allow for, never one the list does not show.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Omitted {
    /// Deny decisions past `MAX_DECISIONS`.
    pub denials: u64,
    /// Repeated allows past `MAX_ALLOWS`.
    pub repeated_allows: u64,
}

#[derive(Default)]
struct State {
    /// `allow-run` (true) and `deny-run` (false) answers.
    for_the_run: HashMap<Key, bool>,
    /// Questions being asked or waiting for a slot.
    pending: HashMap<Key, Pending>,
    /// `pending` questions that hold a place among `MAX_ALLOWS` (`Pending::reserved`).
    reserved: usize,
    /// Keys the caller was asked about (at most `maxQuestions`).
    asked: HashSet<Key>,
    /// `pending` questions about keys not in `asked` (`Pending::counted`).
    counting: usize,
    /// Keys of `asked` whose last answer allowed: asked about again without waiting for the pace
    /// (the caller let the command talk to them; answering `allow` per request is its choice).
    lately_allowed: HashSet<Key>,
    log: Vec<NetworkDecision>,
    /// Deny decisions in `log`.
    denials_listed: usize,
    /// The questions an allow decision in `log` answered (at most `MAX_ALLOWS`).
    allows_listed: HashSet<Key>,
    /// Allow decisions in `log` (repeats for one key included).
    allows_count: usize,
    omitted: Omitted,
}

impl State {
    /// Places among `MAX_ALLOWS` left: neither listed nor held by an open question.
    fn allows_room(&self) -> usize {
        MAX_ALLOWS.saturating_sub(self.allows_count + self.reserved)
    }

    /// A question whose allow is already listed may always be asked; another only while its allow
    /// has a place it can hold until answered.
    fn may_ask(&self, key: &Key) -> bool {
        self.allows_listed.contains(key) || self.allows_room() > 0
    }

    /// A key asked about before may be again; another only while fewer than `most` keys were
    /// asked about or hold a place as open questions.
    fn may_ask_anew(&self, key: &Key, most: usize) -> bool {
        self.asked.contains(key) || self.asked.len() + self.counting < most
    }

    /// `key` is being asked about, answered through `answer`. A dead entry it replaces (a question
    /// dropped with the run) gives its place back.
    fn pend(&mut self, key: &Key, answer: Weak<Answer>) {
        let reserved = !self.allows_listed.contains(key);
        let counted = !self.asked.contains(key);
        self.reserved += reserved as usize;
        self.counting += counted as usize;
        if let Some(old) = self.pending.insert(key.clone(), Pending { answer, reserved, counted }) {
            self.reserved -= old.reserved as usize;
            self.counting -= old.counted as usize;
        }
    }

    /// The caller is asked about `key`: its place among `maxQuestions` is taken for the run.
    fn asking(&mut self, key: &Key) {
        if let Some(p) = self.pending.get_mut(key) {
            self.counting -= std::mem::take(&mut p.counted) as usize;
        }
        self.asked.insert(key.clone());
    }

    /// `key` is no longer asked about: its place, if it held one, is free (or `record` takes it).
    fn unpend(&mut self, key: &Key) {
        if let Some(old) = self.pending.remove(key) {
            self.reserved -= old.reserved as usize;
            self.counting -= old.counted as usize;
        }
    }

    /// List `d` (the answer to `key`, no longer pending) unless its bound is reached; then count it.
    /// An allow for a key not listed yet is always listed: its question held a place (`pend`).
    fn record(&mut self, key: &Key, d: NetworkDecision) {
        let listed = if d.decision.allows() {
            let new = !self.allows_listed.contains(key);
            debug_assert!(!new || self.allows_room() > 0, "a new host's allow had no place held");
            let list = new || self.allows_room() > 0;
            if list {
                self.allows_count += 1;
                self.allows_listed.insert(key.clone());
            } else {
                self.omitted.repeated_allows += 1;
            }
            list
        } else {
            let list = self.denials_listed < MAX_DECISIONS;
            self.denials_listed += list as usize;
            self.omitted.denials += !list as u64;
            list
        };
        if listed {
            self.log.push(d);
        }
    }
}

/// Where the answer of a question comes from: one already given for the run, one being asked, or
/// a new question (whose sender the caller must complete).
enum Lookup {
    Known(bool),
    Wait(watch::Receiver<Option<bool>>),
    Ask(Arc<Answer>, watch::Receiver<Option<bool>>),
    /// `MAX_WAITING` questions are open, or `MAX_ALLOWS` allows are listed or held by open
    /// questions and none for this key, or `maxQuestions` keys were asked about and not this one.
    Full,
}

impl Questions {
    pub fn new(asker: Arc<dyn Asker>, timeout: Duration) -> Questions {
        Self::bounded(asker, timeout, DEFAULT_MAX_QUESTIONS, QUESTIONS)
    }

    /// Questions about at most `most` distinct keys, asked at `rate`.
    pub fn bounded(asker: Arc<dyn Asker>, timeout: Duration, most: usize, rate: Rate) -> Questions {
        let over = CancellationToken::new();
        let open = Arc::new(Semaphore::new(MAX_OPEN));
        Questions { asker, timeout, most, pace: Paced::new(rate), open, state: Mutex::new(State::default()), over }
    }

    /// The run ended: every open question is cancelled (a deny), and none is asked any more.
    pub fn end(&self) {
        self.over.cancel();
    }

    /// `Ok` when the request may go on, else why not (`Declined`, `QuestionLimit`). `spawn` runs
    /// the question as a task of the run's proxy.
    pub async fn allowed(self: &Arc<Self>, q: Question, spawn: impl FnOnce(Pin<Box<dyn Future<Output = ()> + Send>>)) -> Result<(), Refusal> {
        let key = (q.host.clone(), q.port, q.protocol == Via::Http);
        let mut rx = match self.lookup(&key) {
            Lookup::Known(allowed) => return allowed.then_some(()).ok_or(Refusal::Declined),
            Lookup::Full => return Err(Refusal::QuestionLimit),
            Lookup::Wait(rx) => rx,
            Lookup::Ask(tx, rx) => {
                let me = self.clone();
                spawn(Box::pin(async move { me.ask(q, key, tx).await }));
                rx
            }
        };
        // A question cancelled with the run (sender dropped, or the run over) is a deny.
        let answer = tokio::select! {
            biased;
            _ = self.over.cancelled() => None,
            a = rx.wait_for(|a| a.is_some()) => a.ok().and_then(|a| *a),
        };
        (answer == Some(true)).then_some(()).ok_or(Refusal::Declined)
    }

    fn lookup(&self, key: &Key) -> Lookup {
        let mut st = self.state.lock().unwrap();
        if let Some(allowed) = st.for_the_run.get(key) {
            return Lookup::Known(*allowed);
        }
        if let Some(tx) = st.pending.get(key).and_then(|p| p.answer.upgrade()) {
            return Lookup::Wait(tx.subscribe());
        }
        // Questions dropped with the run leave dead entries; they count until then.
        if st.pending.len() >= MAX_WAITING || !st.may_ask(key) || !st.may_ask_anew(key, self.most) {
            return Lookup::Full;
        }
        let (tx, rx) = watch::channel(None);
        let tx = Arc::new(tx);
        st.pend(key, Arc::downgrade(&tx));
        Lookup::Ask(tx, rx)
    }

    async fn ask(&self, q: Question, key: Key, tx: Arc<Answer>) {
        let (decision, source) = match tokio::time::timeout(self.timeout, self.asked(q, &key, &tx)).await {
            // The run ended, or nobody waits any more: nothing to decide or record.
            Ok(None) => return,
            Ok(Some(Ok(d))) => (d, Source::Callback),
            Ok(Some(Err(_))) => (Decision::Deny, Source::Error),
            Err(_) => (Decision::Deny, Source::Timeout),
        };
        {
            let mut st = self.state.lock().unwrap();
            // `allow-run` answers are bounded by `MAX_ALLOWS`; `deny-run` ones by this: a command
            // asking about endless made-up hosts, each answered `deny-run`, grew the map without
            // bound. Past it, a host denied for the run is asked about again.
            let denied_for_run = st.for_the_run.values().filter(|allowed| !**allowed).count();
            if decision.for_the_run() && (decision.allows() || denied_for_run < MAX_DENIED_FOR_RUN) {
                st.for_the_run.insert(key.clone(), decision.allows());
            }
            st.unpend(&key);
            if decision.allows() {
                st.lately_allowed.insert(key.clone());
            } else {
                st.lately_allowed.remove(&key);
            }
            let d = NetworkDecision { host: key.0.clone(), port: key.1, decision, source };
            st.record(&key, d);
        }
        tx.send_replace(Some(decision.allows()));
    }

    /// The caller's answer once a slot is free and its turn in the run's pace has come, or `None`:
    /// the run ended, or every request waiting for it went away first (then it is no longer
    /// pending). Cancellation is checked first at every step, so a slot freed by the end of the
    /// run never calls the asker.
    async fn asked(&self, q: Question, key: &Key, tx: &Answer) -> Option<Result<Decision, String>> {
        let _slot = loop {
            tokio::select! {
                biased;
                _ = self.over.cancelled() => return None,
                _ = tx.closed() => if self.abandoned(key, tx) { return None },
                slot = self.open.acquire() => break slot,
            }
        };
        // Its turn in the run's pace, holding one of the run's open questions meanwhile: all but a
        // host the caller last allowed, which an install may fetch from hundreds of times.
        let allowed_before = self.state.lock().unwrap().lately_allowed.contains(key);
        if !allowed_before {
            tokio::select! {
                biased;
                _ = self.over.cancelled() => return None,
                _ = self.pace.turn() => {}
            }
        }
        if self.over.is_cancelled() || self.abandoned(key, tx) {
            return None;
        }
        self.state.lock().unwrap().asking(key);
        tokio::select! {
            biased;
            _ = self.over.cancelled() => None,
            a = self.asker.ask(q) => Some(a),
        }
    }

    /// No request waits for `key`'s answer: it is no longer pending. Under the state's lock, so
    /// a request that joins it (`lookup`) is either counted here or starts a question of its own.
    fn abandoned(&self, key: &Key, tx: &Answer) -> bool {
        let mut st = self.state.lock().unwrap();
        let gone = tx.receiver_count() == 0;
        if gone {
            st.unpend(key);
        }
        gone
    }

    /// The decisions listed so far, in the order made, and how many more were made but not listed
    /// (`MAX_DECISIONS`, `MAX_ALLOWS`).
    pub fn decisions(&self) -> (Vec<NetworkDecision>, Omitted) {
        let st = self.state.lock().unwrap();
        (st.log.clone(), st.omitted)
    }
}

#[cfg(test)]
mod tests;
