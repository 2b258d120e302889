//! Test-only: an ordinary user's view of modes, for tests that run as root (CI). As root the kernel
//! reads, searches and writes any directory whatever its mode (`chmod 000`, Go's read-only 0555
//! module directories), so what a mode does to a user other than root is tested on a thread
//! without the capabilities that let it.

/// Run `f` on a thread without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (capabilities are per
/// thread in the kernel; `capset` with pid 0 changes the calling thread's alone).
pub fn without_dac_override<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            let head = Header { version: 0x2008_0522, pid: 0 };
            let mut data = [Data::default(); 2];
            // SAFETY: a valid header and a two-element data array, as capget(2) and capset(2) take.
            assert_eq!(unsafe { libc::syscall(libc::SYS_capget, &head as *const Header, data.as_mut_ptr()) }, 0);
            // CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2).
            let dac = (1 << 1) | (1 << 2);
            data[0].effective &= !dac;
            data[0].permitted &= !dac;
            // SAFETY: as above.
            assert_eq!(unsafe { libc::syscall(libc::SYS_capset, &head as *const Header, data.as_ptr()) }, 0, "{}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .unwrap()
    })
}
