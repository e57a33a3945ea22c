//! The process's allocator: mimalloc, with a bump arena per thread for the parser's trees.
//!
//! Parsing allocates a node per expression and statement, and a file's tree is freed whole once
//! the file is checked. Through a general-purpose allocator each node costs a free-list pop that
//! often misses the cache (the lists thread through memory that every earlier file's summaries
//! also live in), and freeing the tree costs a walk of it with a free per node. Inside
//! [`in_arena`] a thread's allocations are bumped off a region of its own instead, in the order
//! the parser makes them; freeing one is a no-op, and the region is rewound when the last
//! [`Lease`] on it goes.
//!
//! Only allocations made inside [`in_arena`] come from the region, and the [`Lease`] it returns
//! must outlive every one of them: the caller keeps the lease beside what `f` returned (the
//! tree) and drops it after. Frees of region memory on any thread, and reallocations of it, are
//! told apart by address, so a region block handed to code outside the arena is still freed
//! (as a no-op) or grown (by a copy) correctly.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use mimalloc::MiMalloc;

/// Address space reserved per thread (less where addresses are 32 bits wide, so that the whole
/// reservation fits). A tree that outgrows it continues in mimalloc.
const SLOT_BYTES: usize = if cfg!(target_pointer_width = "64") {
    512 << 20
} else {
    8 << 20
};
/// Threads that get a region; any more allocate their trees through mimalloc.
const SLOTS: usize = u64::BITS as usize;
/// The reservation that holds every thread's region.
const RESERVED_BYTES: usize = SLOTS * SLOT_BYTES;
/// Memory a region keeps resident once rewound (the rest is returned to the system), so that
/// one huge file does not keep its tree's pages for the rest of the run.
const KEPT_BYTES: usize = 8 << 20;

/// The start of the reservation that holds every thread's region; 0 until one is made.
static RESERVED: AtomicUsize = AtomicUsize::new(0);
/// The regions no thread holds, a bit each: a thread's region is given back when it exits.
static FREE_SLOTS: AtomicU64 = AtomicU64::new(u64::MAX);

/// A thread's region and where its bump pointer stands.
#[derive(Clone, Copy)]
struct Region {
    /// 0 where the thread has no region (yet, or none was left).
    start: usize,
    next: usize,
    /// The furthest `next` reached since the region's pages were last returned.
    touched: usize,
    /// The calls of [`in_arena`] running on this thread: allocations come from the region
    /// while any does.
    depth: u32,
    /// Whether an allocation inside the innermost running [`in_arena`] went to mimalloc (the
    /// thread has no region, or it was full).
    spilled: bool,
    /// The leases alive on the region: it is rewound when the last one goes.
    leases: u32,
}

impl Region {
    const NONE: Region = Region {
        start: 0,
        next: 0,
        touched: 0,
        depth: 0,
        spilled: false,
        leases: 0,
    };

    /// Moves the bump pointer to `end`, where that stays inside the region.
    fn advance_to(&mut self, end: usize) -> bool {
        if end > self.start + SLOT_BYTES {
            return false;
        }
        self.next = end;
        self.touched = self.touched.max(end);
        true
    }
}

thread_local! {
    // A `Copy` value with a constant initialiser: no destructor, no allocation, safe to read
    // from inside the allocator.
    static REGION: Cell<Region> = const { Cell::new(Region::NONE) };
    // Gives the region back as the thread exits (the allocator never touches this one).
    static HOLDER: SlotHolder = const { SlotHolder };
}

/// The thread's claim on its region, released by its destructor.
struct SlotHolder;

impl Drop for SlotHolder {
    fn drop(&mut self) {
        let _ = REGION.try_with(|cell| {
            let region = cell.get();
            if region.start != 0 {
                return_pages(region.start, region.touched - region.start);
                let slot = (region.start - RESERVED.load(Ordering::Acquire)) / SLOT_BYTES;
                FREE_SLOTS.fetch_or(1 << slot, Ordering::AcqRel);
                cell.set(Region::NONE);
            }
        });
    }
}

/// mimalloc, with each thread's parse trees in a bump region (see the module's comment).
pub struct Allocator;

/// Whether `ptr` lies in the reserved regions.
fn in_regions(ptr: *mut u8) -> bool {
    let start = RESERVED.load(Ordering::Acquire);
    start != 0 && (ptr as usize).wrapping_sub(start) < RESERVED_BYTES
}

/// A block of the open region of this thread, or `None` (not open, or full: mimalloc serves it).
fn bump(layout: Layout) -> Option<*mut u8> {
    REGION
        .try_with(|cell| {
            let mut region = cell.get();
            // Without a region, `in_arena` marked the scope spilled as it began. A panic's
            // allocations (its message, the hook's backtrace cache, which lives for the rest
            // of the process) must outlive the region, so they go to mimalloc; they are not
            // the tree's, so the scope is not marked spilled for them.
            if region.depth == 0 || region.start == 0 || std::thread::panicking() {
                return None;
            }
            let at = region.next.checked_add(layout.align() - 1)? & !(layout.align() - 1);
            let fits = region.advance_to(at.checked_add(layout.size())?);
            region.spilled |= !fits;
            cell.set(region);
            fits.then_some(at as *mut u8)
        })
        .ok()
        .flatten()
}

/// Grows the block at `ptr` in place where it is the open region's last one and room is left.
fn grow_last(ptr: *mut u8, old_size: usize, new_size: usize) -> bool {
    REGION
        .try_with(|cell| {
            let mut region = cell.get();
            let at = ptr as usize;
            if region.depth == 0 || region.start == 0 || at + old_size != region.next {
                return false;
            }
            let grown = at.checked_add(new_size).is_some_and(|end| region.advance_to(end));
            cell.set(region);
            grown
        })
        .unwrap_or(false)
}

// SAFETY: every block comes from mimalloc or from a region no other thread bumps; region blocks
// stay valid until their thread's last lease goes (the contract of `in_arena`), and are never
// passed to mimalloc.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            Some(block) => block,
            // SAFETY: the caller's layout, passed on.
            None => unsafe { MiMalloc.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            Some(block) => {
                // SAFETY: the block is `layout.size()` bytes of the region, just bumped.
                unsafe { block.write_bytes(0, layout.size()) };
                block
            }
            // SAFETY: the caller's layout, passed on.
            None => unsafe { MiMalloc.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !in_regions(ptr) {
            // SAFETY: not a region block, so one mimalloc gave with this layout.
            unsafe { MiMalloc.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_regions(ptr) {
            // SAFETY: a mimalloc block with this layout.
            return unsafe { MiMalloc.realloc(ptr, layout, new_size) };
        }
        // A block shrinks in place (the parser trims its token list to size once it is done),
        // and the region's last block grows in place.
        if new_size <= layout.size() || grow_last(ptr, layout.size(), new_size) {
            return ptr;
        }
        // SAFETY: `new_size` with the block's alignment is a valid layout (the caller's
        // contract for `realloc`); the old block stays valid until its lease goes, so copying
        // from it is sound, and the copy is the smaller of the two sizes.
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let block = self.alloc(new_layout);
            if !block.is_null() {
                std::ptr::copy_nonoverlapping(ptr, block, layout.size().min(new_size));
            }
            block
        }
    }
}

/// Hands the memory freed so far back to the system where mimalloc keeps it for reuse. It
/// returns freed pages only a while after they are freed, and only at a later call into it, so
/// a long-lived process that goes idle after freeing much (the language server, once a big
/// document is closed) would keep them all.
pub fn return_free_memory() {
    // SAFETY: `mi_collect` has no preconditions; it may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// Keeps the blocks [`in_arena`] allocated valid; the thread's region is rewound when its last
/// lease goes. Not `Send`: it counts on the thread that made it.
pub struct Lease {
    /// Every block made inside came from the region (see [`Lease::holds_all`]).
    whole: bool,
    /// Counted among the region's leases (not where the thread's storage was already gone).
    counted: bool,
    _not_send: PhantomData<*const ()>,
}

impl Lease {
    /// Whether every block allocated inside [`in_arena`] came from the region, so that what
    /// holds them may be forgotten instead of dropped; else some came from mimalloc (the
    /// thread has no region, or it filled up) and must be freed by dropping what holds them.
    pub fn holds_all(&self) -> bool {
        self.whole
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        let _ = REGION.try_with(|cell| {
            let mut region = cell.get();
            region.leases -= 1;
            if region.leases == 0 && region.depth == 0 && region.start != 0 {
                // Debug builds (the tests) overwrite what is released, so that a block kept
                // past its lease reads as garbage at once instead of by chance later.
                if cfg!(debug_assertions) {
                    // SAFETY: `[start, next)` is this thread's region, holding no live block.
                    unsafe { (region.start as *mut u8).write_bytes(0xDD, region.next - region.start) };
                }
                region.next = region.start;
                let kept = region.start + KEPT_BYTES;
                if region.touched > kept {
                    return_pages(kept, region.touched - kept);
                    region.touched = kept;
                }
            }
            cell.set(region);
        });
    }
}

/// Runs `f` with this thread's allocations bumped off its region (where it can have one),
/// and returns what `f` returned with the lease that keeps those blocks valid. Keep the lease
/// until what `f` returned is dropped, and let nothing `f` allocated outlive it. Calls may
/// nest; a region is rewound only when no call runs and no lease is left.
pub fn in_arena<T>(f: impl FnOnce() -> T) -> (T, Lease) {
    /// Ends the scope, also when `f` unwinds (leaving no lease: its blocks are rewound with
    /// the region's next rewind).
    struct Scope {
        spilled_before: bool,
    }
    impl Drop for Scope {
        fn drop(&mut self) {
            let _ = REGION.try_with(|cell| {
                let mut region = cell.get();
                region.depth -= 1;
                region.spilled |= self.spilled_before;
                cell.set(region);
            });
        }
    }
    let began = REGION.try_with(|cell| {
        let mut region = cell.get();
        if region.start == 0 {
            region.start = claim_slot();
            region.next = region.start;
            region.touched = region.start;
        }
        if region.leases == 0 && region.depth == 0 {
            region.next = region.start;
        }
        let spilled_before = region.spilled;
        region.spilled = region.start == 0;
        region.depth += 1;
        cell.set(region);
        Scope { spilled_before }
    });
    let Ok(scope) = began else {
        return (
            f(),
            Lease {
                whole: false,
                counted: false,
                _not_send: PhantomData,
            },
        );
    };
    let value = f();
    let whole = REGION.try_with(|cell| {
        let mut region = cell.get();
        region.leases += 1;
        cell.set(region);
        !region.spilled
    });
    drop(scope);
    let lease = Lease {
        whole: whole.unwrap_or(false),
        counted: whole.is_ok(),
        _not_send: PhantomData,
    };
    (value, lease)
}

/// A region for this thread: the start of a free slot of the reservation, or 0 where none is
/// free (or the thread is exiting, when it could not give it back).
fn claim_slot() -> usize {
    let start = reserve();
    if start == 0 || HOLDER.try_with(|_| ()).is_err() {
        return 0;
    }
    let mut free = FREE_SLOTS.load(Ordering::Acquire);
    while free != 0 {
        let slot = free.trailing_zeros() as usize;
        match FREE_SLOTS.compare_exchange_weak(free, free & !(1 << slot), Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return start + slot * SLOT_BYTES,
            Err(now) => free = now,
        }
    }
    0
}

/// The reservation's start, made on first use: address space only, pages come as they are
/// touched. 0 where it cannot be made (the arena is then unused).
fn reserve() -> usize {
    static MAKING: std::sync::Once = std::sync::Once::new();
    MAKING.call_once(|| RESERVED.store(map_reservation(RESERVED_BYTES), Ordering::Release));
    RESERVED.load(Ordering::Acquire)
}

#[cfg(target_os = "linux")]
fn map_reservation(bytes: usize) -> usize {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no
    // existing memory; failure is reported as MAP_FAILED and handled.
    let start = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if start == libc::MAP_FAILED { 0 } else { start as usize }
}

#[cfg(not(target_os = "linux"))]
fn map_reservation(_bytes: usize) -> usize {
    0
}

/// Gives the pages of `[start, start + bytes)` back to the system; they read as zeros if
/// touched again.
#[cfg(target_os = "linux")]
fn return_pages(start: usize, bytes: usize) {
    // SAFETY: the range lies in this thread's region, which holds no live block (its last
    // lease is going); MADV_DONTNEED on a private anonymous mapping only drops its pages.
    unsafe {
        libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_DONTNEED);
    }
}

#[cfg(not(target_os = "linux"))]
fn return_pages(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn region_block<T>(value: &T) -> bool {
        in_regions(value as *const T as *mut u8)
    }

    #[test]
    fn blocks_made_inside_come_from_the_region_and_are_reused_once_released() {
        let (first, lease) = in_arena(|| Box::new([7u64; 16]));
        assert!(region_block(&*first));
        let address = &*first as *const _ as usize;
        drop(first);
        drop(lease);
        let (second, _lease) = in_arena(|| Box::new([9u64; 16]));
        assert_eq!(&*second as *const _ as usize, address, "the region is rewound");
        assert_eq!(*second, [9u64; 16]);
        // Outside the arena, mimalloc serves.
        let outside = Box::new(1u8);
        assert!(!region_block(&*outside));
    }

    #[test]
    fn a_region_block_grown_outside_the_arena_keeps_its_contents() {
        let (mut numbers, _lease) = in_arena(|| (0..100u32).collect::<Vec<_>>());
        assert!(region_block(&numbers[0]));
        numbers.extend(100..10_000);
        assert!(!region_block(&numbers[0]), "grown into mimalloc");
        assert!(numbers.iter().copied().eq(0..10_000));
    }

    #[test]
    fn a_region_block_shrinks_in_place() {
        let (numbers, _lease) = in_arena(|| {
            let mut numbers: Vec<u64> = Vec::with_capacity(1000);
            numbers.extend(0..10);
            let _later = Box::new(0u8);
            numbers.shrink_to_fit();
            numbers
        });
        assert!(region_block(&numbers[0]));
        assert!(numbers.iter().copied().eq(0..10));
    }

    #[test]
    fn a_region_is_rewound_only_when_its_last_lease_goes() {
        let (outer, outer_lease) = in_arena(|| vec![1u8; 4096]);
        let (inner, inner_lease) = in_arena(|| vec![2u8; 4096]);
        drop(outer_lease);
        let (later, _later_lease) = in_arena(|| vec![3u8; 4096]);
        assert!(outer.iter().all(|&b| b == 1) && inner.iter().all(|&b| b == 2));
        assert!(later.iter().all(|&b| b == 3));
        drop(inner_lease);
    }

    #[test]
    fn a_lease_tells_whether_every_block_came_from_the_region() {
        let (small, lease) = in_arena(|| vec![1u8; 64]);
        assert!(lease.holds_all() && region_block(&small[0]));
        // Larger than a region: mimalloc serves it (address space only; no page is touched).
        let (huge, lease) = in_arena(|| Vec::<u8>::with_capacity(SLOT_BYTES + 1));
        assert!(!lease.holds_all() && !in_regions(huge.as_ptr().cast_mut()));
    }

    #[test]
    fn nested_scopes_keep_the_outer_scope_in_the_region() {
        let (((first, second), inner), outer_lease) = in_arena(|| {
            let first = vec![1u8; 256];
            let (inner, inner_lease) = in_arena(|| vec![2u8; 256]);
            drop(inner_lease);
            // Still inside the outer scope: the region is not rewound and still serves.
            let second = vec![3u8; 256];
            assert!(region_block(&second[0]));
            ((first, second), inner)
        });
        assert!(outer_lease.holds_all());
        assert!(first.iter().all(|&b| b == 1) && second.iter().all(|&b| b == 3));
        assert!(inner.iter().all(|&b| b == 2));
    }

    #[test]
    fn a_scope_that_unwinds_leaves_the_region_usable() {
        let unwound = std::panic::catch_unwind(|| in_arena(|| -> Vec<u8> { panic!("parser bug") }));
        assert!(unwound.is_err());
        let (block, lease) = in_arena(|| Box::new(7u64));
        assert!(lease.holds_all() && region_block(&*block));
        let outside = Box::new(1u8);
        assert!(!region_block(&*outside), "the unwound scope closed");
    }

    #[test]
    fn what_a_panic_allocates_outlives_the_region() {
        let bug = 7;
        let unwound = std::panic::catch_unwind(|| in_arena(|| -> Vec<u8> { panic!("parser bug {bug}") }));
        // Another scope bumps over where the unwound one allocated, and its lease's end
        // overwrites the region (in debug builds).
        let (block, lease) = in_arena(|| vec![0xAAu8; 4096]);
        drop(block);
        drop(lease);
        let Err(message) = unwound else {
            panic!("the closure panicked")
        };
        let text = message.downcast_ref::<String>().expect("a formatted message");
        assert!(!region_block(text) && !region_block(&text.as_bytes()[0]));
        assert_eq!(text, "parser bug 7");
    }

    #[test]
    fn exited_threads_give_their_regions_back() {
        // More threads one after another than there are regions: each still gets one.
        for _ in 0..SLOTS + 8 {
            let in_region = std::thread::spawn(|| {
                let (block, _lease) = in_arena(|| Box::new(5u32));
                region_block(&*block)
            })
            .join()
            .unwrap();
            assert!(in_region);
        }
    }
}
