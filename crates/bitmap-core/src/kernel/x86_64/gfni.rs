//! The row split and join of 64 and of 8 interleaved rows in AVX-512
//! registers, with VBMI's byte permute (`vpermb`) and GFNI's affine
//! transform (`vgf2p8affineqb`), used by the `avx512` kernel where the CPU
//! has both (Intel since Ice Lake, AMD since Zen 4).
//!
//! The one bit-level step is GFNI's: `vgf2p8affineqb` with the constant
//! `0x8040_2010_0804_0201` as its data operand and a qword of 8 bytes as
//! its matrix transposes that qword as an 8×8 bit matrix (after its bytes
//! are reversed, which the byte permute before it does for free). The rest
//! is byte and qword movement:
//!
//! - 64 rows: a 64×64 bit block (64 flat words, one per chunk, bit `k` =
//!   row `k`) in 8 registers is an 8×8 grid of 8×8 bit tiles. A `vpermb`
//!   per register gathers each tile into a qword, GFNI transposes the
//!   tiles, an 8×8 qword transpose across the registers (24 shuffles) puts
//!   each tile at its mirrored place and a second `vpermb` per register
//!   spreads the tile's bytes back out: 64 words in 56 instructions.
//! - 8 rows: each flat byte is one chunk's 8 rows, so GFNI's transpose of a
//!   flat word gives, in byte `k`, row `k`'s 8 bits of that word's chunks,
//!   and a `vpermb` gathers row `k`'s bytes of a register into qword `k`.
//!
//! In both cases 8 consecutive words of a row are then gathered into one
//! register by another 8×8 qword transpose, so every row is written (and,
//! for the join, read) 64 bytes at a time, `k`-masked at its end.
//!
//! Miri does not implement `vpermb` (`llvm.x86.avx512.permvar.qi.512`,
//! checked with nightly Miri, 2026-12), so under Miri [`is_available`] is
//! false whatever features the build enables, and the `avx512` kernel
//! takes the AVX2 kernel's word loops instead, which Miri does check.

use core::arch::x86_64::*;

/// Whether this CPU has what the functions below are compiled for:
/// AVX512F and BW (the registers, `k`-masked loads and stores), VBMI
/// (`vpermb`) and GFNI (its 512-bit form needs AVX512F too).
/// Never under Miri (see the module comment).
#[inline]
pub(crate) fn is_available() -> bool {
    !cfg!(miri)
        && std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vbmi")
        && std::is_x86_feature_detected!("gfni")
}

/// 64 bytes on a cache line: the tables and the staging buffers.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line<T>(T);

/// GFNI's data operand that makes `vgf2p8affineqb` a bit transpose: byte
/// `i` is `1 << i`, so result bit `i` of byte `k` is bit `k` of matrix
/// byte `7 − i`.
const GF_TRANSPOSE: i64 = 0x8040_2010_0804_0201_u64 as i64;

/// The `vpermb` index of the 8×8 byte transpose within a register (byte
/// `8j + r` ← byte `8r + j`).
static BYTE_TRANSPOSE: Line<[u8; 64]> = Line({
    let mut idx = [0u8; 64];
    let mut p = 0;
    while p < 64 {
        idx[p] = ((p % 8) * 8 + p / 8) as u8;
        p += 1;
    }
    idx
});

/// The byte transpose with the bytes of each qword then reversed (byte
/// `8b + m` ← byte `8(7 − m) + b`): the tile gather before GFNI.
static BYTE_TRANSPOSE_REVERSED: Line<[u8; 64]> = Line({
    let mut idx = [0u8; 64];
    let mut p = 0;
    while p < 64 {
        idx[p] = ((7 - p % 8) * 8 + p / 8) as u8;
        p += 1;
    }
    idx
});

/// The bytes of each qword reversed (byte `8q + m` ← byte `8q + 7 − m`).
static QWORD_REVERSED: Line<[u8; 64]> = Line({
    let mut idx = [0u8; 64];
    let mut p = 0;
    while p < 64 {
        idx[p] = (p / 8 * 8 + 7 - p % 8) as u8;
        p += 1;
    }
    idx
});

/// The 8×8 transpose of the qwords of 8 registers: qword `j` of result
/// `i` is qword `i` of `r[j]`.
///
/// # Safety
/// The CPU has AVX512F.
#[inline(always)]
unsafe fn qword_transpose(r: [__m512i; 8]) -> [__m512i; 8] {
    // SAFETY: register-only AVX512F intrinsics; the caller guarantees it.
    unsafe {
        let t = [
            _mm512_unpacklo_epi64(r[0], r[1]),
            _mm512_unpackhi_epi64(r[0], r[1]),
            _mm512_unpacklo_epi64(r[2], r[3]),
            _mm512_unpackhi_epi64(r[2], r[3]),
            _mm512_unpacklo_epi64(r[4], r[5]),
            _mm512_unpackhi_epi64(r[4], r[5]),
            _mm512_unpacklo_epi64(r[6], r[7]),
            _mm512_unpackhi_epi64(r[6], r[7]),
        ];
        // t[0] = r0.q0 r1.q0 r0.q2 r1.q2 r0.q4 r1.q4 r0.q6 r1.q6, t[1] the
        // odd qwords; then pairs of 128-bit lanes of two such.
        let even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
        let odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
        let u = [
            _mm512_permutex2var_epi64(t[0], even, t[2]), // q0 of r0..r3, q4
            _mm512_permutex2var_epi64(t[1], even, t[3]), // q1, q5
            _mm512_permutex2var_epi64(t[0], odd, t[2]),  // q2, q6
            _mm512_permutex2var_epi64(t[1], odd, t[3]),  // q3, q7
            _mm512_permutex2var_epi64(t[4], even, t[6]),
            _mm512_permutex2var_epi64(t[5], even, t[7]),
            _mm512_permutex2var_epi64(t[4], odd, t[6]),
            _mm512_permutex2var_epi64(t[5], odd, t[7]),
        ];
        [
            _mm512_shuffle_i64x2::<0x44>(u[0], u[4]),
            _mm512_shuffle_i64x2::<0x44>(u[1], u[5]),
            _mm512_shuffle_i64x2::<0x44>(u[2], u[6]),
            _mm512_shuffle_i64x2::<0x44>(u[3], u[7]),
            _mm512_shuffle_i64x2::<0xEE>(u[0], u[4]),
            _mm512_shuffle_i64x2::<0xEE>(u[1], u[5]),
            _mm512_shuffle_i64x2::<0xEE>(u[2], u[6]),
            _mm512_shuffle_i64x2::<0xEE>(u[3], u[7]),
        ]
    }
}

/// The 64×64 bit transpose of 8 registers (word `8R + i` is qword `i` of
/// `a[R]`): bit `c` of word `r` ↔ bit `r` of word `c`.
///
/// # Safety
/// The CPU has AVX512F, VBMI and GFNI.
#[inline(always)]
unsafe fn transpose_block(a: [__m512i; 8]) -> [__m512i; 8] {
    // SAFETY: register-only intrinsics of those features, and loads of the
    // 64-byte tables.
    unsafe {
        let gather = _mm512_load_si512(BYTE_TRANSPOSE_REVERSED.0.as_ptr().cast());
        let spread = _mm512_load_si512(BYTE_TRANSPOSE.0.as_ptr().cast());
        let gf = _mm512_set1_epi64(GF_TRANSPOSE);
        // Qword B of tiles[R]: the tile of words 8R.., bits 8B.., bytes
        // reversed; transposed by GFNI.
        let tiles = a.map(|x| _mm512_gf2p8affine_epi64_epi8::<0>(gf, _mm512_permutexvar_epi8(gather, x)));
        qword_transpose(tiles).map(|x| _mm512_permutexvar_epi8(spread, x))
    }
}

/// The mask of the first `n <= 8` qwords.
#[inline(always)]
fn lanes(n: usize) -> __mmask8 {
    ((1u16 << n) - 1) as __mmask8
}

/// Loads 8 words of `src` from word `start`, those past its end as 0.
///
/// # Safety
/// The CPU has AVX512F.
#[inline(always)]
unsafe fn load_words(src: &[u64], start: usize) -> __m512i {
    let n = src.len().saturating_sub(start).min(8);
    if n == 8 {
        // SAFETY: words `start..start + 8` are within `src`.
        unsafe { _mm512_loadu_si512(src.as_ptr().add(start).cast()) }
    } else {
        // SAFETY: the masked load touches only the first `n` qwords, which
        // are within `src` (none when `n` is 0: then nothing is read, and
        // the pointer is only formed when `start <= src.len()`).
        unsafe {
            if n == 0 {
                _mm512_setzero_si512()
            } else {
                _mm512_maskz_loadu_epi64(lanes(n), src.as_ptr().add(start).cast())
            }
        }
    }
}

/// Stores the first `min(8, dst.len() − start)` qwords of `x` to `dst`
/// from word `start` (`start < dst.len()`).
///
/// # Safety
/// The CPU has AVX512F.
#[inline(always)]
unsafe fn store_words(dst: &mut [u64], start: usize, x: __m512i) {
    debug_assert!(start < dst.len());
    let n = (dst.len() - start).min(8);
    // SAFETY: the (masked) store writes only the first `n` qwords, words
    // `start..start + n` of `dst`.
    unsafe {
        if n == 8 {
            _mm512_storeu_si512(dst.as_mut_ptr().add(start).cast(), x);
        } else {
            _mm512_mask_storeu_epi64(dst.as_mut_ptr().add(start).cast(), lanes(n), x);
        }
    }
}

/// The row split of 64 rows (`rows.len() == 64`, one length each): row
/// `k` bit `j` = `src` bit `64j + k`, 0 past `src`'s end, for every bit
/// of every row.
///
/// # Safety
/// The CPU has the features [`is_available`] checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) unsafe fn split64(src: &[u64], rows: &mut [&mut [u64]]) {
    debug_assert_eq!(rows.len(), 64);
    let len = rows.first().map_or(0, |r| r.len());
    // The transposed blocks of one group of 8: `staged[t]` is block `t`,
    // its word `k` row `k`'s word of that block.
    let mut staged = Line([[0u64; 64]; 8]);
    for group in (0..len).step_by(8) {
        let blocks = (len - group).min(8);
        for (t, stage) in staged.0.iter_mut().enumerate().take(blocks) {
            let start = (group + t) * 64;
            // SAFETY: `load_words` reads within `src`; `stage` is 64 words
            // (8 stores of 8); the features are the caller's guarantee.
            unsafe {
                let a = core::array::from_fn(|r| load_words(src, start + 8 * r));
                for (r, x) in transpose_block(a).into_iter().enumerate() {
                    _mm512_store_si512(stage.as_mut_ptr().add(8 * r).cast(), x);
                }
            }
        }
        for r in 0..8 {
            // SAFETY: each `staged[t]` has 64 words, so words `8r..8r + 8`
            // are within it; `store_words` writes within each row (whose
            // length is `len > group`).
            unsafe {
                let z = core::array::from_fn(|t| _mm512_load_si512(staged.0[t].as_ptr().add(8 * r).cast()));
                for (i, x) in qword_transpose(z).into_iter().enumerate() {
                    store_words(rows[8 * r + i], group, x);
                }
            }
        }
    }
}

/// The row join of 64 rows (`rows.len() == 64`, one length each): `dst`
/// bit `p` = row `p % 64` bit `p / 64`, 0 past the rows' end, for every
/// bit of `dst`.
///
/// # Safety
/// The CPU has the features [`is_available`] checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) unsafe fn join64(rows: &[&[u64]], dst: &mut [u64]) {
    debug_assert_eq!(rows.len(), 64);
    let len = rows.first().map_or(0, |r| r.len()).min(dst.len().div_ceil(64));
    let mut staged = Line([[0u64; 64]; 8]);
    for group in (0..len).step_by(8) {
        let blocks = (len - group).min(8);
        for r in 0..8 {
            // SAFETY: `load_words` reads within each row; `staged[t]` has 64
            // words, so words `8r..8r + 8` are within it.
            unsafe {
                let z = core::array::from_fn(|i| load_words(rows[8 * r + i], group));
                for (t, x) in qword_transpose(z).into_iter().enumerate() {
                    _mm512_store_si512(staged.0[t].as_mut_ptr().add(8 * r).cast(), x);
                }
            }
        }
        for (t, stage) in staged.0.iter().enumerate().take(blocks) {
            let start = (group + t) * 64;
            // SAFETY: `stage` has 64 words; `store_words` writes within
            // `dst`, from `start + 8r` while that is below its length.
            unsafe {
                let a = core::array::from_fn(|r| _mm512_load_si512(stage.as_ptr().add(8 * r).cast()));
                for (r, x) in transpose_block(a).into_iter().enumerate() {
                    if start + 8 * r < dst.len() {
                        store_words(dst, start + 8 * r, x);
                    }
                }
            }
        }
    }
    let done = (len * 64).min(dst.len());
    dst[done..].fill(0);
}

/// The row split of 8 rows (`rows.len() == 8`, one length each): row `k`
/// bit `j` = `src` bit `8j + k`, 0 past `src`'s end, for every bit of
/// every row.
///
/// # Safety
/// The CPU has the features [`is_available`] checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) unsafe fn split8(src: &[u64], rows: &mut [&mut [u64]]) {
    debug_assert_eq!(rows.len(), 8);
    let len = rows.first().map_or(0, |r| r.len());
    // SAFETY: loads of the 64-byte tables; register-only intrinsics of the
    // features the caller guarantees.
    let (reverse, spread, gf) = unsafe {
        (
            _mm512_load_si512(QWORD_REVERSED.0.as_ptr().cast()),
            _mm512_load_si512(BYTE_TRANSPOSE.0.as_ptr().cast()),
            _mm512_set1_epi64(GF_TRANSPOSE),
        )
    };
    for group in (0..len).step_by(8) {
        // SAFETY: `load_words` reads within `src`, `store_words` within
        // each row (of length `len > group`); the features are the
        // caller's guarantee.
        unsafe {
            // Register `t`: row `k`'s word `group + t` in qword `k`.
            let w = core::array::from_fn(|t| {
                let z = load_words(src, (group + t) * 8);
                let bits = _mm512_gf2p8affine_epi64_epi8::<0>(gf, _mm512_permutexvar_epi8(reverse, z));
                _mm512_permutexvar_epi8(spread, bits)
            });
            for (k, x) in qword_transpose(w).into_iter().enumerate() {
                store_words(rows[k], group, x);
            }
        }
    }
}

/// The row join of 8 rows (`rows.len() == 8`, one length each): `dst` bit
/// `p` = row `p % 8` bit `p / 8`, 0 past the rows' end, for every bit of
/// `dst`.
///
/// # Safety
/// The CPU has the features [`is_available`] checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) unsafe fn join8(rows: &[&[u64]], dst: &mut [u64]) {
    debug_assert_eq!(rows.len(), 8);
    let len = rows.first().map_or(0, |r| r.len()).min(dst.len().div_ceil(8));
    // SAFETY: as in `split8`.
    let (gather, gf) =
        unsafe { (_mm512_load_si512(BYTE_TRANSPOSE_REVERSED.0.as_ptr().cast()), _mm512_set1_epi64(GF_TRANSPOSE)) };
    for group in (0..len).step_by(8) {
        // SAFETY: `load_words` reads within each row, `store_words` within
        // `dst` (from a start below its length); the features are the
        // caller's guarantee.
        unsafe {
            let z = core::array::from_fn(|k| load_words(rows[k], group));
            for (t, y) in qword_transpose(z).into_iter().enumerate() {
                let start = (group + t) * 8;
                if start >= dst.len() {
                    break;
                }
                // Qword `k` of `y` is row `k`'s word `group + t`: its bytes
                // to the qwords of their chunks (and reversed), then each
                // qword transposed back into chunk-major bytes.
                let x = _mm512_gf2p8affine_epi64_epi8::<0>(gf, _mm512_permutexvar_epi8(gather, y));
                store_words(dst, start, x);
            }
        }
    }
    let done = (len * 8).min(dst.len());
    dst[done..].fill(0);
}
