//! Allocations whose size comes from a Python argument.
//!
//! Rust aborts the process when an allocation fails, and the Rust crates
//! allocate infallibly (as Rust code does). A Python caller who asks for
//! an impossible size (`unfold(1, 10**15, 1, [-1])`, `Grid.zeros(10**6,
//! 10**9)`) must get a `MemoryError` instead, so the binding checks such
//! sizes before it calls in:
//!
//! - up to [`PROBE_WORDS`] words (16 MiB) nothing is checked: an
//!   allocation that small fails only when the process is out of memory
//!   anyway;
//! - above, it reserves the memory once without touching it (`malloc` and
//!   `free` of an `mmap`ed block, a few microseconds) and gives it back.
//!
//! That is a check, not a reservation: memory taken by another thread
//! between the check and the call can still make the call abort. It turns
//! the sizes that cannot be had at all into a `MemoryError`.

use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

/// Sizes up to this many words (16 MiB) are not checked.
const PROBE_WORDS: usize = 1 << 21;

/// `MemoryError` unless `bits` bits can be allocated now.
pub(crate) fn ensure_bits(bits: usize) -> PyResult<()> {
    let words = bits.div_ceil(64);
    if words <= PROBE_WORDS {
        return Ok(());
    }
    let mut probe: Vec<u64> = Vec::new();
    probe.try_reserve_exact(words).map_err(|_| PyMemoryError::new_err(format!("cannot allocate {bits} bits")))
}

/// `MemoryError` unless `rows` rows of `cols` bits can be allocated now.
pub(crate) fn ensure_cells(rows: usize, cols: usize) -> PyResult<()> {
    let words = rows
        .checked_mul(cols.div_ceil(64))
        .ok_or_else(|| PyMemoryError::new_err(format!("cannot allocate {rows} rows of {cols} bits")))?;
    ensure_bits(words.saturating_mul(64))
        .map_err(|_| PyMemoryError::new_err(format!("cannot allocate {rows} rows of {cols} bits")))
}

/// An empty vector with room for `len` items, or `MemoryError`.
pub(crate) fn vec_with_capacity<T>(len: usize, what: &str) -> PyResult<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| PyMemoryError::new_err(format!("cannot allocate {len} {what}")))?;
    Ok(out)
}
