//! A bump allocator over wasm linear memory, reset after every exported call.
//!
//! Why not a general allocator: a call allocates its inputs, a little scratch (node table,
//! interrupt map) and one output buffer, then everything dies together. A bump pointer makes
//! allocation a few instructions, and the reset in `cabi_post_*` frees all of it at once.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::Cell;

const PAGE_BYTES: usize = 65_536;

extern "C" {
    /// First free byte after the data segments and the stack (provided by wasm-ld).
    static __heap_base: u8;
}

pub struct Arena {
    /// Next free byte; 0 until the first allocation.
    next: Cell<usize>,
    /// An allocation since the last reset found no room (linear memory could not grow that far,
    /// or the block would pass the 32-bit address space). The core never recovers from that (the
    /// allocation error aborts, a trap), so the host reads this after a trap to tell a call that
    /// ran out of memory from a bug (`out-of-memory`, exports.rs).
    exhausted: Cell<bool>,
}

// Wasm modules built here are single-threaded: no shared memory, no threads.
unsafe impl Sync for Arena {}

#[global_allocator]
pub static ARENA: Arena = Arena { next: Cell::new(0), exhausted: Cell::new(false) };

fn heap_base() -> usize {
    // Taking the address of the linker-provided symbol reads nothing.
    core::ptr::addr_of!(__heap_base) as usize
}

fn memory_end() -> usize {
    wasm32::memory_size(0).saturating_mul(PAGE_BYTES)
}

/// The most a grow adds beyond what was asked: 8 MiB.
const MAX_EXTRA_PAGES: usize = 128;

/// Makes sure linear memory reaches `end`; false if it cannot grow that far.
///
/// Why a grow adds more than is missing: in V8 a `memory.grow` costs in proportion to the memory's
/// size (about 1 ms at 160 MiB), and a call that copies in a large log and then grows its vectors a
/// few pages at a time paid it hundreds of times (a 10^6-record recovery in a fresh instance: 450 ms
/// against 180 ms in one already grown). So a grow adds an eighth of the memory, at most 8 MiB more
/// than is missing (the peak stays within 8 MiB of what the call uses), and falls back to exactly
/// what is missing when that much cannot be had.
fn ensure_memory(end: usize) -> bool {
    let have = memory_end();
    if end <= have {
        return true;
    }
    let missing = (end - have).div_ceil(PAGE_BYTES);
    let extra = (have / PAGE_BYTES / 8).min(MAX_EXTRA_PAGES);
    if extra > 0 && wasm32::memory_grow(0, missing.saturating_add(extra)) != usize::MAX {
        return true;
    }
    wasm32::memory_grow(0, missing) != usize::MAX
}

impl Arena {
    fn start(&self) -> usize {
        let next = self.next.get();
        if next == 0 {
            heap_base()
        } else {
            next
        }
    }

    /// Frees everything allocated since the last reset.
    pub fn reset(&self) {
        self.next.set(heap_base());
        self.exhausted.set(false);
    }

    /// Whether an allocation since the last reset found no room.
    pub fn exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// Remembers that an allocation found no room (also one refused before it reached the arena).
    pub fn mark_exhausted(&self) {
        self.exhausted.set(true);
    }

    /// The answer to an allocation that found no room: null, remembered.
    fn no_room(&self) -> *mut u8 {
        self.mark_exhausted();
        core::ptr::null_mut()
    }
}

unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let align = layout.align();
        let start = match self.start().checked_add(align - 1) {
            Some(v) => v & !(align - 1),
            None => return self.no_room(),
        };
        let end = match start.checked_add(layout.size()) {
            Some(end) => end,
            None => return self.no_room(),
        };
        if !ensure_memory(end) {
            return self.no_room();
        }
        self.next.set(end);
        start as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Only the most recent block can be given back early; the rest waits for the reset.
        if (ptr as usize).wrapping_add(layout.size()) == self.next.get() {
            self.next.set(ptr as usize);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old_end = (ptr as usize).wrapping_add(layout.size());
        if old_end == self.next.get() {
            // The last block grows (or shrinks) in place: Vec growth costs no copies.
            let end = match (ptr as usize).checked_add(new_size) {
                Some(end) => end,
                None => return self.no_room(),
            };
            if !ensure_memory(end) {
                return self.no_room();
            }
            self.next.set(end);
            return ptr;
        }
        // SAFETY: the caller guarantees `layout` with `new_size` is valid.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let fresh = unsafe { self.alloc(new_layout) };
        if !fresh.is_null() {
            let keep = if layout.size() < new_size { layout.size() } else { new_size };
            // SAFETY: both blocks are live, distinct and at least `keep` bytes long.
            unsafe { core::ptr::copy_nonoverlapping(ptr, fresh, keep) };
        }
        fresh
    }
}
