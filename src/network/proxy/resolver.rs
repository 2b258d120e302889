//! How the proxy turns host names into addresses: `getaddrinfo` in processes of its own (the
//! helper's `--resolve`), bounded per run and per process, and killed as soon as nobody waits for
//! the answer, so one run's slow names delay nobody else, not even after the run has ended.

use std::net::IpAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::network::pace::{Paced, LOOKUPS};
use crate::network::host::canonical_ip;

/// A lookup (waiting for a slot included) that takes longer fails, and its process is killed.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);
/// Lookups one run has in flight at once (each in a process of its own, `getaddrinfo` being
/// blocking and a blocked thread unkillable): a command that asks for thousands of slow names
/// waits for these, and nothing else of the host does.
pub const LOOKUPS_PER_RUN: usize = 4;
/// Lookups in flight in this process, over all runs: the most lookup processes at once.
const LOOKUPS_IN_PROCESS: usize = 32;
/// The longest answer read from a lookup process (a name has a few dozen addresses at most).
const MAX_ANSWER: u64 = 64 * 1024;

/// The process-wide lookup slots. A slot is held by the caller waiting for an answer, never by a
/// lookup nobody waits for: that one is killed (`LookupProcess`'s drop), so runs that ended or
/// gave up leave every slot to the live ones.
static PROCESS_LOOKUPS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(LOOKUPS_IN_PROCESS);

pub use sandspawn_helper::getaddrinfo::LookupError;

/// How long a run reuses a name's addresses: each lookup is a process of its own (about 2 ms), and
/// an install opens hundreds of connections to the same registry. Short, as a resolver's cache is;
/// reusing an answer also keeps a name from changing its addresses between two connections.
const ANSWER_REUSED_FOR: Duration = Duration::from_secs(30);
/// Names whose answers a run keeps (a command that asks for thousands of names is not helped).
const ANSWERS_KEPT: usize = 256;

/// One run's lookups: its slots (`LOOKUPS_PER_RUN`), its pace (`pace::LOOKUPS`) and the answers it
/// may reuse.
pub struct RunLookups {
    slots: std::sync::Arc<tokio::sync::Semaphore>,
    pace: Paced,
    answers: std::sync::Mutex<std::collections::HashMap<String, (std::time::Instant, Vec<IpAddr>)>>,
}

impl RunLookups {
    pub fn new() -> RunLookups {
        RunLookups {
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(LOOKUPS_PER_RUN)),
            pace: Paced::new(LOOKUPS),
            answers: Default::default(),
        }
    }

    fn reused(&self, name: &str) -> Option<Vec<IpAddr>> {
        let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers.get(name).filter(|(at, _)| at.elapsed() < ANSWER_REUSED_FOR).map(|(_, a)| a.clone())
    }

    fn keep(&self, name: &str, addrs: &[IpAddr]) {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers.retain(|_, (at, _)| at.elapsed() < ANSWER_REUSED_FOR);
        if answers.len() < ANSWERS_KEPT || answers.contains_key(name) {
            answers.insert(name.to_string(), (std::time::Instant::now(), addrs.to_vec()));
        }
    }
}

/// How host names become addresses. `System` is getaddrinfo on the host; `Fixed` serves the
/// in-process tests without touching the machine's resolver.
pub enum Resolver {
    System,
    #[cfg(test)]
    Fixed(FixedNames),
}

/// Test names: a name missing from `names` does not exist (NXDOMAIN); one listed with no address
/// is a lookup that fails (a timeout). `asked` lists every lookup, in order.
#[cfg(test)]
pub struct FixedNames {
    pub names: std::collections::HashMap<String, Vec<IpAddr>>,
    pub asked: std::sync::Mutex<Vec<String>>,
}

#[cfg(test)]
impl Resolver {
    pub fn fixed(names: std::collections::HashMap<String, Vec<IpAddr>>) -> Resolver {
        Resolver::Fixed(FixedNames { names, asked: Default::default() })
    }

    /// The names looked up so far (empty for `System`).
    pub fn asked(&self) -> Vec<String> {
        match self {
            Resolver::Fixed(f) => f.asked.lock().unwrap().clone(),
            Resolver::System => Vec::new(),
        }
    }
}

impl Resolver {
    pub(super) async fn resolve(&self, name: &str, run_lookups: &RunLookups) -> Result<Vec<IpAddr>, LookupError> {
        match self {
            Resolver::System => match run_lookups.reused(name) {
                Some(addrs) => Ok(addrs),
                None => system(name, run_lookups).await,
            },
            #[cfg(test)]
            Resolver::Fixed(f) => {
                f.asked.lock().unwrap().push(name.to_string());
                match f.names.get(name) {
                    None => Err(LookupError::NotFound("not found".into())),
                    Some(a) if a.is_empty() => Err(LookupError::Failed("name resolution timed out".into())),
                    Some(a) => Ok(a.clone()),
                }
            }
        }
    }
}

/// A lookup on the host, within `RESOLVE_TIMEOUT`; its answer is kept for the run to reuse.
async fn system(name: &str, run_lookups: &RunLookups) -> Result<Vec<IpAddr>, LookupError> {
    match tokio::time::timeout(RESOLVE_TIMEOUT, system_lookup(name, run_lookups)).await {
        Ok(Ok(addrs)) => {
            let addrs: Vec<IpAddr> = addrs.into_iter().map(canonical_ip).collect();
            run_lookups.keep(name, &addrs);
            Ok(addrs)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(LookupError::Failed("name resolution timed out".into())),
    }
}

/// `sandspawn-helper --resolve NAME`, once a slot of the run is free, its turn in the run's pace
/// has come (waited for holding the run's slot only, so no other run waits with it), and a slot
/// of the process is free. The slots are this future's: when it is dropped (the lookup timed out,
/// the run ended and its tasks were cancelled), the process is killed and both slots are free.
async fn system_lookup(name: &str, run_lookups: &RunLookups) -> Result<Vec<IpAddr>, LookupError> {
    let failed = |why: String| LookupError::Failed(why);
    let _run_slot = run_lookups.slots.acquire().await.map_err(|e| failed(e.to_string()))?;
    run_lookups.pace.turn().await;
    let _process_slot = PROCESS_LOOKUPS.acquire().await.map_err(|e| failed(e.to_string()))?;
    let helper = crate::helper::require().map_err(|e| failed(e.message))?;
    let mut lookup = LookupProcess::start(&helper, name).map_err(|e| failed(format!("cannot start a lookup: {e}")))?;
    lookup.answer().await
}

/// A running `--resolve`, and the pipe its answer comes on. Dropping it kills and reaps the
/// process (`reap`), answered or not.
struct LookupProcess {
    child: Option<Child>,
    answer: tokio::net::unix::pipe::Receiver,
}

impl LookupProcess {
    /// No `pre_exec` (posix_spawn where the platform allows). The helper also ends itself after a
    /// while (`--resolve`'s alarm), should this process die before it could kill it.
    fn start(helper: &std::path::Path, name: &str) -> std::io::Result<LookupProcess> {
        let mut child = Command::new(helper)
            .arg("--resolve")
            .arg(name)
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let Some(out) = child.stdout.take() else {
            reap(child);
            return Err(std::io::Error::other("the lookup process has no output pipe"));
        };
        match tokio::net::unix::pipe::Receiver::from_owned_fd(out.into()) {
            Ok(answer) => Ok(LookupProcess { child: Some(child), answer }),
            Err(e) => {
                reap(child);
                Err(e)
            }
        }
    }

    /// The answer, read until the helper closes its output (it exits right after writing).
    async fn answer(&mut self) -> Result<Vec<IpAddr>, LookupError> {
        let mut text = Vec::new();
        (&mut self.answer)
            .take(MAX_ANSWER)
            .read_to_end(&mut text)
            .await
            .map_err(|e| LookupError::Failed(format!("cannot read the lookup's answer: {e}")))?;
        sandspawn_helper::getaddrinfo::parse_answer(&String::from_utf8_lossy(&text))
    }
}

impl Drop for LookupProcess {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            reap(child);
        }
    }
}

/// Kill `child` (harmless if it already answered: it was exiting) and wait for it, on the one
/// reaper thread: never on tokio's or libuv's pools, and `waitpid` on its own pid only. A killed
/// lookup is gone within milliseconds, so the thread never falls behind. Without that thread (it
/// could not be started), the caller waits for the killed process itself.
fn reap(child: Child) {
    static REAPER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<Child>>> = std::sync::OnceLock::new();
    let reaper = REAPER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Child>();
        let started = std::thread::Builder::new().name("sandspawn-lookup-reaper".into()).spawn(move || {
            for mut child in rx {
                kill_and_wait(&mut child);
            }
        });
        started.ok().map(|_| tx)
    });
    let unsent = match reaper {
        Some(tx) => tx.send(child).err().map(|e| e.0),
        None => Some(child),
    };
    if let Some(mut child) = unsent {
        kill_and_wait(&mut child);
    }
}

fn kill_and_wait(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reuses_a_name_s_answer_and_keeps_a_bounded_number() {
        let run = RunLookups::new();
        let a: Vec<IpAddr> = vec!["192.0.2.1".parse().unwrap()];
        assert_eq!(run.reused("registry.test"), None);
        run.keep("registry.test", &a);
        assert_eq!(run.reused("registry.test"), Some(a.clone()));
        for i in 0..ANSWERS_KEPT {
            run.keep(&format!("n{i}.test"), &a);
        }
        assert_eq!(run.reused(&format!("n{}.test", ANSWERS_KEPT - 1)), None, "past the bound, not kept");
        assert_eq!(run.reused("registry.test"), Some(a), "kept ones stay");
        assert_eq!(RunLookups::new().reused("registry.test"), None, "another run's answers are its own");
    }

    fn helper() -> std::path::PathBuf {
        crate::helper::require().expect("run `cargo build -p sandspawn-helper` before `cargo test`")
    }

    #[tokio::test]
    async fn a_lookup_answers_through_its_process_and_a_dropped_one_is_killed_and_reaped() {
        // `localhost` comes from /etc/hosts: no name server is asked.
        let mut lookup = LookupProcess::start(&helper(), "localhost").unwrap();
        let addrs = lookup.answer().await.unwrap();
        assert!(addrs.iter().all(|a| a.is_loopback()) && !addrs.is_empty(), "{addrs:?}");
        drop(lookup);
        // One nobody waits for any more: killed, and waited for on the reaper thread (the helper's
        // own 20 s alarm never comes into it). A numeric name answers at once, so a process that
        // is stopped first stands for one stuck in the system resolver.
        let lookup = LookupProcess::start(&helper(), "127.0.0.1").unwrap();
        let pid = lookup.child.as_ref().unwrap().id() as i32;
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        drop(lookup);
        let gone = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            // ESRCH: killed and reaped (a zombie would still take signal 0).
            let answers_signals = unsafe { libc::kill(pid, 0) } == 0;
            !answers_signals
        });
        assert!(gone, "the lookup process {pid} was killed and reaped");
    }

    /// Added latency of a lookup in a process over one in a thread (`cargo test -q lookup_latency
    /// -- --ignored --nocapture`).
    #[tokio::test]
    #[ignore]
    async fn lookup_latency_thread_vs_process() {
        const N: u32 = 200;
        let t0 = std::time::Instant::now();
        for _ in 0..N {
            tokio::task::spawn_blocking(|| sandspawn_helper::getaddrinfo::lookup("localhost")).await.unwrap().unwrap();
        }
        let thread = t0.elapsed() / N;
        let t0 = std::time::Instant::now();
        for _ in 0..N {
            LookupProcess::start(&helper(), "localhost").unwrap().answer().await.unwrap();
        }
        let process = t0.elapsed() / N;
        println!("localhost: thread {thread:?}, process {process:?} per lookup");
    }
}
