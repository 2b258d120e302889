//! The helper's allocator: a bump arena of fixed size for its setup, the C library's allocator
//! past it.
//!
//! Why: musl's allocator (the helper is built for musl, see scripts/build-helper.js) gives a
//! small group back to the kernel as soon as its last block is freed, and the helper's setup
//! allocates and frees in just that pattern (a line of the mount table parsed, then dropped): a
//! run's helper made about 160 `mmap`/`munmap` pairs, each a page fault and a page zeroed, before
//! the command started. The arena is zero-filled `.bss`: the kernel maps its pages as they are
//! first touched, once, and nothing is unmapped until `execve` drops them all.
//!
//! Bounded: the arena never grows. A block that does not fit goes to the C library, and so does
//! everything once the arena is used up; freeing in the arena only takes back the latest block
//! (what a growing buffer or a scratch string does), the rest stays until `execve` or exit. A
//! helper that stays as a supervisor (the Landlock mode) so holds at most `ARENA` bytes more.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the setup of a run in a workspace of a thousand repositories uses, with room.
const ARENA: usize = 4 << 20;

#[repr(C, align(4096))]
struct Arena(UnsafeCell<[u8; ARENA]>);

// SAFETY: disjoint ranges are handed out through the atomic `END`; no two callers share bytes.
unsafe impl Sync for Arena {}

static BYTES: Arena = Arena(UnsafeCell::new([0; ARENA]));
/// Offset of the arena's first free byte.
static END: AtomicUsize = AtomicUsize::new(0);

pub struct SetupAlloc;

impl SetupAlloc {
    fn arena() -> Bump<'static> {
        Bump { base: BYTES.0.get() as usize, len: ARENA, end: &END }
    }
}

/// Bytes `base..base + len`, handed out from the front; `end`: the offset of the first free one.
struct Bump<'a> {
    base: usize,
    len: usize,
    end: &'a AtomicUsize,
}

impl Bump<'_> {
    fn holds(&self, ptr: *mut u8) -> bool {
        (self.base..self.base + self.len).contains(&(ptr as usize))
    }

    /// A block of `layout`, or null when it does not fit.
    fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut end = self.end.load(Ordering::Relaxed);
        loop {
            let start = (self.base + end).next_multiple_of(layout.align()) - self.base;
            let Some(new_end) = start.checked_add(layout.size()).filter(|e| *e <= self.len) else { return std::ptr::null_mut() };
            match self.end.compare_exchange_weak(end, new_end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return (self.base + start) as *mut u8,
                Err(now) => end = now,
            }
        }
    }

    /// Take back `ptr` if it is the latest block and none was taken meanwhile; otherwise it stays.
    fn free(&self, ptr: *mut u8, size: usize) {
        let start = ptr as usize - self.base;
        let _ = self.end.compare_exchange(start + size, start, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Grow or shrink the latest block where it is; `false`: it is not the latest, or has no room.
    fn resize(&self, ptr: *mut u8, size: usize, new_size: usize) -> bool {
        let start = ptr as usize - self.base;
        start + new_size <= self.len && self.end.compare_exchange(start + size, start + new_size, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }
}

// SAFETY: blocks are aligned as asked, disjoint, and valid until freed; those not from the
// arena are the C library's, handed back to it.
unsafe impl GlobalAlloc for SetupAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = Self::arena().alloc(layout);
        if p.is_null() { unsafe { System.alloc(layout) } } else { p }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let arena = Self::arena();
        if arena.holds(ptr) { arena.free(ptr, layout.size()) } else { unsafe { System.dealloc(ptr, layout) } }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let arena = Self::arena();
        if !arena.holds(ptr) {
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if arena.resize(ptr, layout.size(), new_size) || new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: the layout's alignment with a size the caller vouches for.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks hold at least `layout.size()` bytes and do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size()) };
            arena.free(ptr, layout.size());
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arena of the tests' own: the global one is shared with every other test's thread.
    fn arena(len: usize) -> Bump<'static> {
        let bytes: &'static mut [u64] = Box::leak(vec![0u64; len / 8].into_boxed_slice());
        Bump { base: bytes.as_mut_ptr() as usize, len, end: Box::leak(Box::new(AtomicUsize::new(0))) }
    }

    #[test]
    fn the_latest_block_grows_in_place_and_a_freed_latest_block_is_taken_again() {
        let a = arena(8192);
        let l = Layout::from_size_align(24, 8).unwrap();
        let p = a.alloc(l);
        assert!(a.holds(p));
        assert!(a.resize(p, 24, 4096), "the latest block grows where it is");
        assert!(!a.resize(p, 4096, 8193), "past the arena's end");
        a.free(p, 4096);
        assert_eq!(a.alloc(l), p, "the freed latest block is taken again");
    }

    #[test]
    fn a_block_that_is_not_the_latest_stays_and_the_arena_never_grows() {
        let a = arena(4096);
        let l = Layout::from_size_align(1024, 8).unwrap();
        let (p, q) = (a.alloc(l), a.alloc(l));
        a.free(p, 1024);
        assert!(!a.resize(p, 1024, 2048), "not the latest");
        assert_ne!(a.alloc(l), p, "a block below the latest stays taken");
        assert!(!a.alloc(l).is_null());
        assert!(a.alloc(l).is_null(), "full: the caller goes to the C library");
        assert!(a.holds(q));
    }

    #[test]
    fn blocks_are_aligned_as_asked_and_disjoint() {
        let a = arena(4096);
        let p = a.alloc(Layout::from_size_align(3, 1).unwrap());
        let q = a.alloc(Layout::from_size_align(64, 64).unwrap());
        assert_eq!(q as usize % 64, 0);
        assert!(q as usize >= p as usize + 3);
    }

    #[test]
    fn the_allocator_takes_small_blocks_from_its_arena_and_larger_ones_from_the_c_library() {
        // Only this test uses `SetupAlloc` (the tests' own global allocator is the C library's).
        let small = Layout::from_size_align(100, 8).unwrap();
        let big = Layout::from_size_align(ARENA + 1, 16).unwrap();
        unsafe {
            let p = SetupAlloc.alloc(small);
            assert!(SetupAlloc::arena().holds(p));
            let q = SetupAlloc.realloc(p, small, 200_000);
            assert_eq!(q, p, "the latest block grew where it was");
            let r = SetupAlloc.realloc(q, Layout::from_size_align(200_000, 8).unwrap(), ARENA + 10);
            assert!(!r.is_null() && !SetupAlloc::arena().holds(r), "past the arena: the C library's block");
            r.write_bytes(5, ARENA + 10);
            SetupAlloc.dealloc(r, Layout::from_size_align(ARENA + 10, 8).unwrap());
            let b = SetupAlloc.alloc(big);
            assert!(!b.is_null() && !SetupAlloc::arena().holds(b));
            SetupAlloc.dealloc(b, big);
            assert_eq!(SetupAlloc.alloc(small), p, "the arena took its block back when it moved out");
        }
    }
}
