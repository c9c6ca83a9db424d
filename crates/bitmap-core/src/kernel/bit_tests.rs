//! The bit-move kernels (gather, scatter, deposit, extract, periodic fill,
//! shifted AND, transpose) of every kernel tested (every available one, or
//! those `BITMAP_CORE_TEST_KERNELS` names, as in `tests.rs`) against bit-by-bit
//! references, over every length up to a few words and beyond, every word
//! alignment of the inputs, and strides, widths and offsets on both sides
//! of the word size.

use super::bits::{BitMoves, Soft};
use super::tests::{XorShift, placed, tested_kernels};
use super::*;

fn get(words: &[u64], i: usize) -> bool {
    words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

fn put(words: &mut [u64], i: usize, bit: bool) {
    if bit {
        words[i / 64] |= 1 << (i % 64);
    } else {
        words[i / 64] &= !(1 << (i % 64));
    }
}

fn lengths() -> Vec<usize> {
    if cfg!(miri) { vec![0, 1, 2, 5, 9] } else { (0..=20).chain([31, 64, 65, 130]).collect() }
}

const ALIGNMENTS: &[usize] = if cfg!(miri) { &[0, 1] } else { &[0, 1, 2, 3] };

fn strides() -> Vec<usize> {
    if cfg!(miri) {
        vec![1, 3, 8, 64, 100]
    } else {
        vec![1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 24, 32, 40, 48, 63, 64, 65, 100, 128, 200]
    }
}

/// The expected result of a bit-move test: the bit-by-bit `reference`, or
/// under Miri what the safe [`Soft`] moves of `bits/` compute.
///
/// Under Miri the references were nearly all of these tests' time (with
/// no kernel tested, `gather_and_matches_reference` took 138 s of its
/// 140 s, `deposit_and_extract_match_reference` 31 of 34 s), and Miri is
/// there for the `unsafe` code: BMI2's and AVX2's moves, in the AVX2 job.
/// The `Soft` moves still cross-check those results there at word cost;
/// the native runs check `Soft` against these references wherever BMI2 is
/// missing or slow (on aarch64 under qemu in CI, every kernel uses it). Not
/// the scalar kernel, as in `tests.rs`: every kernel's table, the scalar
/// one's too, takes the same `*_best` moves, BMI2's where the CPU has it.
fn reference_or_soft<T>(reference: impl FnOnce() -> T, soft: impl FnOnce() -> T) -> T {
    if cfg!(miri) { soft() } else { reference() }
}

fn random(rng: &mut XorShift, n: usize, density: usize) -> Vec<u64> {
    // Dense inputs matter most: a gather's AND is 0 on sparse ones.
    rng.words(n, [1, 3, 4, 3, 1, 2][density % 6] as u32)
}

#[test]
fn soft_and_hardware_compress_expand_agree_with_the_definition() {
    let mut rng = XorShift(0x1234_5678_9ABC_DEF1);
    let hardware = {
        #[cfg(target_arch = "x86_64")]
        {
            x86_64::bmi2::moves()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None::<Soft>
        }
    };
    let rounds = if cfg!(miri) { 20 } else { 5000 };
    for round in 0..rounds {
        let x = rng.next();
        let mask = match round % 4 {
            0 => rng.next(),
            1 => rng.next() & rng.next(),
            2 => rng.next() | rng.next(),
            _ => [0, u64::MAX, 1, 1 << 63, 0x5555_5555_5555_5555][round / 4 % 5],
        };
        let (mut compressed, mut k) = (0u64, 0);
        let mut expanded = 0u64;
        for b in 0..64 {
            if mask >> b & 1 == 1 {
                compressed |= (x >> b & 1) << k;
                expanded |= (x >> k & 1) << b;
                k += 1;
            }
        }
        assert_eq!(Soft.compress(x, mask), compressed, "compress {x:#x} {mask:#x}");
        assert_eq!(Soft.expand(x, mask), expanded, "expand {x:#x} {mask:#x}");
        if let Some(hw) = hardware {
            assert_eq!(hw.compress(x, mask), compressed);
            assert_eq!(hw.expand(x, mask), expanded);
        }
    }
}

#[test]
fn gather_and_matches_reference() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for n in lengths() {
        for stride in strides() {
            let widths = [1, 2, 3, stride / 2, stride, stride + 1, 64, 65];
            for (case, &width) in widths.iter().enumerate().filter(|&(_, &w)| w >= 1) {
                let offset = [0, 1, stride - 1, 70][case % 4];
                let src = random(&mut rng, n, case + n);
                let out_words = (n * 64 / stride).div_ceil(64) + case % 2;
                let expected = reference_or_soft(
                    || {
                        let mut expected = vec![0u64; out_words];
                        for j in 0..out_words * 64 {
                            let start = j * stride + offset;
                            put(&mut expected, j, (start..start + width).all(|i| get(&src, i)));
                        }
                        expected
                    },
                    || {
                        let mut expected = vec![0u64; out_words];
                        bits::gather_and(Soft, &src, stride, offset, width, &mut expected);
                        expected
                    },
                );
                for kernel in tested_kernels() {
                    for &align in ALIGNMENTS {
                        let buf = placed(&src, align);
                        let mut dst = vec![!0u64; out_words];
                        kernel.gather_and(&buf[align..], stride, offset, width, &mut dst);
                        assert_eq!(dst, expected, "{kernel} n={n} stride={stride} offset={offset} width={width}");
                    }
                }
            }
        }
    }
}

#[test]
fn scatter_or_matches_reference() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    for n in lengths() {
        for stride in strides() {
            for (case, offset) in [0, 1, stride - 1, 70].into_iter().enumerate() {
                let src = random(&mut rng, n.div_ceil(stride.min(8)) + 1, case + 1);
                let base = random(&mut rng, n, case + 2);
                let expected = reference_or_soft(
                    || {
                        let mut expected = base.clone();
                        for j in 0..src.len() * 64 {
                            let p = j * stride + offset;
                            if p < n * 64 && get(&src, j) {
                                put(&mut expected, p, true);
                            }
                        }
                        expected
                    },
                    || {
                        let mut expected = base.clone();
                        bits::scatter_or(Soft, &src, stride, offset, &mut expected);
                        expected
                    },
                );
                for kernel in tested_kernels() {
                    for &align in ALIGNMENTS {
                        let buf = placed(&src, align);
                        let mut dst = base.clone();
                        kernel.scatter_or(&buf[align..], stride, offset, &mut dst);
                        assert_eq!(dst, expected, "{kernel} n={n} stride={stride} offset={offset}");
                    }
                }
            }
        }
    }
}

#[test]
fn deposit_and_extract_match_reference() {
    let mut rng = XorShift(0x0123_4567_89AB_CDEF);
    for n in lengths() {
        // Under Miri two of the run-shaped cases, to keep its time.
        for case in 0..if cfg!(miri) { 8 } else { 12 } {
            // Cases 6.. are runs of empty, whole and mixed words (a prefix
            // plan's masks), which take their own paths.
            let mask = if case < 6 {
                random(&mut rng, n, case)
            } else {
                let mut words = Vec::with_capacity(n);
                while words.len() < n {
                    let run = (rng.next() % 5 + 1) as usize;
                    let word = [0, u64::MAX, rng.next()][(rng.next() % 3) as usize];
                    words.extend(core::iter::repeat_n(word, run.min(n - words.len())));
                }
                words
            };
            let case = case % 6;
            let src = random(&mut rng, n + 1, case + 2);
            let src_start = [0, 1, 63, 64, 65, 100][case];
            let ones = mask.iter().map(|w| w.count_ones() as usize).sum::<usize>();
            // Extract, after `dst_start` kept bits.
            let dst_start = [0, 3, 64, 70, 1, 127][case];
            let out_words = (dst_start + ones).div_ceil(64) + case % 2;
            let base = random(&mut rng, out_words, 1);
            let (deposited, extracted) = reference_or_soft(
                || {
                    let positions: Vec<usize> = (0..n * 64).filter(|&i| get(&mask, i)).collect();
                    // Deposit.
                    let mut deposited = vec![0u64; n];
                    for (k, &p) in positions.iter().enumerate() {
                        put(&mut deposited, p, get(&src, src_start + k));
                    }
                    // Bits below `dst_start` and words past the last one
                    // written are kept; the run is written, the rest of its
                    // last word cleared.
                    let mut extracted = base.clone();
                    for (k, &p) in positions.iter().enumerate() {
                        put(&mut extracted, dst_start + k, get(&src, p));
                    }
                    let end = dst_start + positions.len();
                    for i in end..end.next_multiple_of(64).min(out_words * 64) {
                        put(&mut extracted, i, false);
                    }
                    (deposited, extracted)
                },
                || {
                    let mut deposited = vec![0u64; n];
                    bits::deposit(Soft, &src, src_start, &mask, &mut deposited);
                    let mut extracted = base.clone();
                    bits::extract(Soft, &src[..n], &mask, &mut extracted, dst_start);
                    (deposited, extracted)
                },
            );
            for kernel in tested_kernels() {
                for &align in ALIGNMENTS {
                    let (sbuf, mbuf) = (placed(&src, align), placed(&mask, (align + 1) % 4));
                    let (s, m) = (&sbuf[align..], &mbuf[(align + 1) % 4..]);
                    let mut dst = vec![!0u64; n];
                    assert_eq!(kernel.deposit(s, src_start, m, &mut dst), ones);
                    assert_eq!(dst, deposited, "{kernel} deposit n={n} case={case}");
                    let mut dst = base.clone();
                    assert_eq!(kernel.extract(&s[..n], m, &mut dst, dst_start), ones);
                    assert_eq!(dst, extracted, "{kernel} extract n={n} case={case}");
                }
            }
        }
    }
}

#[test]
fn fill_periodic_matches_reference() {
    let mut rng = XorShift(0x0F0F_1234_5555_AAAA);
    // Under Miri a period within a word and one across words: every
    // kernel's table points at the safe `bits::fill_periodic`, so Miri
    // checks the call into the table's `#[target_feature]` function, not
    // the loop (which the native run checks over every period here).
    let periods: Vec<usize> =
        if cfg!(miri) { vec![5, 100] } else { vec![1, 2, 3, 5, 8, 13, 20, 32, 63, 64, 65, 72, 100, 128, 200] };
    for n in lengths() {
        for &period in &periods {
            for case in 0..4 {
                let pattern = random(&mut rng, period.div_ceil(64) + case % 2, case + 4);
                let base = random(&mut rng, n, 2);
                let (start, end) = [(0, n * 64), (3, n * 64 / 2 + 7), (65, n * 64 + 9), (n * 32, n * 32)][case];
                let mut expected = base.clone();
                for p in start..end.min(n * 64) {
                    if get(&pattern, (p - start) % period) {
                        put(&mut expected, p, true);
                    }
                }
                for kernel in tested_kernels() {
                    let mut dst = base.clone();
                    kernel.fill_periodic(&mut dst, start, end, &pattern, period);
                    assert_eq!(dst, expected, "{kernel} n={n} period={period} {start}..{end}");
                }
            }
        }
    }
}

#[test]
fn and_shifted_matches_reference() {
    let mut rng = XorShift(0xDEAD_BEEF_CAFE_F00D);
    // Under Miri, within a word and across one: as `fill_periodic`, the
    // tables point at the safe `bits::and_shifted`.
    let shifts = if cfg!(miri) { vec![1, 65] } else { vec![1, 2, 3, 7, 8, 31, 63, 64, 65, 100, 128, 129, 500] };
    for n in lengths() {
        for &shift in &shifts {
            let words = random(&mut rng, n, shift);
            let mut expected = vec![0u64; n];
            for i in 0..n * 64 {
                put(&mut expected, i, get(&words, i) && (i < shift || get(&words, i - shift)));
            }
            for kernel in tested_kernels() {
                let mut got = words.clone();
                kernel.and_shifted(&mut got, shift);
                assert_eq!(got, expected, "{kernel} n={n} shift={shift}");
            }
        }
    }
}

#[test]
fn transpose64_matches_reference() {
    let mut rng = XorShift(0xABCD_EF01_2345_6789);
    // Under Miri one block and a tail: the tables point at the safe
    // `bits::transpose64` (AVX-512 too: it timed slower there).
    let sizes = if cfg!(miri) { vec![70] } else { vec![0, 1, 63, 64, 65, 128, 200] };
    for n in sizes {
        let words = random(&mut rng, n, 4);
        let mut expected = words.clone();
        for block in 0..n / 64 {
            for r in 0..64 {
                for c in 0..64 {
                    put(&mut expected, (block * 64 + r) * 64 + c, get(&words, (block * 64 + c) * 64 + r));
                }
            }
        }
        for kernel in tested_kernels() {
            let mut got = words.clone();
            kernel.transpose64(&mut got);
            assert_eq!(got, expected, "{kernel} n={n}");
        }
    }
}

#[test]
fn split_rows_and_join_rows_match_reference() {
    let mut rng = XorShift(0x5EED_0F0F_1234_8765);
    // Under Miri (where the GFNI paths never run: see `x86_64/gfni.rs`),
    // 3 and 8 rows of 2 words, which take the kernel's gather and scatter
    // (BMI2's `pext`/`pdep` in the AVX2 job). Not 64 rows: there every
    // kernel but GFNI's takes the safe 64×64 transposes of `bits/rows.rs`,
    // which `transpose64_matches_reference` already calls through the
    // table. (With 64 rows too, the test took 130–140 s under Miri; with
    // 3 and 8, 10 s.)
    let (counts, row_words): (Vec<usize>, Vec<usize>) =
        if cfg!(miri) { (vec![3, 8], vec![2]) } else { ((1..=70).collect(), vec![0, 1, 2, 3, 7, 8, 9, 17]) };
    for &n in &counts {
        for &len in &row_words {
            let exact = n * len;
            for (variant, src_len) in [exact, exact.saturating_sub(3), exact + 2].into_iter().enumerate() {
                let src = random(&mut rng, src_len, variant + n);
                // Row `k` bit `j` = flat bit `j·n + k`, 0 past the source.
                let mut expected = vec![vec![0u64; len]; n];
                for (k, row) in expected.iter_mut().enumerate() {
                    for j in 0..len * 64 {
                        put(row, j, get(&src, j * n + k));
                    }
                }
                // The join into `dst_len` words: flat bit `p` = row `p % n`
                // bit `p / n`, 0 past the rows.
                let dst_len = [exact, exact.saturating_sub(1), exact + 2][variant];
                let mut joined = vec![0u64; dst_len];
                for p in 0..dst_len * 64 {
                    put(&mut joined, p, get(&expected[p % n], p / n));
                }
                for kernel in tested_kernels() {
                    let mut bufs = vec![vec![!0u64; len]; n];
                    let mut rows: Vec<&mut [u64]> = bufs.iter_mut().map(|r| &mut r[..]).collect();
                    kernel.split_rows(&src, &mut rows);
                    assert_eq!(bufs, expected, "{kernel} split n={n} len={len} src={src_len}");
                    let rows: Vec<&[u64]> = expected.iter().map(|r| &r[..]).collect();
                    let mut dst = vec![!0u64; dst_len];
                    kernel.join_rows(&rows, &mut dst);
                    assert_eq!(dst, joined, "{kernel} join n={n} len={len} dst={dst_len}");
                }
            }
        }
    }
    // No rows: a join is all zeros.
    for kernel in tested_kernels() {
        let mut dst = [!0u64; 3];
        kernel.join_rows(&[], &mut dst);
        assert_eq!(dst, [0; 3], "{kernel}");
    }
}

#[test]
fn split_rows_and_join_rows_reject_ragged_rows() {
    crate::test_support::cheap_panic_hook_under_miri();
    assert!(std::panic::catch_unwind(|| split_rows(&[1], &mut [&mut [0u64; 2], &mut [0u64; 1]])).is_err());
    assert!(std::panic::catch_unwind(|| join_rows(&[&[1u64, 2], &[3u64]], &mut [0u64; 2])).is_err());
}

#[test]
fn bit_moves_reject_zero_strides_and_short_patterns() {
    crate::test_support::cheap_panic_hook_under_miri();
    let mut dst = [0u64; 2];
    assert!(std::panic::catch_unwind(|| gather_and(&[1], 0, 0, 1, &mut [0u64; 2])).is_err());
    assert!(std::panic::catch_unwind(|| gather_and(&[1], 1, 0, 0, &mut [0u64; 2])).is_err());
    assert!(std::panic::catch_unwind(|| scatter_or(&[1], 0, 0, &mut [0u64; 2])).is_err());
    assert!(std::panic::catch_unwind(|| fill_periodic(&mut [0u64; 2], 0, 10, &[1], 65)).is_err());
    assert!(std::panic::catch_unwind(|| fill_periodic(&mut [0u64; 2], 0, 10, &[1], 0)).is_err());
    fill_periodic(&mut dst, 0, 128, &[1], 64);
    assert_eq!(dst, [1, 1]);
}
