use serde_json::json;

use super::decide::release_at_least_for_tests as release_at_least;
use super::*;
use crate::error::ErrorCode;
use crate::platform::Platform;
use sandspawn_helper::rlimit::{Resource, Rlimit};

fn linux_user() -> HostFacts {
    HostFacts { platform: Platform::Linux, sandboxed: true, root: false, nproc_per_userns: true }
}

fn all() -> Limits {
    parse(Some(&json!({ "memory": 268435456, "processes": 50, "cpuTime": 1500, "fileSize": 1048576, "openFiles": 32 }))).unwrap()
}

#[test]
fn parses_positive_integers_and_skips_nulls() {
    assert_eq!(parse(None).unwrap(), Limits::default());
    assert_eq!(parse(Some(&json!(null))).unwrap(), Limits::default());
    assert_eq!(parse(Some(&json!({ "memory": null }))).unwrap(), Limits::default());
    let l = all();
    assert_eq!((l.memory, l.processes, l.cpu_time_ms, l.file_size, l.open_files), (Some(268435456), Some(50), Some(1500), Some(1048576), Some(32)));
    // JavaScript may send whole numbers as doubles.
    assert_eq!(parse(Some(&json!({ "fileSize": 1048576.0 }))).unwrap().file_size, Some(1048576));
}

#[test]
fn rejects_bad_values_naming_the_field() {
    for (opts, field) in [
        (json!(5), "options.limits:"),
        (json!([]), "options.limits:"),
        (json!({ "memry": 1 }), "options.limits.memry: unknown limit"),
        (json!({ "memory": 0 }), "options.limits.memory:"),
        (json!({ "memory": -1 }), "options.limits.memory:"),
        (json!({ "memory": 1.5 }), "options.limits.memory:"),
        (json!({ "memory": "1g" }), "options.limits.memory:"),
        (json!({ "memory": 9007199254740992u64 }), "options.limits.memory:"),
        (json!({ "processes": 4194305 }), "options.limits.processes:"),
        (json!({ "openFiles": 1048577 }), "options.limits.openFiles:"),
        (json!({ "cpuTime": true }), "options.limits.cpuTime:"),
    ] {
        let e = parse(Some(&opts)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidOptions, "{opts}");
        assert!(e.message.starts_with(field), "{opts}: {}", e.message);
    }
}

#[test]
fn linux_sandbox_as_a_user_uses_rlimits_for_everything() {
    let plan = decide(&all(), &linux_user()).unwrap();
    assert_eq!(plan.applied, Limit::ALL.iter().map(|l| (*l, Mechanism::Rlimit)).collect::<Vec<_>>());
    let r = |resource, soft, hard| Rlimit { resource, soft, hard };
    assert_eq!(
        plan.rlimits,
        [
            r(Resource::Data, 268435456, 268435456),
            r(Resource::Nproc, 50, 50),
            // 1500 ms rounds up to 2 s; SIGXCPU at 2 s, SIGKILL at 3 s.
            r(Resource::Cpu, 2, 3),
            r(Resource::Fsize, 1048576, 1048576),
            r(Resource::Nofile, 32, 32),
            r(Resource::Core, 0, 0),
        ]
    );
    assert_eq!(decide(&Limits::default(), &linux_user()).unwrap(), LimitPlan::default(), "no limits, no steps");
}

#[test]
fn the_process_limit_is_refused_where_rlimit_nproc_does_not_mean_it() {
    let processes = Limits { processes: Some(50), ..Limits::default() };
    for (facts, why) in [
        (HostFacts { root: true, ..linux_user() }, "root"),
        (HostFacts { nproc_per_userns: false, ..linux_user() }, "5.14"),
        (HostFacts { sandboxed: false, ..linux_user() }, "danger-full-access"),
        (HostFacts { platform: Platform::Darwin, ..linux_user() }, "macOS"),
    ] {
        let e = decide(&processes, &facts).unwrap_err();
        assert_eq!(e.code, ErrorCode::Unsupported);
        assert!(e.message.starts_with("limits.processes cannot be enforced here: "), "{}", e.message);
        assert!(e.message.contains(why), "{why}: {}", e.message);
    }
    // Root may still use the per-process limits.
    let root = HostFacts { root: true, ..linux_user() };
    assert!(decide(&Limits { processes: None, ..all() }, &root).is_ok());
}

#[test]
fn macos_enforces_cpu_file_size_and_descriptors_only() {
    let mac = HostFacts { platform: Platform::Darwin, root: false, nproc_per_userns: false, sandboxed: true };
    let ok = decide(&Limits { memory: None, processes: None, ..all() }, &mac).unwrap();
    assert_eq!(ok.applied.iter().map(|(l, _)| *l).collect::<Vec<_>>(), [Limit::CpuTime, Limit::FileSize, Limit::OpenFiles]);
    let e = decide(&all(), &mac).unwrap_err();
    assert!(e.message.contains("limits.memory cannot") && e.message.contains("limits.processes cannot"), "names both: {}", e.message);
    let other = HostFacts { platform: Platform::Other, ..mac };
    assert_eq!(decide(&Limits { file_size: Some(1), ..Limits::default() }, &other).unwrap_err().code, ErrorCode::Unsupported);
}

#[test]
fn exceeded_only_from_the_signal_of_a_limit_that_was_set() {
    let plan = decide(&Limits { cpu_time_ms: Some(1000), ..Limits::default() }, &linux_user()).unwrap();
    assert_eq!(exceeded(&plan, Some("SIGXCPU")), Some(Limit::CpuTime));
    assert_eq!(exceeded(&plan, Some("SIGXFSZ")), None, "fileSize was not set: some other cause");
    assert_eq!(exceeded(&plan, Some("SIGKILL")), None);
    assert_eq!(exceeded(&plan, None), None);
    assert_eq!(exceeded(&LimitPlan::default(), Some("SIGXCPU")), None);
}

#[test]
fn kernel_release_comparison() {
    assert!(release_at_least("6.18.44-fc-v857", 5, 14));
    assert!(release_at_least("5.14.0-284.el9.x86_64", 5, 14));
    assert!(!release_at_least("5.4.0-150-generic", 5, 14));
    assert!(!release_at_least("4.18.0-513.el8.x86_64", 5, 14));
    assert!(!release_at_least("garbage", 5, 14));
}

#[test]
fn usage_from_rusage() {
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    r.ru_utime = libc::timeval { tv_sec: 1, tv_usec: 500_000 };
    r.ru_stime = libc::timeval { tv_sec: 0, tv_usec: 2_000 };
    r.ru_maxrss = 2048;
    let u = ResourceUsage::from_rusage(&r);
    assert_eq!((u.user_cpu_ms, u.system_cpu_ms), (1500.0, 2.0));
    assert_eq!(u.max_rss_bytes, if cfg!(target_os = "macos") { 2048.0 } else { 2048.0 * 1024.0 });
}

#[cfg(target_os = "linux")]
#[test]
fn stat_fields_survive_odd_command_names() {
    let line = "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 25 7 30 11 20 0 1 0 12345 1000 50 0 0";
    let stat = super::sample::parse_stat(line).unwrap();
    assert_eq!((stat.state, stat.ppid, stat.user, stat.system, stat.threads), (b'S', 1, 25 + 30, 7 + 11, 1));
    assert_eq!(super::sample::parse_stat("garbage"), None);
    assert_eq!(super::sample::parse_stat("1 (a) S 0 1 1 0 -1 0 0"), None, "too short");
}

#[cfg(target_os = "linux")]
#[test]
fn sampling_sees_a_busy_child_and_its_reaped_grandchildren() {
    use std::process::Command;
    // A shell that burns CPU in a reaped child, then sleeps: its own cutime holds that CPU.
    let mut child = Command::new("sh").args(["-c", "i=0; (while [ $i -lt 300000 ]; do i=$((i+1)); done); sleep 5"]).spawn().unwrap();
    let pid = child.id() as i32;
    let ns = crate::pidns::ns_of(pid).unwrap();
    let mut usage = None;
    for _ in 0..600 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let u = super::sample::sample(pid, ns).unwrap().usage;
        if u.user_cpu_ms + u.system_cpu_ms >= 100.0 {
            usage = Some(u);
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let u = usage.expect("the loop's CPU time shows up within 12 s");
    assert!(u.max_rss_bytes > 100_000.0, "{u:?}");
    assert_eq!(super::sample::sample(pid, ns), None, "gone after it was reaped");
    assert_eq!(super::sample::sample(pid, ns + 1), None, "never outside the namespace");
}

/// Issue 29: a rusage peak at least as large as the host's own peak at spawn time is the host's
/// memory (vfork), never reported as the command's; a smaller one, and the sampled peak, are.
#[test]
fn own_usage_drops_the_peak_the_child_inherited() {
    use super::{own_usage, ResourceUsage};
    let reaped = |rss: f64| ResourceUsage { user_cpu_ms: 10.0, system_cpu_ms: 5.0, max_rss_bytes: rss };
    let sampled = ResourceUsage { user_cpu_ms: 100.0, system_cpu_ms: 50.0, max_rss_bytes: 30e6 };
    let host = 650e6;
    assert_eq!(own_usage(reaped(651e6), ResourceUsage::default(), false, host).max_rss_bytes, 0.0);
    assert_eq!(own_usage(reaped(648e6), ResourceUsage::default(), false, host).max_rss_bytes, 0.0, "a little below: the kernel's record lags");
    assert_eq!(own_usage(reaped(651e6), sampled, false, host).max_rss_bytes, 30e6);
    assert_eq!(own_usage(reaped(200e6), sampled, false, host).max_rss_bytes, 200e6, "smaller than the host's peak: the command's");
    let tree = own_usage(reaped(651e6), sampled, true, host);
    assert_eq!((tree.user_cpu_ms, tree.system_cpu_ms, tree.max_rss_bytes), (110.0, 55.0, 30e6), "bwrap's rusage plus its sandbox");
    let direct = own_usage(reaped(1e6), sampled, false, host);
    assert_eq!((direct.user_cpu_ms, direct.system_cpu_ms), (10.0, 5.0), "without a sandbox apart, CPU is the rusage's alone");
    assert!(super::host_peak_rss_bytes() > 1e6);
}

/// Found by an attacker's review: every 100 ms the host read five /proc files for each process of
/// the tree, however idle, so 4,000 sleeping processes kept a host core busy for the whole run.
/// Counted, not timed: the processes a run's sampling reads per second stay within a fixed budget
/// whatever the tree's size, and a small tree is still sampled every 100 ms.
#[test]
fn sampling_work_per_second_is_bounded_however_many_processes() {
    use super::sample::{next_delay, TASKS_PER_SECOND};
    use std::time::Duration;
    // Each sample's reading is paid for by the pause after it, from the first sample on.
    for processes in [1, 50, 100, 101, 250, 4_000, 100_000, 4_194_304] {
        let mut delay = Duration::from_millis(10);
        for _ in 0..20 {
            delay = next_delay(delay, processes);
            let per_second = processes as f64 / delay.as_secs_f64();
            assert!(per_second <= TASKS_PER_SECOND as f64, "{processes} processes: {per_second} read per second");
        }
        if processes <= 100 {
            assert_eq!(delay, Duration::from_millis(100), "a small tree keeps its 100 ms interval");
        }
    }
}

/// A sample reads at most three /proc files per single-threaded process (its stat, its status for
/// the peak resident set, its children), plus the namespace of the sandbox's init.
#[cfg(target_os = "linux")]
#[test]
fn a_sample_reads_three_files_per_idle_process() {
    use std::os::unix::process::CommandExt;
    use std::process::Command;
    let script = "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do sleep 60 & done; wait";
    let mut child = Command::new("sh").args(["-c", script]).process_group(0).spawn().unwrap();
    let pid = child.id() as i32;
    let ns = crate::pidns::ns_of(pid).unwrap();
    let mut seen = None;
    for _ in 0..1000 {
        super::sample::PROC_READS.with(|n| n.set(0));
        let reading = super::sample::sample(pid, ns).unwrap();
        if reading.tasks == 21 {
            seen = Some((reading.tasks, super::sample::PROC_READS.with(|n| n.get())));
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let _ = child.wait();
    let (processes, reads) = seen.expect("the shell and its 20 sleeps show up within 20 s");
    assert!(reads <= 3 * processes + 1, "{reads} /proc files read for {processes} processes");
}

/// When re-executed with this variable set to N, `many_threads_child` starts N threads that sleep,
/// says so, and sleeps itself: a tree of one process and many threads for the sampling test.
#[cfg(target_os = "linux")]
const THREADS_CHILD_ENV: &str = "SANDSPAWN_TEST_SAMPLED_THREADS";

/// Not a test on its own: the child of `a_sample_pays_for_every_thread_it_reads`.
#[cfg(target_os = "linux")]
#[test]
fn many_threads_child() {
    let Some(n) = std::env::var(THREADS_CHILD_ENV).ok().and_then(|n| n.parse::<usize>().ok()) else { return };
    for _ in 0..n {
        std::thread::Builder::new().stack_size(64 * 1024).spawn(|| std::thread::sleep(std::time::Duration::from_secs(60))).unwrap();
    }
    println!("threads started");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// Found by an attacker's review (kern29): the pause after a sample grew with the processes read,
/// but a process of many threads counted as one while the sample listed its tasks and read every
/// thread's children file. One process of 10,000 sleeping threads (a workspace-write run, no
/// options) cost the host 5.4 s of CPU in 30 s, 18% of a core, for a run that used 0.4 s. The
/// work of a sample is paid for by the pause after it: at most three files per task it counts.
#[cfg(target_os = "linux")]
#[test]
fn a_sample_pays_for_every_thread_it_reads() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    const THREADS: usize = 64;
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "limits::tests::many_threads_child", "--nocapture", "--test-threads=1"])
        .env(THREADS_CHILD_ENV, THREADS.to_string())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = lines.any(|l| l.is_ok_and(|l| l.contains("threads started")));
    let ns = crate::pidns::ns_of(pid).unwrap();
    super::sample::PROC_READS.with(|n| n.set(0));
    let reading = super::sample::sample(pid, ns);
    let reads = super::sample::PROC_READS.with(|n| n.get());
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let _ = child.wait();
    assert!(started, "the child started its threads");
    let reading = reading.expect("the child is sampled");
    assert!(reads > THREADS, "every thread's children file was read ({reads} files)");
    assert!(reads <= 3 * reading.tasks + 1, "{reads} /proc files read for {} tasks counted", reading.tasks);
}
