//! The sandbox's bounds on System V semaphores and message queues, kernel memory that no rlimit
//! counts, set in the sandbox's own IPC namespace.
//!
//! Why: a new IPC namespace starts with the kernel's defaults, which allow 32,000 sets of 32,000
//! semaphores (64 bytes each, `struct sem`: 61 GiB) and 32,000 message queues of 16,384 messages
//! (an empty one is 64 bytes of slab: 31 GiB), all unreclaimable until the namespace ends with the
//! run. Found by an attacker's review (kern41): a default read-only run under `limits.memory: 64
//! MiB` held 2 GiB of each, the host's `SUnreclaim` grew by 4 GiB, and nothing but the machine's
//! memory stopped it. The bounds here are Linux's own defaults before 3.19 (32,000 semaphores in
//! 128 sets; 16 queues, here 32): 2 MiB of semaphores and at most 32 MiB of messages (512 KiB of
//! text). A sysctl of this namespace already lower stays as it is. Shared memory segments are pages
//! of a tmpfs, reclaimable and swappable like `/dev/shm`'s, and stay as the README says.

use sandspawn_helper::report::{setup, Failure};

use crate::describe;
use crate::private_mounts::write_file;

/// At most this many semaphores (`SEMMNS`), in at most this many sets (`SEMMNI`).
const SEMAPHORES: u64 = 32_000;
const SEMAPHORE_SETS: u64 = 128;
/// At most this many message queues (`msgmni`); each holds at most `msgmnb` bytes and messages.
const MESSAGE_QUEUES: u64 = 32;

/// Lower `kernel/sem`'s totals and `kernel/msgmni` under `sys` (a writable proc's `sys`, in the
/// sandbox's IPC namespace, as its owner). A kernel without System V IPC has neither file: nothing
/// to bound.
pub fn limit(sys: &str) -> Result<(), Failure> {
    let sem = format!("{sys}/kernel/sem");
    if let Some(text) = read(&sem)? {
        // SEMMSL SEMMNS SEMOPM SEMMNI: the size of a set and the operations of one call stay.
        let fields = numbers(&sem, &text, 4)?;
        let (total, sets) = (fields[1].min(SEMAPHORES), fields[3].min(SEMAPHORE_SETS));
        write_file(&sem, &format!("{} {total} {} {sets}", fields[0], fields[2]))?;
    }
    let msgmni = format!("{sys}/kernel/msgmni");
    if let Some(text) = read(&msgmni)? {
        write_file(&msgmni, &numbers(&msgmni, &text, 1)?[0].min(MESSAGE_QUEUES).to_string())?;
    }
    Ok(())
}

/// The file's text, or `None` where the kernel has no such file.
fn read(path: &str) -> Result<Option<String>, Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(0);
            Err(setup(errno, format!("reading {path} failed: {}", describe(errno))))
        }
    }
}

/// The `count` whitespace-separated numbers of a sysctl's text.
fn numbers(path: &str, text: &str, count: usize) -> Result<Vec<u64>, Failure> {
    let fields: Option<Vec<u64>> = text.split_whitespace().map(|f| f.parse().ok()).collect();
    fields.filter(|f| f.len() == count).ok_or_else(|| setup(0, format!("{path} holds no {count} numbers: {text:?}")))
}
