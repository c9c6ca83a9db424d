//! Every available kernel against a naive reference, over every length up to
//! a few Harley–Seal blocks and every word alignment, in the manner of
//! memchr's `src/tests/`.
//!
//! The reference here is written independently of `scalar.rs` (bit by bit
//! where that is the obvious definition), so the scalar kernel is tested too.

use core::mem::MaybeUninit;

use super::*;

/// Lengths in words: every length through three 16-vector AVX2 blocks
/// (3 * 64 words) plus a tail, then a few larger ones.
///
/// Under Miri, which runs each operation thousands of times slower and
/// checks memory accesses rather than results (those are checked over
/// every length here natively), one length of each loop shape of the
/// kernels it runs: the 4-word vectors of AVX2 and portable (`w`), with
/// blocks of 4 vectors (16 words) and Harley–Seal blocks of 16 (64 words),
/// and AVX-512's 8-word vectors with blocks of 4 (32 words) and a masked
/// tail of 1 to 7 words:
///
/// | words | 4-word kernels | AVX-512 |
/// |---|---|---|
/// | 0 | no loop runs | no loop runs |
/// | 1 | the word-by-word tail alone | a masked tail alone |
/// | 5 | a vector, a one-word tail | a masked tail of 5 |
/// | 17 | a 4-vector block, a one-word tail | 2 vectors, a masked tail |
/// | 67 | a Harley–Seal block, 4-vector blocks, a 3-word tail (the longest) | 2 blocks, a masked tail of 3 |
///
/// The list was `[0, 1, 3, 4, 5, 8, 9, 17, 33, 64, 67]` (211 words a
/// test input, against 90): the lengths dropped repeat these shapes with
/// other counts of iterations (3 and 9: other tails; 4, 8 and 64: a
/// loop with no tail after it, as 0 is for every loop; 33: a loop of two
/// blocks, as 67 is).
pub(crate) fn lengths() -> Vec<usize> {
    if cfg!(miri) { vec![0, 1, 5, 17, 67] } else { (0..=200).chain([255, 256, 257, 1000, 4097]).collect() }
}

/// Word offsets into a larger buffer, so each kernel sees every alignment of
/// its 32-byte (AVX2) and 16-byte (NEON) vectors, and half of those of the
/// 64-byte AVX-512 ones (every kernel's loads are unaligned ones, so the
/// offset changes speed, not results; the `bitmap_ops` fuzz target covers
/// all eight). Under Miri, which checks memory accesses rather than
/// results, an aligned and a misaligned one.
pub(crate) const OFFSETS: &[usize] = if cfg!(miri) { &[0, 1] } else { &[0, 1, 2, 3] };

/// The densities of [`XorShift::words`] to test: all of them, or under Miri
/// a sparse and a uniform one.
const DENSITIES: &[u32] = if cfg!(miri) { &[2, 4] } else { &[0, 1, 2, 3, 4] };

/// A deterministic xorshift generator: the tests need varied bits, not
/// statistical quality, and no dependency.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Words of several densities, chosen by `seed`: empty, full, sparse,
    /// dense and uniform, so that early exits and carries are all exercised.
    pub(crate) fn words(&mut self, n: usize, density: u32) -> Vec<u64> {
        (0..n)
            .map(|_| match density % 5 {
                0 => 0,
                1 => u64::MAX,
                2 => self.next() & self.next() & self.next(),
                3 => self.next() | self.next() | self.next(),
                _ => self.next(),
            })
            .collect()
    }
}

/// The environment variable that restricts the kernels these tests check
/// (comma-separated names; all available ones if unset). For Miri jobs that
/// add a kernel: the AVX-512 build also makes the AVX2 and portable kernels
/// available, which another job already checks.
const TEST_KERNELS_VAR: &str = "BITMAP_CORE_TEST_KERNELS";

/// The kernels the tests below check: every kernel this CPU can run, or
/// those [`TEST_KERNELS_VAR`] names. Naming one that is unknown or
/// unavailable here fails, so a test job cannot silently check nothing.
pub(crate) fn tested_kernels() -> Vec<Kernel> {
    let Ok(names) = std::env::var(TEST_KERNELS_VAR) else { return Kernel::available() };
    names
        .split(',')
        .filter(|name| !name.trim().is_empty())
        .map(|name| {
            name.parse::<KernelKind>()
                .and_then(Kernel::new)
                .unwrap_or_else(|error| panic!("{TEST_KERNELS_VAR}={names:?}: {error}"))
        })
        .collect()
}

/// The expected result of a kernel test: the bit-by-bit `reference`, or
/// under Miri what the scalar kernel computes (`scalar` is given it).
///
/// Under Miri the references were most of each test's time (with no
/// kernel tested at all, `class_counts_match_reference` took 102 s
/// of its 129 s), and Miri is there to check memory accesses. The scalar
/// kernel has no `unsafe` code, and the native run checks its results
/// against these references over every length; so under Miri it still
/// cross-checks each kernel's results, at word rather than bit cost.
pub(crate) fn reference_or_scalar<T>(reference: impl FnOnce() -> T, scalar: impl FnOnce(Kernel) -> T) -> T {
    if cfg!(miri) { scalar(Kernel::scalar()) } else { reference() }
}

fn bits(w: u64) -> impl Iterator<Item = bool> {
    (0..64).map(move |b| w >> b & 1 == 1)
}

fn naive_popcount(words: &[u64]) -> u64 {
    words.iter().flat_map(|&w| bits(w)).filter(|&b| b).count() as u64
}

fn naive_binary(a: &[u64], b: &[u64], op: fn(bool, bool) -> bool) -> Vec<u64> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| bits(x).zip(bits(y)).enumerate().fold(0, |w, (i, (p, q))| w | (u64::from(op(p, q)) << i)))
        .collect()
}

/// A named bitwise operation on single bits, the reference's definition.
type BitOp = (&'static str, fn(bool, bool) -> bool);

const OPS: [BitOp; 4] =
    [("and", |p, q| p & q), ("or", |p, q| p | q), ("xor", |p, q| p ^ q), ("and_not", |p, q| p & !q)];

/// `kernel`'s in-place form of the operation of [`OPS`] named `name`.
fn assign(kernel: Kernel, name: &str, dst: &mut [u64], src: &[u64]) {
    match name {
        "and" => kernel.and_assign(dst, src),
        "or" => kernel.or_assign(dst, src),
        "xor" => kernel.xor_assign(dst, src),
        _ => kernel.and_not_assign(dst, src),
    }
}

/// Copies `words` into a buffer at word offset `offset` and returns the
/// buffer; `&buf[offset..]` is then misaligned by `offset` words.
pub(crate) fn placed(words: &[u64], offset: usize) -> Vec<u64> {
    let mut buf = vec![0xDEAD_BEEF_u64; offset];
    buf.extend_from_slice(words);
    buf
}

#[test]
fn every_kernel_is_listed_and_names_round_trip() {
    let available = Kernel::available();
    assert!(available.contains(&Kernel::scalar()));
    assert!(available.contains(&Kernel::portable()));
    assert!(available.contains(&Kernel::best()));
    for kind in KernelKind::ALL {
        assert_eq!(kind.name().parse::<KernelKind>(), Ok(kind));
        assert_eq!(kind.is_available(), available.iter().any(|k| k.kind() == kind));
    }
    #[cfg(target_arch = "x86_64")]
    assert_eq!(KernelKind::Avx2.is_available(), std::is_x86_feature_detected!("avx2"));
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        KernelKind::Avx512.is_available(),
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512vpopcntdq")
    );
    #[cfg(target_arch = "aarch64")]
    assert!(KernelKind::Neon.is_available());
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(Kernel::new(KernelKind::Avx2), Err(KernelError::Unavailable { kind: KernelKind::Avx2 }));
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(Kernel::new(KernelKind::Avx512), Err(KernelError::Unavailable { kind: KernelKind::Avx512 }));
    #[cfg(not(target_arch = "aarch64"))]
    assert_eq!(Kernel::new(KernelKind::Neon), Err(KernelError::Unavailable { kind: KernelKind::Neon }));
    assert!(matches!("avx1024".parse::<KernelKind>(), Err(KernelError::Unknown { .. })));
}

/// Says which kernels the tests here check, and that the AVX-512 kernel was
/// skipped where the CPU lacks it (shown with `--nocapture`): most CPUs do,
/// and a skip should be visible rather than look like a pass.
#[test]
fn reports_the_kernels_tested() {
    let tested: Vec<&str> = tested_kernels().iter().map(|k| k.name()).collect();
    eprintln!("kernels tested: {}", tested.join(", "));
    if cfg!(target_arch = "x86_64") && !KernelKind::Avx512.is_available() {
        eprintln!("skipped: the avx512 kernel (this CPU lacks AVX512F, BW, VL or VPOPCNTDQ)");
    }
    assert!(!tested.is_empty());
}

/// `Kernel::best` picks the AVX-512 kernel where the CPU has it, else AVX2
/// (its table takes the AVX2 functions where those are faster, so it is
/// never the slower choice; see `docs/PERFORMANCE.md`).
#[test]
fn best_prefers_avx512_where_available() {
    if KernelKind::Avx512.is_available() {
        assert_eq!(Kernel::best().kind(), KernelKind::Avx512);
    } else if KernelKind::Avx2.is_available() {
        assert_eq!(Kernel::best().kind(), KernelKind::Avx2);
    }
}

#[test]
fn popcount_matches_reference() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for kernel in tested_kernels() {
        for n in lengths() {
            for &offset in OFFSETS {
                for &density in DENSITIES {
                    let words = rng.words(n, density);
                    let buf = placed(&words, offset);
                    let expected = reference_or_scalar(|| naive_popcount(&words), |scalar| scalar.popcount(&words));
                    assert_eq!(kernel.popcount(&buf[offset..]), expected, "{kernel} n={n} offset={offset}");
                }
            }
        }
    }
}

#[test]
fn fused_counts_and_assignments_match_reference() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    // The bit-by-bit reference is computed once per input and shared by the
    // kernels: under Miri it is most of this test's cost.
    for n in lengths() {
        for &offset in OFFSETS {
            let density = (n + offset) as u32;
            let a = rng.words(n, density);
            let b = rng.words(n, density / 5 + 1);
            let (abuf, bbuf) = (placed(&a, offset), placed(&b, (offset + 1) % 4));
            let (a_view, b_view) = (&abuf[offset..], &bbuf[(offset + 1) % 4..]);
            let expected: Vec<(&str, Vec<u64>, u64)> = OPS
                .iter()
                .map(|&(name, op)| {
                    let words = reference_or_scalar(
                        || naive_binary(&a, &b, op),
                        |scalar| {
                            let mut words = a.clone();
                            assign(scalar, name, &mut words, &b);
                            words
                        },
                    );
                    let count = reference_or_scalar(|| naive_popcount(&words), |scalar| scalar.popcount(&words));
                    (name, words, count)
                })
                .collect();
            let inverted: Vec<u64> = a.iter().map(|&w| !w).collect();
            for kernel in tested_kernels() {
                for (name, expected, count) in &expected {
                    let fused = match *name {
                        "and" => kernel.and_popcount(a_view, b_view),
                        "or" => kernel.or_popcount(a_view, b_view),
                        "xor" => kernel.xor_popcount(a_view, b_view),
                        _ => kernel.and_not_popcount(a_view, b_view),
                    };
                    assert_eq!(fused, *count, "{kernel} {name}_popcount n={n} offset={offset}");

                    let mut dst = abuf.clone();
                    assign(kernel, name, &mut dst[offset..], b_view);
                    assert_eq!(&dst[offset..], &expected[..], "{kernel} {name}_assign n={n} offset={offset}");
                    assert!(dst[..offset].iter().all(|&w| w == 0xDEAD_BEEF), "{kernel} wrote before the slice");

                    // Into uninitialised memory, one word of spare capacity
                    // past the slice to catch a write beyond it: Miri
                    // reports any word of `out` the kernel did not write.
                    let mut out: Vec<u64> = Vec::with_capacity(n + 1);
                    let spare = &mut out.spare_capacity_mut()[..n + 1];
                    spare[n].write(0xDEAD_BEEF);
                    let into = &mut spare[..n];
                    match *name {
                        "and" => kernel.and_uninit(a_view, b_view, into),
                        "or" => kernel.or_uninit(a_view, b_view, into),
                        "xor" => kernel.xor_uninit(a_view, b_view, into),
                        _ => kernel.and_not_uninit(a_view, b_view, into),
                    }
                    // SAFETY: the kernel wrote the first `n` words (what this
                    // test checks) and the line above the last one.
                    unsafe { out.set_len(n + 1) };
                    assert_eq!(&out[..n], &expected[..], "{kernel} {name}_uninit n={n} offset={offset}");
                    assert_eq!(out[n], 0xDEAD_BEEF, "{kernel} {name}_uninit wrote past the slice");
                }
                let mut dst = abuf.clone();
                kernel.not_assign(&mut dst[offset..]);
                assert_eq!(&dst[offset..], &inverted[..], "{kernel} not n={n}");
            }
        }
    }
}

#[test]
fn kernels_never_write_past_the_slice() {
    for kernel in tested_kernels() {
        for n in lengths() {
            let src = vec![u64::MAX; n + 8];
            let mut buf = vec![0u64; n + 8];
            kernel.or_assign(&mut buf[..n], &src[..n]);
            kernel.not_assign(&mut buf[n..n]);
            assert!(buf[n..].iter().all(|&w| w == 0), "{kernel} or_assign n={n}");
            let mut outs = [vec![0u64; n + 8], vec![0u64; n + 8]];
            let [o0, o1] = &mut outs;
            kernel.first_wins(&[&src[..n], &src[..n]], &mut [&mut o0[..n], &mut o1[..n]]);
            assert!(o0[n..].iter().chain(&o1[n..]).all(|&w| w == 0), "{kernel} first_wins n={n}");
            kernel.union_many(&mut buf[..n], &[&src[..n]]);
            assert!(buf[n..].iter().all(|&w| w == 0), "{kernel} union_many n={n}");
            kernel.split_by_tables(&[&src[..n], &src[..n]], &[1, 3], &mut [&mut o0[..n], &mut o1[..n]]);
            assert!(o0[n..].iter().chain(&o1[n..]).all(|&w| w == 0), "{kernel} split_by_tables n={n}");
        }
    }
}

#[test]
fn union_many_matches_reference() {
    let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
    // Under Miri, 3 and 4: the AVX-512 kernel takes the inputs in pairs, so
    // a pair and a single one, and two pairs.
    let input_counts = if cfg!(miri) { vec![0, 1, 3, 4] } else { (0..=9).collect() };
    for kernel in tested_kernels() {
        for n in lengths() {
            for &count in &input_counts {
                let inputs: Vec<Vec<u64>> = (0..count).map(|i| rng.words(n, (i + n) as u32 % 5)).collect();
                let views: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
                let expected: Vec<u64> = (0..n).map(|i| inputs.iter().fold(0, |acc, s| acc | s[i])).collect();
                let mut dst = rng.words(n, 4);
                kernel.union_many(&mut dst, &views);
                assert_eq!(dst, expected, "{kernel} union of {count} n={n}");
            }
        }
    }
}

/// The first-wins split, bit by bit: each set bit goes to the first input
/// that has it.
fn naive_first_wins(inputs: &[Vec<u64>], n: usize) -> Vec<Vec<u64>> {
    let mut outputs = vec![vec![0u64; n]; inputs.len()];
    for bit in 0..n * 64 {
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if let Some(first) = inputs.iter().position(|input| input[word] & mask != 0) {
            outputs[first][word] |= mask;
        }
    }
    outputs
}

/// [`naive_first_wins`], or under Miri the scalar kernel's split (see
/// [`reference_or_scalar`]).
fn expected_first_wins(inputs: &[Vec<u64>], n: usize) -> Vec<Vec<u64>> {
    reference_or_scalar(
        || naive_first_wins(inputs, n),
        |scalar| {
            let views: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
            let mut outputs = vec![vec![0u64; n]; inputs.len()];
            let mut output_views: Vec<&mut [u64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
            scalar.first_wins(&views, &mut output_views);
            outputs
        },
    )
}

/// The length in words of every first-wins case under Miri. Each kernel's
/// vector loop runs and then its tail: AVX-512 two 8-word steps and a
/// masked step of one word, whose other 7 lanes lie past the end of each
/// input's and output's allocation (Miri reports any access to them); AVX2
/// and portable two steps of two 4-word vectors and a one-word tail; NEON
/// four steps of two 2-word vectors and the same tail. A shorter length
/// only skips the loop and a longer one repeats it (or the tail's loop
/// over words): no other code runs.
const MIRI_FIRST_WINS_WORDS: usize = 17;

/// The (input count, length) cases of a first-wins test: each count of
/// `counts` at every length of [`lengths`] up to 300, or under Miri each
/// count of `miri_counts` at [`MIRI_FIRST_WINS_WORDS`].
fn first_wins_cases(counts: std::ops::RangeInclusive<usize>, miri_counts: &[usize]) -> Vec<(usize, usize)> {
    if cfg!(miri) {
        return miri_counts.iter().map(|&count| (count, MIRI_FIRST_WINS_WORDS)).collect();
    }
    let lengths: Vec<usize> = lengths().into_iter().filter(|&n| n <= 300).collect();
    lengths.iter().flat_map(|&n| counts.clone().map(move |count| (count, n))).collect()
}

#[test]
fn first_wins_matches_reference() {
    let mut rng = XorShift(0xA076_1D64_78BD_642F);
    // Under Miri, no inputs, and 5 (a group of 4, then a group of 1) for the
    // initialised outputs' entry point; `first_wins_uninit_writes_every_word`
    // covers the rest of the step's shapes.
    for kernel in tested_kernels() {
        for (count, n) in first_wins_cases(0..=9, &[0, 5]) {
            let inputs: Vec<Vec<u64>> = (0..count).map(|i| rng.words(n, (i * 3 + n) as u32 % 5)).collect();
            let views: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
            // Outputs start dirty: the kernel must overwrite every word.
            let mut outputs: Vec<Vec<u64>> = (0..count).map(|_| rng.words(n, 4)).collect();
            let mut output_views: Vec<&mut [u64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
            kernel.first_wins(&views, &mut output_views);
            assert_eq!(outputs, expected_first_wins(&inputs, n), "{kernel} {count} inputs n={n}");
        }
    }
}

/// The split into uninitialised outputs (a `Vec`'s spare capacity): every
/// word must be written. Under Miri, reading a word the kernel skipped is
/// reported as undefined behaviour, so this is checked word for word there.
#[test]
fn first_wins_uninit_writes_every_word() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    // Under Miri, every shape of the kernels' one step, which takes the
    // inputs in groups of 4 and a last group of 1 to 4 (its size a
    // constant, one copy of the loop for each): 1, 2, 3 and 4 inputs are a
    // last group of each size, alone; 9 carries `claimed` from a group of
    // 4 to another and on to a last group of 1. AVX-512 pairs the inputs,
    // so these are a single one, a pair, a pair and a single one, two
    // pairs. 6 to 8 inputs would run no other code but the match arm that
    // picks their last group's size: their whole groups are 9's (the same
    // function for a group of 4), their last groups those of 2 to 4.
    for kernel in tested_kernels() {
        for (count, n) in first_wins_cases(1..=9, &[1, 2, 3, 4, 9]) {
            let inputs: Vec<Vec<u64>> = (0..count).map(|i| rng.words(n, (i * 5 + n) as u32 % 5)).collect();
            let views: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
            let mut outputs: Vec<Vec<u64>> = (0..count).map(|_| Vec::with_capacity(n)).collect();
            let mut spares: Vec<&mut [MaybeUninit<u64>]> =
                outputs.iter_mut().map(|output| &mut output.spare_capacity_mut()[..n]).collect();
            kernel.first_wins_uninit(&views, &mut spares);
            for output in &mut outputs {
                // SAFETY: `first_wins_uninit` wrote the first `n` words of
                // the spare capacity (what this test checks: Miri reports
                // any it did not write when they are compared below).
                unsafe { output.set_len(n) };
            }
            assert_eq!(outputs, expected_first_wins(&inputs, n), "{kernel} {count} inputs n={n}");
        }
    }
}

#[test]
fn positions_match_reference() {
    for kernel in tested_kernels() {
        for n in lengths() {
            let zeros = vec![0u64; n];
            let ones = vec![u64::MAX; n];
            assert_eq!(kernel.position_nonzero(&zeros), None, "{kernel} n={n}");
            assert_eq!(kernel.position_not_all_ones(&ones), None, "{kernel} n={n}");
            // Every position, or under Miri a stride through them.
            for at in (0..n).step_by(if cfg!(miri) { 5 } else { 1 }) {
                let mut z = zeros.clone();
                z[at] = 1 << (at % 64);
                // A later non-zero word must not hide the first one.
                z[n - 1] |= 1;
                assert_eq!(kernel.position_nonzero(&z), Some(at), "{kernel} n={n} at={at}");
                let mut o = ones.clone();
                o[at] = !(1 << (at % 64));
                o[n - 1] &= !2;
                assert_eq!(kernel.position_not_all_ones(&o), Some(at), "{kernel} n={n} at={at}");
            }
        }
    }
}

#[test]
fn dispatched_functions_agree_with_the_scalar_kernel() {
    let mut rng = XorShift(0x1234_5678_9ABC_DEF1);
    let scalar = Kernel::scalar();
    for n in lengths() {
        let a = rng.words(n, n as u32);
        let b = rng.words(n, n as u32 + 2);
        assert_eq!(popcount(&a), scalar.popcount(&a));
        assert_eq!(and_popcount(&a, &b), scalar.and_popcount(&a, &b));
        assert_eq!(or_popcount(&a, &b), scalar.or_popcount(&a, &b));
        assert_eq!(xor_popcount(&a, &b), scalar.xor_popcount(&a, &b));
        assert_eq!(and_not_popcount(&a, &b), scalar.and_not_popcount(&a, &b));
        assert_eq!(position_nonzero(&a), scalar.position_nonzero(&a));
        assert_eq!(position_not_all_ones(&a), scalar.position_not_all_ones(&a));
        let (mut x, mut y) = (a.clone(), a.clone());
        xor_assign(&mut x, &b);
        scalar.xor_assign(&mut y, &b);
        assert_eq!(x, y);
        let (mut x, mut y) = (vec![0; n], vec![1; n]);
        and_not_uninit(&a, &b, as_uninit_slice(&mut x));
        scalar.and_not_uninit(&a, &b, as_uninit_slice(&mut y));
        assert_eq!(x, y);
        let (mut o1, mut o2, mut p1, mut p2) = (vec![0; n], vec![0; n], vec![0; n], vec![0; n]);
        first_wins(&[&a, &b], &mut [&mut o1, &mut o2]);
        scalar.first_wins(&[&a, &b], &mut [&mut p1, &mut p2]);
        assert_eq!((o1, o2), (p1, p2));
        let (mut c1, mut c2) = ([0; 4], [0; 4]);
        class_counts(&[&a, &b], &mut c1);
        scalar.class_counts(&[&a, &b], &mut c2);
        assert_eq!(c1, c2);
        let (mut o1, mut o2, mut p1, mut p2) = (vec![0; n], vec![0; n], vec![0; n], vec![0; n]);
        split_by_tables(&[&a, &b], &[0b10, 0b01], &mut [&mut o1, &mut o2]);
        scalar.split_by_tables(&[&a, &b], &[0b10, 0b01], &mut [&mut p1, &mut p2]);
        assert_eq!((o1, o2), (p1, p2));
    }
}

#[test]
#[should_panic(expected = "word slices differ in length: 3 and 4")]
fn mismatched_lengths_panic() {
    crate::test_support::cheap_panic_hook_under_miri();
    Kernel::portable().or_assign(&mut [0; 3], &[0; 4]);
}

/// An initialised slice as an uninitialised one, for the `_uninit` kernels
/// (which only write, so the words stay initialised).
fn as_uninit_slice(words: &mut [u64]) -> &mut [MaybeUninit<u64>] {
    let len = words.len();
    // SAFETY: `MaybeUninit<u64>` has `u64`'s layout; the callers pass the
    // result to kernels that write initialised words only.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<MaybeUninit<u64>>(), len) }
}

#[test]
#[should_panic(expected = "word slices differ in length: 3 and 2")]
fn uninit_ops_need_an_output_of_the_inputs_length() {
    crate::test_support::cheap_panic_hook_under_miri();
    Kernel::portable().and_uninit(&[0; 3], &[0; 3], as_uninit_slice(&mut [0; 2]));
}

#[test]
#[should_panic(expected = "word slices differ in length: 3 and 4")]
fn uninit_ops_need_inputs_of_one_length() {
    crate::test_support::cheap_panic_hook_under_miri();
    or_uninit(&[0; 3], &[0; 4], as_uninit_slice(&mut [0; 3]));
}

#[test]
#[should_panic(expected = "first_wins has 2 inputs but 1 outputs")]
fn first_wins_needs_one_output_per_input() {
    crate::test_support::cheap_panic_hook_under_miri();
    Kernel::scalar().first_wins(&[&[0], &[0]], &mut [&mut [0]]);
}

#[test]
#[should_panic(expected = "word slices differ in length: 2 and 1")]
fn first_wins_needs_equal_lengths() {
    crate::test_support::cheap_panic_hook_under_miri();
    first_wins(&[&[0, 0], &[0]], &mut [&mut [0, 0], &mut [0]]);
}

#[test]
fn unknown_and_unavailable_names_are_errors() {
    let err = "sse9".parse::<KernelKind>().unwrap_err();
    assert!(err.to_string().contains("unknown kernel \"sse9\""), "{err}");
    let unavailable = KernelError::Unavailable { kind: KernelKind::Neon };
    assert!(unavailable.to_string().contains("kernel `neon` is not available"), "{unavailable}");
}

/// Runs this test binary again, as a child process with
/// `BITMAP_CORE_KERNEL=value`, executing only
/// [`child_reports_the_active_kernel`], which checks `expect`. A child is
/// needed because the choice is made once per process (and because setting
/// environment variables in a multi-threaded test process is unsound).
fn run_child(value: &str, expect: &str) {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "kernel::tests::child_reports_the_active_kernel", "--test-threads=1", "--quiet"])
        .env(KERNEL_ENV_VAR, value)
        .env("BITMAP_CORE_TEST_EXPECT", expect)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "child with {KERNEL_ENV_VAR}={value:?} expected {expect:?}");
}

/// Whether this test binary can run itself as a child. Not under user-mode
/// emulation (the aarch64 run under qemu): the child would be started
/// without the emulator. There the kernel choice is still checked by the
/// other tests, only not per process.
fn can_run_self() -> bool {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--list", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn environment_variable_forces_or_rejects_a_kernel() {
    if !can_run_self() {
        eprintln!("skipped: this test binary cannot start itself here (emulated target?)");
        return;
    }
    for kernel in tested_kernels() {
        run_child(kernel.name(), &format!("ok {kernel}"));
        run_child(&kernel.name().to_uppercase(), &format!("ok {kernel}"));
    }
    run_child("", &format!("ok {}", Kernel::best()));
    run_child("auto", &format!("ok {}", Kernel::best()));
    run_child("sse9", "err BITMAP_CORE_KERNEL=\"sse9\": unknown kernel");
    for kind in KernelKind::ALL.into_iter().filter(|k| !k.is_available()) {
        run_child(kind.name(), &format!("err BITMAP_CORE_KERNEL=\"{kind}\": kernel `{kind}` is not available"));
    }
}

/// Does nothing unless run by [`run_child`].
#[test]
fn child_reports_the_active_kernel() {
    let Ok(expect) = std::env::var("BITMAP_CORE_TEST_EXPECT") else { return };
    let got = match Kernel::try_active() {
        Ok(kernel) => format!("ok {kernel}"),
        Err(error) => format!("err {error}"),
    };
    assert!(got.starts_with(&expect), "got {got:?}, expected {expect:?}");
    let words = [u64::MAX; 64];
    let result = std::panic::catch_unwind(|| popcount(&words));
    if expect.starts_with("ok") {
        assert_eq!(result.unwrap(), 64 * 64);
    } else {
        // Told to use a kernel it cannot, the process must not run another.
        assert!(result.is_err(), "a dispatched call must panic on a bad {KERNEL_ENV_VAR}");
    }
}

/// `append_ones` writes exactly the set indices after what `out` held, and
/// (under Miri) reads no word of spare capacity it did not write.
#[test]
fn append_ones_matches_reference() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    // `append_ones` is one loop over words, the same in every kernel's
    // build: under Miri, no word, one, and a few (the 17 and 67 words of
    // `lengths` only ran that loop longer: the test took 23–25 s there
    // with them, 1 s without).
    let lengths = if cfg!(miri) { vec![0, 1, 5] } else { lengths() };
    for n in lengths {
        for &density in DENSITIES {
            let words = rng.words(n, density);
            let expected: Vec<usize> = (0..n * 64).filter(|&i| words[i / 64] >> (i % 64) & 1 == 1).collect();
            let mut out = vec![usize::MAX; 3];
            append_ones(&words, &mut out);
            assert_eq!(&out[..3], [usize::MAX; 3], "n={n} density={density}");
            assert_eq!(&out[3..], &expected[..], "n={n} density={density}");
        }
    }
}
