//! The rules as classic BPF: the architecture and x32 checks, then a binary search by syscall number;
//! the byte encoding the kernel takes; and an interpreter for tests.

use super::baseline::rules;
use super::filter::*;

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
const JA: u16 = 0x05; // BPF_JMP | BPF_JA: an unconditional jump by k, which may exceed 255

/// One instruction: `(code, jt, jf, k)`.
pub type Insn = (u16, u8, u8, u32);

/// The filter as instructions (exposed for tests and `explain`).
pub fn program(arch: Arch, f: Filter) -> Vec<Insn> {
    // Wrong arch (e.g. an i386 binary via int 0x80): syscall numbers mean something else, so
    // nothing can be allowed by number. Everything gets EPERM.
    let mut p: Vec<Insn> = vec![(LD_W_ABS, 0, 0, OFF_ARCH), (JEQ_K, 1, 0, arch.audit_arch()), (RET_K, 0, 0, RET_EPERM), (LD_W_ABS, 0, 0, OFF_NR)];
    if arch == Arch::X86_64 {
        p.push((JSET_K, 0, 1, X32_SYSCALL_BIT));
        p.push((RET_K, 0, 0, RET_EPERM));
    }
    // A syscall newer than this table: what it does was never judged (Linux 6.15's open_tree_attr
    // passed the filter before it was listed, found by an attacker's review). ENOSYS, as on a kernel
    // without it, so C libraries and runtimes fall back as they do there.
    p.push((JGE_K, 0, 1, NEWEST_JUDGED + 1));
    p.push((RET_K, 0, 0, RET_ENOSYS));
    let mut by_number: Vec<(u32, Check)> = rules(f).into_iter().map(|(sys, check)| (sys.number(arch), check)).collect();
    by_number.sort_by_key(|(nr, _)| *nr);
    p.extend(tree(&by_number, arch));
    p
}

/// Rules this many or fewer are tested one after the other; more are split in two by number.
const LINEAR: usize = 3;

/// The decision for the syscall number in the accumulator, over `rules` sorted by number: a binary
/// search, so a syscall costs a handful of comparisons whatever the list's length, and so does the
/// kernel's emulation of the filter for every syscall number when it builds its cache. Every path
/// ends in a return.
fn tree(rules: &[(u32, Check)], arch: Arch) -> Vec<Insn> {
    if rules.len() <= LINEAR {
        let mut p = Vec::new();
        for (nr, check) in rules {
            let block = check_block(*check, arch);
            // Not this syscall: skip its block. The accumulator still holds the number there.
            p.push((JEQ_K, 0, u8::try_from(block.len()).expect("short block"), *nr));
            p.extend(block);
        }
        p.push((RET_K, 0, 0, RET_ALLOW));
        return p;
    }
    let (low, high) = rules.split_at(rules.len() / 2);
    let left = tree(low, arch);
    // At or above the first number of the upper half: jump over the lower half's code. A
    // conditional jump reaches 255 instructions; past that (the Landlock mode's filter with its
    // shield, once the socket rule checked types) it lands on an unconditional one, which reaches
    // any length.
    let mut p = match u8::try_from(left.len()) {
        Ok(short) => vec![(JGE_K, short, 0, high[0].0)],
        Err(_) => vec![(JGE_K, 0, 1, high[0].0), (JA, 0, 0, u32::try_from(left.len()).expect("filter under 2^32 instructions"))],
    };
    p.extend(left);
    p.extend(tree(high, arch));
    p
}

/// The instructions of one rule after its syscall matched, for `arch` (whose flag bits some rules
/// test); every block ends in a return.
pub(super) fn check_block(check: Check, arch: Arch) -> Vec<Insn> {
    match check {
        Check::Ret(ret) => vec![(RET_K, 0, 0, ret)],
        Check::ArgMask(off, mask) => vec![(LD_W_ABS, 0, 0, off), (JSET_K, 0, 1, mask), (RET_K, 0, 0, RET_EPERM), (RET_K, 0, 0, RET_ALLOW)],
        // A bit of the mask: to the deny; none of `has`: to the allow; a bit of `lacks`: to the allow.
        Check::ArgMaskOrWithout(off, mask, (has, lacks)) => {
            vec![(LD_W_ABS, 0, 0, off), (JSET_K, 2, 0, mask), (JSET_K, 0, 2, has), (JSET_K, 1, 0, lacks), (RET_K, 0, 0, RET_EPERM), (RET_K, 0, 0, RET_ALLOW)]
        }
        Check::ArgMaskAnswers(off, mask, ret) => vec![(LD_W_ABS, 0, 0, off), (JSET_K, 0, 1, mask), (RET_K, 0, 0, ret), (RET_K, 0, 0, RET_ALLOW)],
        Check::ArgAmong(off, values) => arg_in(off, &values, RET_EPERM, RET_ALLOW),
        Check::ArgIn(off, values) => arg_in(off, values, RET_EPERM, RET_ALLOW),
        Check::ArgInAnswers(off, values, ret) => arg_in(off, values, ret, RET_ALLOW),
        Check::ArgAnswers(off, answers) => arg_answers(off, answers),
        Check::FcntlOf(commands) => fcntl_of(commands, arch.o_direct()),
        Check::UnixPairOf(types) => unix_pair_of(types),
        Check::SocketOf(families) => socket_of(families),
        Check::OptionsIn(levels) => options_in(levels),
        Check::OwnLimitsKeeping(resource, others_refused) => own_limits_keeping(resource, others_refused),
        // The first differs: jump over the second's whole arg_in block (its load, tests and two
        // returns), to the answers of the first.
        Check::ArgIsThenIn((off_a, a), (off_b, values), answers) => {
            let mut b = vec![(LD_W_ABS, 0, 0, off_a), (JEQ_K, 0, u8::try_from(values.len() + 3).expect("short"), a)];
            b.extend(arg_in(off_b, values, RET_EPERM, RET_ALLOW));
            b.extend(arg_answers(off_a, answers));
            b
        }
        Check::ArgIs(off, value) => vec![(LD_W_ABS, 0, 0, off), (JEQ_K, 0, 1, value), (RET_K, 0, 0, RET_EPERM), (RET_K, 0, 0, RET_ALLOW)],
        Check::ArgNot(off, value) => vec![(LD_W_ABS, 0, 0, off), (JEQ_K, 0, 1, value), (RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, RET_EPERM)],
        // The first differs: jump over the second's load and test, to the deny.
        Check::ArgsNot([(off_a, a), (off_b, b)]) => {
            vec![(LD_W_ABS, 0, 0, off_a), (JEQ_K, 0, 2, a), (LD_W_ABS, 0, 0, off_b), (JEQ_K, 1, 0, b), (RET_K, 0, 0, RET_EPERM), (RET_K, 0, 0, RET_ALLOW)]
        }
        // No bit of the first mask: jump over the second's load, its test and the deny, to the
        // allow; no bit of the second: over the deny.
        Check::ArgsMask([(off_a, a), (off_b, b)]) => {
            vec![(LD_W_ABS, 0, 0, off_a), (JSET_K, 0, 3, a), (LD_W_ABS, 0, 0, off_b), (JSET_K, 0, 1, b), (RET_K, 0, 0, RET_EPERM), (RET_K, 0, 0, RET_ALLOW)]
        }
    }
}

/// `hit` when the argument at `off` is one of `values`, else `miss`.
fn arg_in(off: u32, values: &[u32], hit: u32, miss: u32) -> Vec<Insn> {
    let mut b = vec![(LD_W_ABS, 0, 0, off)];
    let count = values.len();
    for (i, v) in values.iter().enumerate() {
        // Matched: jump over the remaining tests and the miss, to the hit.
        b.push((JEQ_K, u8::try_from(count - i).expect("short"), 0, *v));
    }
    b.push((RET_K, 0, 0, miss));
    b.push((RET_K, 0, 0, hit));
    b
}

/// Each `(value, return)`'s return when the argument at `off` is that value, else allow.
fn arg_answers(off: u32, answers: &[(u32, u32)]) -> Vec<Insn> {
    let mut b = vec![(LD_W_ABS, 0, 0, off)];
    for (value, ret) in answers {
        // Not this value: jump over its return, to the next test.
        b.push((JEQ_K, 0, 1, *value));
        b.push((RET_K, 0, 0, *ret));
    }
    b.push((RET_K, 0, 0, RET_ALLOW));
    b
}

/// `fcntl(fd, cmd, arg)`: EPERM when the command is one of `commands`; `F_SETFL` with `o_direct`
/// among the flags is answered EINVAL; anything else allowed. Both are the kernel's unsigned ints:
/// their low halves are judged.
fn fcntl_of(commands: &[u32], o_direct: u32) -> Vec<Insn> {
    // Another command than F_SETFL: jump over the flags' load, test and two returns, to arg_in.
    let mut b = vec![(LD_W_ABS, 0, 0, OFF_ARG1_LO), (JEQ_K, 0, 4, F_SETFL), (LD_W_ABS, 0, 0, OFF_ARG2_LO), (JSET_K, 0, 1, o_direct), (RET_K, 0, 0, RET_EINVAL), (RET_K, 0, 0, RET_ALLOW)];
    b.extend(arg_in(OFF_ARG1_LO, commands, RET_EPERM, RET_ALLOW));
    b
}

/// `prlimit64(pid, resource, new, old)`: see `Check::OwnLimitsKeeping`. `resource` is set only
/// through pid 0 (answered without the call, or EPERM when the old one is asked for too): a pid
/// that is not 0 may be the caller's own (`prlimit(getpid(), ...)`) or its child's, which the filter
/// cannot tell from another's, so setting it there is EPERM (found by an attacker's review, rfix33:
/// RLIMIT_CORE lowered to 0 through the command's own pid let its crash reach the host's core
/// helper). Each jump counts from the instruction after it.
fn own_limits_keeping(resource: u32, others_refused: bool) -> Vec<Insn> {
    let mut b = Vec::new();
    if others_refused {
        // Another process, whatever the resource: jump over the 15 that follow, to the EPERM.
        b.extend([(LD_W_ABS, 0, 0, OFF_ARG0_LO), (JEQ_K, 0, 14, 0)]);
    }
    b.extend([
        (LD_W_ABS, 0, 0, OFF_ARG1_LO),
        (JEQ_K, 0, 10, resource), // another resource: allowed
        (LD_W_ABS, 0, 0, OFF_ARG2_LO),
        (JEQ_K, 0, 2, 0), // a new limit: the pid's test
        (LD_W_ABS, 0, 0, OFF_ARG2_HI),
        (JEQ_K, 6, 0, 0), // no new limit: a read, allowed
        (LD_W_ABS, 0, 0, OFF_ARG0_LO),
        (JEQ_K, 0, 6, 0), // set through a pid that is not 0: EPERM
        (LD_W_ABS, 0, 0, OFF_ARG3_LO),
        (JEQ_K, 0, 4, 0), // the old one asked for too: EPERM
        (LD_W_ABS, 0, 0, OFF_ARG3_HI),
        (JEQ_K, 1, 2, 0),
        (RET_K, 0, 0, RET_ALLOW),
        (RET_K, 0, 0, RET_DONE),
        (RET_K, 0, 0, RET_EPERM),
    ]);
    b
}

/// `setsockopt(fd, level, option, ...)`: EPERM when the level is one of `levels` and the option
/// among that level's, else allowed.
fn options_in(levels: &[(u32, &[u32])]) -> Vec<Insn> {
    let mut b = vec![(LD_W_ABS, 0, 0, OFF_ARG1_LO)];
    for (level, options) in levels {
        let block = arg_in(OFF_ARG2_LO, options, RET_EPERM, RET_ALLOW);
        // Another level: jump over this level's block, which ends in a return (so the accumulator
        // still holds the level at the next test).
        b.push((JEQ_K, 0, u8::try_from(block.len()).expect("short block"), *level));
        b.extend(block);
    }
    b.push((RET_K, 0, 0, RET_ALLOW));
    b
}

/// `socketpair(domain, type, ...)`: allowed when the domain is `AF_UNIX` and the type without its
/// flags is one of `types`, else EPERM.
fn unix_pair_of(types: &[u32]) -> Vec<Insn> {
    let count = types.len();
    // Not AF_UNIX: jump over the type's load, its mask and its tests, to the deny.
    let mut b = vec![(LD_W_ABS, 0, 0, OFF_ARG0_LO), (JEQ_K, 0, u8::try_from(count + 2).expect("short"), AF_UNIX)];
    b.push((LD_W_ABS, 0, 0, OFF_ARG1_LO));
    b.push((AND_K, 0, 0, SOCK_TYPE_MASK));
    for (i, t) in types.iter().enumerate() {
        // Matched: jump over the remaining tests and the deny, to the allow.
        b.push((JEQ_K, u8::try_from(count - i).expect("short"), 0, *t));
    }
    b.push((RET_K, 0, 0, RET_EPERM));
    b.push((RET_K, 0, 0, RET_ALLOW));
    b
}

/// `socket(domain, type, protocol)`: for a domain among `families`, allowed, or, when the family
/// lists its types, ESOCKTNOSUPPORT for a type (without its flags) not among them, and when it
/// lists its protocols, EPROTONOSUPPORT for a protocol not among them; EPERM for every other
/// domain. An unlisted family's type (and every type's flags) is the kernel's to judge.
fn socket_of(families: &[Family]) -> Vec<Insn> {
    let mut b = vec![(LD_W_ABS, 0, 0, OFF_ARG0_LO)];
    for (domain, protocols, types) in families {
        let mut block = match types {
            None => Vec::new(),
            Some(listed) => type_among(listed),
        };
        block.extend(match protocols {
            None => vec![(RET_K, 0, 0, RET_ALLOW)],
            Some(listed) => arg_in(OFF_ARG2_LO, listed, RET_ALLOW, RET_EPROTONOSUPPORT),
        });
        // Another domain: jump over this family's block, which ends in a return (so the
        // accumulator still holds the domain at the next test).
        b.push((JEQ_K, 0, u8::try_from(block.len()).expect("short block"), *domain));
        b.extend(block);
    }
    b.push((RET_K, 0, 0, RET_EPERM));
    b
}

/// ESOCKTNOSUPPORT unless `socket()`'s type without its flags (`SOCK_TYPE_MASK`, as the kernel
/// masks it) is one of `types`; a listed type falls through to the instructions that follow.
fn type_among(types: &[u32]) -> Vec<Insn> {
    let count = types.len();
    let mut b = vec![(LD_W_ABS, 0, 0, OFF_ARG1_LO), (AND_K, 0, 0, SOCK_TYPE_MASK)];
    for (i, t) in types.iter().enumerate() {
        // Matched: jump over the remaining tests and the refusal, to what follows.
        b.push((JEQ_K, u8::try_from(count - i).expect("short"), 0, *t));
    }
    b.push((RET_K, 0, 0, RET_ESOCKTNOSUPPORT));
    b
}

/// The filter as bytes, `struct sock_filter` after `struct sock_filter` in native byte order.
pub fn encode(prog: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prog.len() * 8);
    for &(code, jt, jf, k) in prog {
        out.extend_from_slice(&code.to_ne_bytes());
        out.push(jt);
        out.push(jf);
        out.extend_from_slice(&k.to_ne_bytes());
    }
    out
}

/// A tiny interpreter for our own filters, so tests can check verdicts rather than opcodes.
#[doc(hidden)]
pub fn run(prog: &[Insn], arch: u32, nr: u32, args: [u64; 2]) -> u32 {
    run3(prog, arch, nr, [args[0], args[1], 0])
}

/// `run` with a third argument.
#[doc(hidden)]
pub fn run3(prog: &[Insn], arch: u32, nr: u32, args: [u64; 3]) -> u32 {
    run4(prog, arch, nr, [args[0], args[1], args[2], 0])
}

/// `run` with a third and a fourth argument.
#[doc(hidden)]
pub fn run4(prog: &[Insn], arch: u32, nr: u32, args: [u64; 4]) -> u32 {
    let mut pc = 0;
    let mut acc = 0u32;
    loop {
        let (code, jt, jf, k) = prog[pc];
        pc += 1;
        match code {
            LD_W_ABS => {
                acc = match k {
                    OFF_NR => nr,
                    OFF_ARCH => arch,
                    OFF_ARG0_LO => args[0] as u32,
                    OFF_ARG1_LO => args[1] as u32,
                    OFF_ARG2_LO => args[2] as u32,
                    OFF_ARG3_LO => args[3] as u32,
                    OFF_ARG2_HI => (args[2] >> 32) as u32,
                    OFF_ARG3_HI => (args[3] >> 32) as u32,
                    _ => panic!("unexpected load"),
                }
            }
            JEQ_K => pc += if acc == k { jt } else { jf } as usize,
            JSET_K => pc += if acc & k != 0 { jt } else { jf } as usize,
            JGE_K => pc += if acc >= k { jt } else { jf } as usize,
            JA => pc += k as usize,
            AND_K => acc &= k,
            RET_K => return k,
            _ => panic!("unexpected opcode {code:#x}"),
        }
    }
}
