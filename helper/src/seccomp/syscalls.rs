//! The numbers of the syscalls the filters name, per architecture.

use super::filter::Arch;

/// The syscalls the filters name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sys {
    Socket,
    Ioctl,
    Clone,
    Clone3,
    Unshare,
    Setns,
    Keyctl,
    AddKey,
    RequestKey,
    Bpf,
    PerfEventOpen,
    Userfaultfd,
    IoUringSetup,
    IoUringEnter,
    IoUringRegister,
    NameToHandleAt,
    OpenByHandleAt,
    Mount,
    Umount2,
    PivotRoot,
    OpenTree,
    MoveMount,
    Fsopen,
    Fsconfig,
    Fsmount,
    Fspick,
    MountSetattr,
    KexecLoad,
    KexecFileLoad,
    InitModule,
    FinitModule,
    DeleteModule,
    Ptrace,
    ProcessVmReadv,
    ProcessVmWritev,
    PidfdGetfd,
}

impl Sys {
    /// The syscall's number on `arch` (x86_64's table; aarch64 uses the generic one).
    pub fn number(self, arch: Arch) -> u32 {
        let (x86_64, aarch64) = match self {
            Sys::Socket => (41, 198),
            Sys::Ioctl => (16, 29),
            Sys::Clone => (56, 220),
            Sys::Clone3 => (435, 435),
            Sys::Unshare => (272, 97),
            Sys::Setns => (308, 268),
            Sys::Keyctl => (250, 219),
            Sys::AddKey => (248, 217),
            Sys::RequestKey => (249, 218),
            Sys::Bpf => (321, 280),
            Sys::PerfEventOpen => (298, 241),
            Sys::Userfaultfd => (323, 282),
            Sys::IoUringSetup => (425, 425),
            Sys::IoUringEnter => (426, 426),
            Sys::IoUringRegister => (427, 427),
            Sys::NameToHandleAt => (303, 264),
            Sys::OpenByHandleAt => (304, 265),
            Sys::Mount => (165, 40),
            Sys::Umount2 => (166, 39),
            Sys::PivotRoot => (155, 41),
            Sys::OpenTree => (428, 428),
            Sys::MoveMount => (429, 429),
            Sys::Fsopen => (430, 430),
            Sys::Fsconfig => (431, 431),
            Sys::Fsmount => (432, 432),
            Sys::Fspick => (433, 433),
            Sys::MountSetattr => (442, 442),
            Sys::KexecLoad => (246, 104),
            Sys::KexecFileLoad => (320, 294),
            Sys::InitModule => (175, 105),
            Sys::FinitModule => (313, 273),
            Sys::DeleteModule => (176, 106),
            Sys::Ptrace => (101, 117),
            Sys::ProcessVmReadv => (310, 270),
            Sys::ProcessVmWritev => (311, 271),
            Sys::PidfdGetfd => (438, 438),
        };
        match arch {
            Arch::X86_64 => x86_64,
            Arch::Aarch64 => aarch64,
        }
    }
}

