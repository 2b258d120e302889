//! A thread's capability sets through `capget`/`capset` (version 3: two 32-bit words per set).
//! Shared so that the helper's dropping of every capability (`capabilities` in the binary) and the
//! addon's test-only view of an ordinary user (`test_capabilities`) read and write them alike.

/// `_LINUX_CAPABILITY_VERSION_3`.
const VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: i32,
}

/// One word of each set; `[Data; 2]` holds capabilities 0 to 31 and 32 to 63.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Data {
    pub effective: u32,
    pub permitted: u32,
    pub inheritable: u32,
}

/// The calling thread's sets (pid 0 names the calling thread).
pub fn get() -> std::io::Result<[Data; 2]> {
    let mut head = Header { version: VERSION_3, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: a valid header and a two-element data array, as capget(2) requires for version 3.
    if unsafe { libc::syscall(libc::SYS_capget, &mut head as *mut Header, data.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(data)
}

/// Set the calling thread's sets (capabilities are per thread in the kernel).
pub fn set(data: &[Data; 2]) -> std::io::Result<()> {
    let head = Header { version: VERSION_3, pid: 0 };
    // SAFETY: a valid header and a two-element data array, as capset(2) requires.
    if unsafe { libc::syscall(libc::SYS_capset, &head as *const Header, data.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether any capability is in any of the sets.
pub fn any(data: &[Data; 2]) -> bool {
    data.iter().any(|d| d.effective | d.permitted | d.inheritable != 0)
}
