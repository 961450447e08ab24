//! The model: Verus spec functions that restate docs/log-format.md and docs/core-api.md over
//! mathematical sequences. Trusted (it is the specification); erased in a normal build.
//! `properties` states the guarantees as lemmas (stated, not yet proved: see README.md).
pub mod admission;
pub mod codec;
pub mod properties;
pub mod recovery;
