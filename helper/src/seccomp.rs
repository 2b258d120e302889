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
}
