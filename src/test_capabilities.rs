//! Test-only: an ordinary user's view of modes, for tests that run as root (CI). As root the kernel
//! reads, searches and writes any directory whatever its mode (`chmod 000`, Go's read-only 0555
//! module directories), so what a mode does to a user other than root is tested on a thread
//! without the capabilities that let it.

use sandspawn_helper::capability_sets;

/// Run `f` on a thread without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (capabilities are per
/// thread in the kernel; `capset` with pid 0 changes the calling thread's alone).
pub fn without_dac_override<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut data = capability_sets::get().unwrap();
            // CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2).
            let dac = (1 << 1) | (1 << 2);
            data[0].effective &= !dac;
            data[0].permitted &= !dac;
            capability_sets::set(&data).unwrap();
            f()
        })
        .join()
        .unwrap()
    })
}
