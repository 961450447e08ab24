//! Canonical-ABI exports of the REMIT recovery core for the `remit-core` world
//! (wasm/remit-core.wit). This crate only converts: bytes in, the core's bytes out.
//!
//! Memory: a bump allocator over linear memory. The host copies each argument list into memory
//! through `cabi_realloc`, calls the export, reads the result, then calls `cabi_post_<name>`,
//! which resets the arena. Every call therefore starts from an empty heap: repeated calls reuse
//! the same pages and memory grows only to the largest single call's needs.
//!
//! The whole crate is wasm32-only; on other targets it is empty so that host builds of the
//! workspace succeed.
#![cfg_attr(target_arch = "wasm32", no_std)]

#[cfg(target_arch = "wasm32")]
mod exports;

#[cfg(target_arch = "wasm32")]
mod arena;
