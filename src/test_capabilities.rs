//! Test-only: an ordinary user's view of modes, for tests that run as root (CI). As root the kernel
//! reads, searches and writes any directory whatever its mode (`chmod 000`, Go's read-only 0555
//! module directories), so what a mode does to a user other than root is tested on a thread
//! without the capabilities that let it.

use sandspawn_helper::capability_sets;

/// Run `f` on a thread without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (capabilities are per
/// thread in the kernel; `capset` with pid 0 changes the calling thread's alone).
pub fn without_dac_override<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    // CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2).
    without((1 << 1) | (1 << 2), f)
}

/// Run `f` on a thread without CAP_LEASE (28), which lets a process take a lease on a file it does
/// not own: with it gone, the kernel refuses a read lease on another user's file (`EACCES`), a real
/// refusal that is not a writer, as a host with `fs.leases-enable` 0 or a filesystem without leases
/// refuses every one.
pub fn without_lease<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    without(1 << 28, f)
}

/// Run `f` on a thread of its own without the capabilities of `mask` (bits of the first word).
fn without<T: Send>(mask: u32, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut data = capability_sets::get().unwrap();
            data[0].effective &= !mask;
            data[0].permitted &= !mask;
            capability_sets::set(&data).unwrap();
            f()
        })
        .join()
        .unwrap()
    })
}
