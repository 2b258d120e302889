//! The seccomp filter the helper installs when the network is off and Unix sockets are blocked:
//! `--unshare-net` cuts every network but cannot stop a `connect()` to a socket *file* of the host
//! (Docker's, ssh-agent's, D-Bus), so creating AF_UNIX sockets is refused instead.
//!
//! Generated here as classic BPF, by hand rather than with a library such as `seccompiler`: this is
//! a deny-list (everything else is allowed), and such a filter must also refuse every x32-ABI call
//! (syscall numbers with bit 30 set share `AUDIT_ARCH_X86_64`), which takes a bit test on the
//! syscall number; seccompiler can test bits of arguments but matches syscall numbers only by
//! equality, so an x32 `socket(AF_UNIX)` would pass its filter on kernels with x32 enabled.
//! `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }` is 8 bytes per instruction.

/// Architectures we can filter. Others cannot get the filter, so the plan builder refuses to run
/// with Unix sockets blocked there instead of silently not blocking them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    pub fn native() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::Aarch64)
        } else {
            None
        }
    }

    /// `AUDIT_ARCH_*`: what the kernel reports in `seccomp_data.arch`.
    fn audit_arch(self) -> u32 {
        match self {
            Arch::X86_64 => 0xc000_003e,
            Arch::Aarch64 => 0xc000_00b7,
        }
    }

    fn nr_socket(self) -> u32 {
        match self {
            Arch::X86_64 => 41,
            Arch::Aarch64 => 198,
        }
    }
}

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

pub const RET_ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
pub const RET_EPERM: u32 = 0x0005_0000 | 1; // SECCOMP_RET_ERRNO | EPERM

// Offsets in `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Low 32 bits of args[0] (both supported arches are little-endian). The kernel truncates
/// `socket`'s `int domain` to 32 bits, so the high half must NOT be checked: `domain =
/// 0x1_0000_0001` is AF_UNIX to the kernel.
const OFF_ARG0_LO: u32 = 16;

/// Low 32 bits of args[1] (`ioctl`'s request is an `unsigned int` to the kernel).
const OFF_ARG1_LO: u32 = 24;

const AF_UNIX: u32 = 1;
/// The x32 ABI on x86_64 shares AUDIT_ARCH_X86_64 but sets this bit in the syscall number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// io_uring_setup, io_uring_enter, io_uring_register (same numbers on both arches):
/// IORING_OP_SOCKET would create a socket without the `socket` syscall.
const IO_URING: [u32; 3] = [425, 426, 427];

/// One instruction: `(code, jt, jf, k)`.
pub type Insn = (u16, u8, u8, u32);

/// The filter as instructions (exposed for tests and `explain`).
pub fn program(arch: Arch) -> Vec<Insn> {
    // Wrong arch (e.g. an i386 binary via int 0x80): syscall numbers mean something else, so
    // nothing can be allowed by number. Everything gets EPERM.
    let mut p: Vec<Insn> = vec![
        (LD_W_ABS, 0, 0, OFF_ARCH),
        (JEQ_K, 1, 0, arch.audit_arch()),
        (RET_K, 0, 0, RET_EPERM),
        (LD_W_ABS, 0, 0, OFF_NR),
    ];
    if arch == Arch::X86_64 {
        p.push((JSET_K, 0, 0, X32_SYSCALL_BIT)); // jt patched to DENY below
    }
    p.push((JEQ_K, 0, 0, arch.nr_socket())); // jt patched to CHECK_DOMAIN below
    for nr in IO_URING {
        p.push((JEQ_K, 0, 0, nr)); // jt patched to DENY below
    }
    p.push((RET_K, 0, 0, RET_ALLOW));
    let check_domain = p.len();
    p.push((LD_W_ABS, 0, 0, OFF_ARG0_LO));
    p.push((JEQ_K, 1, 0, AF_UNIX));
    p.push((RET_K, 0, 0, RET_ALLOW));
    let deny = p.len();
    p.push((RET_K, 0, 0, RET_EPERM));
    // Patch the forward jumps: a jump offset counts from the instruction after the jump.
    for (i, insn) in p.iter_mut().enumerate().take(check_domain - 1).skip(4) {
        let (code, _, jf, k) = *insn;
        let target = if code == JEQ_K && k == arch.nr_socket() { check_domain } else { deny };
        *insn = (code, u8::try_from(target - i - 1).expect("short filter"), jf, k);
    }
    p
}

// ---- the Landlock mode's filter -----------------------------------------------------------------
//
// Without namespaces, seccomp carries what bwrap's namespaces gave: no network, no new namespaces
// (a user namespace would hand the command capabilities), no io_uring (it opens sockets past this
// filter), no kernel keyrings (not namespaced), no TIOCSTI/TIOCLINUX (typing into the terminal of
// the session that started us), no ptrace.

pub const RET_ENOSYS: u32 = 0x0005_0000 | 38; // SECCOMP_RET_ERRNO | ENOSYS

/// Which sockets the command may create in the Landlock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// None of any family (`socketpair` stays allowed: it reaches nobody outside).
    None,
    /// `AF_UNIX` only (`allowUnixSockets: true` with the network off).
    UnixOnly,
    /// Every family (`network: true`).
    All,
}

/// Every `CLONE_NEW*` flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
const CLONE_NEW_MASK: u32 = 0x0000_0080 | 0x0002_0000 | 0x0200_0000 | 0x0400_0000 | 0x0800_0000 | 0x1000_0000 | 0x2000_0000 | 0x4000_0000;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541c;

/// What one syscall rule does once the number matched; every block ends in a return.
enum Check {
    Ret(u32),
    /// Deny when `arg & mask != 0`.
    ArgMask(u32, u32),
    /// Deny when the argument equals one of these.
    ArgIn(u32, &'static [u32]),
    /// Deny unless the argument equals this.
    ArgNot(u32, u32),
}

struct Nrs {
    socket: u32,
    clone: u32,
    unshare: u32,
    setns: u32,
    ioctl: u32,
    ptrace: u32,
    keyctl: u32,
    add_key: u32,
    request_key: u32,
}

fn nrs(arch: Arch) -> Nrs {
    match arch {
        Arch::X86_64 => Nrs { socket: 41, clone: 56, unshare: 272, setns: 308, ioctl: 16, ptrace: 101, keyctl: 250, add_key: 248, request_key: 249 },
        Arch::Aarch64 => Nrs { socket: 198, clone: 220, unshare: 97, setns: 268, ioctl: 29, ptrace: 117, keyctl: 219, add_key: 217, request_key: 218 },
    }
}

/// `clone3` (same number on both arches): its flags are in a struct seccomp cannot read, so it is
/// refused with ENOSYS and the C libraries fall back to `clone`, whose flags are checked.
const NR_CLONE3: u32 = 435;

/// The Landlock mode's filter (a deny-list like `program`, with the same arch and x32 checks).
pub fn landlock_program(arch: Arch, sockets: Sockets) -> Vec<Insn> {
    let n = nrs(arch);
    let mut rules: Vec<(u32, Check)> = Vec::new();
    match sockets {
        Sockets::None => rules.push((n.socket, Check::Ret(RET_EPERM))),
        Sockets::UnixOnly => rules.push((n.socket, Check::ArgNot(OFF_ARG0_LO, AF_UNIX))),
        Sockets::All => {}
    }
    for nr in IO_URING {
        rules.push((nr, Check::Ret(RET_EPERM)));
    }
    rules.push((n.clone, Check::ArgMask(OFF_ARG0_LO, CLONE_NEW_MASK)));
    rules.push((n.unshare, Check::ArgMask(OFF_ARG0_LO, CLONE_NEW_MASK)));
    rules.push((NR_CLONE3, Check::Ret(RET_ENOSYS)));
    rules.push((n.setns, Check::Ret(RET_EPERM)));
    rules.push((n.ioctl, Check::ArgIn(OFF_ARG1_LO, &[TIOCSTI, TIOCLINUX])));
    for nr in [n.ptrace, n.keyctl, n.add_key, n.request_key] {
        rules.push((nr, Check::Ret(RET_EPERM)));
    }

    let mut p: Vec<Insn> = vec![(LD_W_ABS, 0, 0, OFF_ARCH), (JEQ_K, 1, 0, arch.audit_arch()), (RET_K, 0, 0, RET_EPERM), (LD_W_ABS, 0, 0, OFF_NR)];
    let x32_at = p.len();
    if arch == Arch::X86_64 {
        p.push((JSET_K, 0, 0, X32_SYSCALL_BIT)); // jt patched to the final deny below
    }
    for (nr, check) in rules {
        let block: Vec<Insn> = match check {
            Check::Ret(ret) => vec![(RET_K, 0, 0, ret)],
            Check::ArgMask(off, mask) => vec![(LD_W_ABS, 0, 0, off), (JSET_K, 0, 1, mask), (RET_K, 0, 0, RET_EPERM), (RET_K, 0, 0, RET_ALLOW)],
            Check::ArgIn(off, values) => {
                let mut b = vec![(LD_W_ABS, 0, 0, off)];
                let count = values.len();
                for (i, v) in values.iter().enumerate() {
                    // Matched: jump over the remaining tests and the allow, to the deny.
                    b.push((JEQ_K, u8::try_from(count - i).expect("short"), 0, *v));
                }
                b.push((RET_K, 0, 0, RET_ALLOW));
                b.push((RET_K, 0, 0, RET_EPERM));
                b
            }
            Check::ArgNot(off, value) => vec![(LD_W_ABS, 0, 0, off), (JEQ_K, 0, 1, value), (RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, RET_EPERM)],
        };
        // Not this syscall: skip its block. The accumulator still holds the number there.
        p.push((JEQ_K, 0, u8::try_from(block.len()).expect("short"), nr));
        p.extend(block);
    }
    p.push((RET_K, 0, 0, RET_ALLOW));
    p.push((RET_K, 0, 0, RET_EPERM));
    if arch == Arch::X86_64 {
        let deny = p.len() - 1;
        p[x32_at].1 = u8::try_from(deny - x32_at - 1).expect("short filter");
    }
    p
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

/// The native filter bytes, or `None` on an architecture we cannot filter.
pub fn unix_socket_filter() -> Option<Vec<u8>> {
    Arch::native().map(|a| encode(&program(a)))
}

/// A tiny interpreter for our own filters, so tests can check verdicts rather than opcodes.
#[doc(hidden)]
pub fn run(prog: &[Insn], arch: u32, nr: u32, arg0: u64) -> u32 {
    run_args(prog, arch, nr, [arg0, 0])
}

/// `run` with the first two arguments (the Landlock-mode filter also looks at `args[1]`).
#[doc(hidden)]
pub fn run_args(prog: &[Insn], arch: u32, nr: u32, args: [u64; 2]) -> u32 {
    let arg0 = args[0];
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
                    OFF_ARG0_LO => arg0 as u32,
                    OFF_ARG1_LO => args[1] as u32,
                    _ => panic!("unexpected load"),
                }
            }
            JEQ_K => pc += if acc == k { jt } else { jf } as usize,
            JSET_K => pc += if acc & k != 0 { jt } else { jf } as usize,
            RET_K => return k,
            _ => panic!("unexpected opcode {code:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: u32 = 0xc000_003e;

    #[test]
    fn encoding_is_8_bytes_native_endian() {
        let bytes = encode(&[(0x15, 1, 2, 0x0102_0304)]);
        let mut expect = 0x15u16.to_ne_bytes().to_vec();
        expect.extend([1, 2]);
        expect.extend(0x0102_0304u32.to_ne_bytes());
        assert_eq!(bytes, expect);
        assert_eq!(unix_socket_filter().unwrap().len() % 8, 0);
    }

    #[test]
    fn x86_64_program_pinned() {
        assert_eq!(
            program(Arch::X86_64),
            vec![
                (0x20, 0, 0, 4),
                (0x15, 1, 0, 0xc000_003e),
                (0x06, 0, 0, 0x0005_0001),
                (0x20, 0, 0, 0),
                (0x45, 8, 0, 0x4000_0000),
                (0x15, 4, 0, 41),
                (0x15, 6, 0, 425),
                (0x15, 5, 0, 426),
                (0x15, 4, 0, 427),
                (0x06, 0, 0, 0x7fff_0000),
                (0x20, 0, 0, 16),
                (0x15, 1, 0, 1),
                (0x06, 0, 0, 0x7fff_0000),
                (0x06, 0, 0, 0x0005_0001),
            ]
        );
    }

    #[test]
    fn verdicts() {
        for (arch, audit, socket) in [(Arch::X86_64, X86, 41), (Arch::Aarch64, 0xc000_00b7, 198)] {
            let p = program(arch);
            assert_eq!(run(&p, audit, socket, 1), RET_EPERM, "socket(AF_UNIX)");
            assert_eq!(run(&p, audit, socket, 0x1_0000_0001), RET_EPERM, "high bits ignored by the kernel");
            assert_eq!(run(&p, audit, socket, 2), RET_ALLOW, "socket(AF_INET)");
            assert_eq!(run(&p, audit, socket, 16), RET_ALLOW, "socket(AF_NETLINK)");
            for nr in IO_URING {
                assert_eq!(run(&p, audit, nr, 0), RET_EPERM);
            }
            assert_eq!(run(&p, audit, 0, 1), RET_ALLOW, "read");
            assert_eq!(run(&p, audit + 1, 0, 0), RET_EPERM, "foreign arch");
            assert_eq!(run(&p, 0x4000_0003, 0, 0), RET_EPERM, "i386");
        }
        let p = program(Arch::X86_64);
        assert_eq!(run(&p, X86, 53, 1), RET_ALLOW, "socketpair stays allowed");
        assert_eq!(run(&p, X86, 0x4000_0000 | 41, 1), RET_EPERM, "x32 socket");
        assert_eq!(run(&p, X86, 0x4000_0000, 0), RET_EPERM, "x32 anything");
        assert_eq!(run(&program(Arch::Aarch64), 0xc000_00b7, 199, 1), RET_ALLOW, "aarch64 socketpair");
    }

    #[test]
    fn landlock_verdicts() {
        for (arch, audit) in [(Arch::X86_64, X86), (Arch::Aarch64, 0xc000_00b7)] {
            let n = nrs(arch);
            let none = landlock_program(arch, Sockets::None);
            let v = |p: &[Insn], nr: u32, a0: u64, a1: u64| run_args(p, audit, nr, [a0, a1]);
            for family in [1, 2, 10, 16, 17, 0x1_0000_0002] {
                assert_eq!(v(&none, n.socket, family, 0), RET_EPERM, "socket({family}) with the network off");
            }
            let unix = landlock_program(arch, Sockets::UnixOnly);
            assert_eq!(v(&unix, n.socket, 1, 0), RET_ALLOW, "AF_UNIX allowed");
            assert_eq!(v(&unix, n.socket, 0x1_0000_0001, 0), RET_ALLOW, "the kernel sees AF_UNIX");
            assert_eq!(v(&unix, n.socket, 2, 0), RET_EPERM, "AF_INET denied");
            let all = landlock_program(arch, Sockets::All);
            assert_eq!(v(&all, n.socket, 2, 0), RET_ALLOW, "network: true");
            for p in [&none, &unix, &all] {
                for nr in IO_URING {
                    assert_eq!(v(p, nr, 0, 0), RET_EPERM, "io_uring {nr}");
                }
                assert_eq!(v(p, n.clone, 0x01200011, 0), RET_ALLOW, "fork-style clone");
                assert_eq!(v(p, n.clone, 0x003d0f00, 0), RET_ALLOW, "thread-style clone");
                for flag in [0x80, 0x2_0000, 0x200_0000, 0x400_0000, 0x800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000] {
                    assert_eq!(v(p, n.clone, 0x11 | flag, 0), RET_EPERM, "clone CLONE_NEW* {flag:#x}");
                    assert_eq!(v(p, n.unshare, flag, 0), RET_EPERM, "unshare {flag:#x}");
                }
                assert_eq!(v(p, n.unshare, 0x400, 0), RET_ALLOW, "unshare(CLONE_FILES)");
                assert_eq!(v(p, NR_CLONE3, 0, 0), RET_ENOSYS, "clone3 falls back to clone");
                assert_eq!(v(p, n.setns, 3, 0), RET_EPERM);
                assert_eq!(v(p, n.ioctl, 0, TIOCSTI as u64), RET_EPERM, "TIOCSTI");
                assert_eq!(v(p, n.ioctl, 0, 0xffff_ffff_0000_0000 | TIOCSTI as u64), RET_EPERM, "TIOCSTI, high bits ignored");
                assert_eq!(v(p, n.ioctl, 0, TIOCLINUX as u64), RET_EPERM, "TIOCLINUX");
                assert_eq!(v(p, n.ioctl, 0, 0x5401), RET_ALLOW, "TCGETS");
                for nr in [n.ptrace, n.keyctl, n.add_key, n.request_key] {
                    assert_eq!(v(p, nr, 0, 0), RET_EPERM, "{nr}");
                }
                assert_eq!(v(p, 0, 0, 0), RET_ALLOW, "read");
                assert_eq!(run_args(p, audit + 1, 0, [0, 0]), RET_EPERM, "foreign arch");
            }
            assert_eq!(v(&none, if arch == Arch::X86_64 { 53 } else { 199 }, 1, 0), RET_ALLOW, "socketpair");
        }
        let p = landlock_program(Arch::X86_64, Sockets::All);
        assert_eq!(run_args(&p, X86, 0x4000_0000 | 41, [2, 0]), RET_EPERM, "x32 socket");
        assert_eq!(run_args(&p, X86, 0x4000_0000, [0, 0]), RET_EPERM, "x32 anything");
    }
}
