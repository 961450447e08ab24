//! The core-module exports the component's canonical ABI expects for wasm/remit-core.wit:
//!
//! | export              | core signature            | meaning                                   |
//! |---------------------|---------------------------|-------------------------------------------|
//! | `recover`           | (i32 ptr, i32 len) -> i32 | returns a pointer to `[ptr, len]` (u32 x2)|
//! | `cabi_post_recover` | (i32) -> ()               | host is done with the result: reset       |
//! | `admit`             | (i32, i32, i32, i32) -> i32 | as `recover`, two argument lists        |
//! | `cabi_post_admit`   | (i32) -> ()               | reset                                     |
//! | `feed`              | (i32, i32, i32, i32) -> i32 | as `admit`: summary, chunk              |
//! | `cabi_post_feed`    | (i32) -> ()               | reset                                     |
//! | `admit-from`        | (i32, i32, i32, i32) -> i32 | as `admit`: summary, request            |
//! | `cabi_post_admit-from` | (i32) -> ()            | reset                                     |
//! | `format-version`    | () -> i32                 | the log format version                    |
//! | `out-of-memory`     | () -> i32                 | 1 when an allocation since the last reset found no room (not in the WIT: read by the host after a trap) |
//! | `cabi_realloc`      | (i32, i32, i32, i32) -> i32 | the host allocates argument lists here  |
//! | `memory`            | (exported by wasm-ld)     |                                           |

extern crate alloc;

use alloc::vec::Vec;
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

use crate::arena::ARENA;

/// Where a `list<u8>` result is described to the host: data pointer, then length.
#[repr(C, align(8))]
struct ReturnArea(UnsafeCell<[u32; 2]>);

// Single-threaded module (see arena.rs).
unsafe impl Sync for ReturnArea {}

static RETURN_AREA: ReturnArea = ReturnArea(UnsafeCell::new([0; 2]));

#[panic_handler]
fn on_panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // The core is total, so this is reached only by a bug or by running out of memory. A vector
    // asked for more than a Layout may hold (2 GiB here) panics with "capacity overflow" before
    // the allocator is asked: that is running out of memory too, and is remembered as such.
    if message_starts_with(info, b"capacity overflow") {
        ARENA.mark_exhausted();
    }
    core::arch::wasm32::unreachable()
}

/// Whether the panic's message begins with `prefix`, read without allocating.
fn message_starts_with(info: &core::panic::PanicInfo<'_>, prefix: &[u8]) -> bool {
    struct Prefix<'a> {
        expected: &'a [u8],
        seen: usize,
        differs: bool,
    }
    impl core::fmt::Write for Prefix<'_> {
        fn write_str(&mut self, text: &str) -> core::fmt::Result {
            for byte in text.bytes() {
                match self.expected.get(self.seen) {
                    Some(want) if *want != byte => self.differs = true,
                    Some(_) => {}
                    None => return Ok(()),
                }
                self.seen += 1;
            }
            Ok(())
        }
    }
    let mut matcher = Prefix { expected: prefix, seen: 0, differs: false };
    let _ = core::fmt::write(&mut matcher, format_args!("{}", info.message()));
    !matcher.differs && matcher.seen >= prefix.len()
}

/// The argument list the host wrote at (`ptr`, `len`).
///
/// # Safety
/// The host (the canonical ABI lowering) allocated `len` bytes at `ptr` through
/// `cabi_realloc` and does not touch them during the call.
unsafe fn argument<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: see the function's contract.
        unsafe { core::slice::from_raw_parts(ptr, len) }
    }
}

/// Hands `out` to the host: its bytes stay in the arena until `cabi_post_*` resets it.
fn give_back(out: Vec<u8>) -> *mut u8 {
    let out = core::mem::ManuallyDrop::new(out);
    let area = RETURN_AREA.0.get();
    // SAFETY: single-threaded; the host reads the area only after this call returns.
    unsafe {
        (*area)[0] = out.as_ptr() as u32;
        (*area)[1] = out.len() as u32;
    }
    area as *mut u8
}

#[no_mangle]
pub unsafe extern "C" fn recover(log_ptr: *const u8, log_len: usize) -> *mut u8 {
    // SAFETY: canonical-ABI argument (see `argument`).
    let log = unsafe { argument(log_ptr, log_len) };
    give_back(remit_verus_core::recover(log))
}

#[no_mangle]
pub extern "C" fn cabi_post_recover(_result: *mut u8) {
    ARENA.reset();
}

#[no_mangle]
pub unsafe extern "C" fn admit(
    log_ptr: *const u8,
    log_len: usize,
    request_ptr: *const u8,
    request_len: usize,
) -> *mut u8 {
    // SAFETY: canonical-ABI arguments (see `argument`).
    let (log, request) = unsafe { (argument(log_ptr, log_len), argument(request_ptr, request_len)) };
    give_back(remit_verus_core::admit(log, request))
}

#[no_mangle]
pub extern "C" fn cabi_post_admit(_result: *mut u8) {
    ARENA.reset();
}

#[no_mangle]
pub unsafe extern "C" fn feed(summary_ptr: *const u8, summary_len: usize, chunk_ptr: *const u8, chunk_len: usize) -> *mut u8 {
    // SAFETY: canonical-ABI arguments (see `argument`).
    let (summary, chunk) = unsafe { (argument(summary_ptr, summary_len), argument(chunk_ptr, chunk_len)) };
    give_back(remit_verus_core::feed(summary, chunk))
}

#[no_mangle]
pub extern "C" fn cabi_post_feed(_result: *mut u8) {
    ARENA.reset();
}

#[export_name = "admit-from"]
pub unsafe extern "C" fn admit_from(
    summary_ptr: *const u8,
    summary_len: usize,
    request_ptr: *const u8,
    request_len: usize,
) -> *mut u8 {
    // SAFETY: canonical-ABI arguments (see `argument`).
    let (summary, request) = unsafe { (argument(summary_ptr, summary_len), argument(request_ptr, request_len)) };
    give_back(remit_verus_core::admit_from(summary, request))
}

#[export_name = "cabi_post_admit-from"]
pub extern "C" fn cabi_post_admit_from(_result: *mut u8) {
    ARENA.reset();
}

#[export_name = "format-version"]
pub extern "C" fn format_version() -> u32 {
    remit_verus_core::LOG_FORMAT_VERSION
}

/// 1 when an allocation since the last reset (the last `cabi_post_*`) found no room, else 0. A
/// core-module export only (the world does not lift it): after a trap, the shell's binding asks it
/// whether the call ran out of linear memory, which fails that call and not the core, or hit a bug
/// (ts-shell/src/core/wasm-core.ts). Reads one flag; allocates nothing.
#[export_name = "out-of-memory"]
pub extern "C" fn out_of_memory() -> u32 {
    u32::from(ARENA.exhausted())
}

/// The canonical ABI's allocator entry: `old_size == 0` allocates, otherwise reallocates.
/// Traps when memory cannot grow (the arena's `out-of-memory` flag says why) or the host asks for
/// an impossible alignment: a 0 returned here would be taken as an address by a host that does
/// not check it (jco's generated lowering writes the argument there, over the stack and data).
#[no_mangle]
pub unsafe extern "C" fn cabi_realloc(old_ptr: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    let Ok(layout) = Layout::from_size_align(old_size, align.max(1)) else {
        core::arch::wasm32::unreachable()
    };
    if new_size == 0 {
        // A zero-length list needs an aligned, non-null address and no bytes.
        return layout.align() as *mut u8;
    }
    // A list longer than a Layout may be (isize::MAX: 2 GiB - 1 here) cannot be had either.
    let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
        ARENA.mark_exhausted();
        core::arch::wasm32::unreachable()
    };
    // SAFETY: GlobalAlloc contracts: non-zero sizes, valid layouts, and `old_ptr` from a previous
    // cabi_realloc with `old_size` when non-null.
    let block = unsafe {
        if old_ptr.is_null() || old_size == 0 {
            ARENA.alloc(new_layout)
        } else {
            ARENA.realloc(old_ptr, layout, new_layout.size())
        }
    };
    if block.is_null() {
        core::arch::wasm32::unreachable()
    }
    block
}
