//! The argument checks of the operations: slices of one length, positive
//! strides and widths, rows of one length, a periodic pattern's period.
//! Each panics at the caller's location (`#[track_caller]`); the class
//! operations' own checks are in `classes.rs`.

#[track_caller]
#[inline]
pub(super) fn check_same_len(a: usize, b: usize) {
    if a != b {
        mismatch(a, b)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(a: usize, b: usize) -> ! {
    panic!("bitmap-core: word slices differ in length: {a} and {b}")
}

#[track_caller]
#[inline]
pub(super) fn check_positive(op: &str, stride: usize, width: usize) {
    if stride == 0 || width == 0 {
        panic!("bitmap-core: {op} needs a stride and a width of at least 1 (got {stride} and {width})");
    }
}

#[track_caller]
#[inline]
pub(super) fn check_rows(op: &str, mut lens: impl Iterator<Item = usize>) {
    if let Some(first) = lens.next()
        && let Some(other) = lens.find(|&len| len != first)
    {
        panic!("bitmap-core: {op} needs rows of one length (got {first} and {other} words)");
    }
}

#[track_caller]
#[inline]
pub(super) fn check_pattern(pattern: &[u64], period: usize) {
    if period == 0 || pattern.len().saturating_mul(64) < period {
        panic!(
            "bitmap-core: fill_periodic needs 1 <= period <= pattern bits (got {period} and {})",
            pattern.len() * 64
        );
    }
}

#[track_caller]
#[inline]
pub(super) fn check_union(dst: &[u64], srcs: &[&[u64]]) {
    for s in srcs {
        check_same_len(dst.len(), s.len());
    }
}

#[track_caller]
#[inline]
pub(super) fn check_first_wins<T>(inputs: &[&[u64]], outputs: &[&mut [T]]) {
    if inputs.len() != outputs.len() {
        panic!("bitmap-core: first_wins has {} inputs but {} outputs", inputs.len(), outputs.len());
    }
    check_one_len(inputs, outputs);
}

/// Checks that every input and every output has the first input's length.
#[track_caller]
#[inline]
pub(super) fn check_one_len<T>(inputs: &[&[u64]], outputs: &[&mut [T]]) {
    let n = inputs.first().map_or(0, |s| s.len());
    for s in inputs {
        check_same_len(n, s.len());
    }
    for s in outputs {
        check_same_len(n, s.len());
    }
}
