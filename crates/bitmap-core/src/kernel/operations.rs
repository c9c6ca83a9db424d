//! The word-level operations, each declared once: its signature and
//! documentation, its argument check, the work it does (in words, for the
//! small-input cut-over) and optionally its own cut-over and a first-word
//! shortcut. [`for_each_kernel_op!`] hands the list to a macro that
//! generates one form of every operation: the field of
//! [`KernelFns`](super::table::KernelFns) (`table.rs`), the safe method on
//! [`Kernel`](super::Kernel) (`methods.rs`) and the dispatched free function
//! with its cached function pointer (`dispatch.rs`).

/// `for_each_kernel_op!(callback)` calls `callback! { … }` with every
/// operation, each as
///
/// ```text
/// /// docs
/// fn name(arg: Type, …) -> Return;
/// check: { argument check };
/// words: the work in words;
/// small: its own cut-over constant;   (optional, default `SMALL_WORDS`)
/// first: { shortcut before the call }; (optional)
/// ```
///
/// Paths in the checks resolve where `callback` expands: each such file
/// imports the checks.
macro_rules! for_each_kernel_op {
    ($callback:ident) => {
        $callback! {
            /// The number of set bits in `words`.
            fn popcount(words: &[u64]) -> u64;
            check: {};
            words: words.len();
            small: SMALL_COUNT_WORDS;

            /// `popcount(a & b)`, without materialising `a & b`.
            fn and_popcount(a: &[u64], b: &[u64]) -> u64;
            check: { check_same_len(a.len(), b.len()) };
            words: a.len();
            small: SMALL_COUNT_WORDS;

            /// `popcount(a | b)`, without materialising `a | b`.
            fn or_popcount(a: &[u64], b: &[u64]) -> u64;
            check: { check_same_len(a.len(), b.len()) };
            words: a.len();
            small: SMALL_COUNT_WORDS;

            /// `popcount(a ^ b)` (the Hamming distance), without materialising `a ^ b`.
            fn xor_popcount(a: &[u64], b: &[u64]) -> u64;
            check: { check_same_len(a.len(), b.len()) };
            words: a.len();
            small: SMALL_COUNT_WORDS;

            /// `popcount(a & !b)`, without materialising `a & !b`.
            fn and_not_popcount(a: &[u64], b: &[u64]) -> u64;
            check: { check_same_len(a.len(), b.len()) };
            words: a.len();
            small: SMALL_COUNT_WORDS;

            /// `dst &= src`, word by word.
            fn and_assign(dst: &mut [u64], src: &[u64]);
            check: { check_same_len(dst.len(), src.len()) };
            words: dst.len();

            /// `dst |= src`, word by word.
            fn or_assign(dst: &mut [u64], src: &[u64]);
            check: { check_same_len(dst.len(), src.len()) };
            words: dst.len();

            /// `dst ^= src`, word by word.
            fn xor_assign(dst: &mut [u64], src: &[u64]);
            check: { check_same_len(dst.len(), src.len()) };
            words: dst.len();

            /// `dst &= !src`, word by word.
            fn and_not_assign(dst: &mut [u64], src: &[u64]);
            check: { check_same_len(dst.len(), src.len()) };
            words: dst.len();

            /// `dst = !dst`, word by word (every bit of every word: a bitmap must
            /// clear its tail afterwards).
            fn not_assign(dst: &mut [u64]);
            check: {};
            words: dst.len();

            /// `out = a & b`, word by word.
            ///
            /// Each word of `out` is written once and never read, so `out` may be
            /// uninitialised memory (a `Vec`'s spare capacity): one pass where a
            /// copy of `a` and [`and_assign`] would take two. Panics unless the
            /// three slices have one length.
            ///
            /// ```
            /// use core::mem::MaybeUninit;
            /// use bitmap_core::kernel;
            ///
            /// let mut out = [MaybeUninit::<u64>::uninit(); 2];
            /// kernel::and_uninit(&[0b0110, 7], &[0b1100, 5], &mut out);
            /// // Every word was written: reading them back is fine.
            /// assert_eq!(out.map(|w| unsafe { w.assume_init() }), [0b0100, 5]);
            /// ```
            fn and_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
            check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
            words: a.len();

            /// `out = a | b`, word by word.
            ///
            /// As [`and_uninit`]: `out` may be uninitialised.
            fn or_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
            check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
            words: a.len();

            /// `out = a ^ b`, word by word.
            ///
            /// As [`and_uninit`]: `out` may be uninitialised.
            fn xor_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
            check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
            words: a.len();

            /// `out = a & !b`, word by word.
            ///
            /// As [`and_uninit`]: `out` may be uninitialised.
            fn and_not_uninit(a: &[u64], b: &[u64], out: &mut [MaybeUninit<u64>]);
            check: { check_same_len(a.len(), b.len()); check_same_len(a.len(), out.len()) };
            words: a.len();

            /// `dst = srcs[0] | srcs[1] | …` in one pass over the words; no sources
            /// clears `dst`.
            fn union_many(dst: &mut [u64], srcs: &[&[u64]]);
            check: { check_union(dst, srcs) };
            words: dst.len();

            /// The first-wins split: for each word, in input order,
            /// `outputs[a] = inputs[a] & !claimed; claimed |= inputs[a]`, so every
            /// set input bit goes to the first input that has it and no two outputs
            /// overlap. One pass; each output word is written once, and none is
            /// read, so the outputs may be uninitialised memory (a `Vec`'s spare
            /// capacity): afterwards every word of every output is initialised.
            /// [`first_wins`] is the same over initialised words.
            ///
            /// Panics unless there are as many outputs as inputs, all of one length.
            ///
            /// ```
            /// use core::mem::MaybeUninit;
            /// use bitmap_core::kernel;
            ///
            /// let (a, b) = ([0b0110_u64, 1], [0b1100_u64, 3]);
            /// let mut out_a = [MaybeUninit::<u64>::uninit(); 2];
            /// let mut out_b = [MaybeUninit::<u64>::uninit(); 2];
            /// kernel::first_wins_uninit(&[&a, &b], &mut [&mut out_a, &mut out_b]);
            /// // Every word was written: reading them back is fine.
            /// let written = |out: &[MaybeUninit<u64>]| out.iter().map(|w| unsafe { w.assume_init() }).collect::<Vec<_>>();
            /// assert_eq!(written(&out_a), [0b0110, 1]);
            /// assert_eq!(written(&out_b), [0b1000, 2]);
            /// ```
            fn first_wins_uninit(inputs: &[&[u64]], outputs: &mut [&mut [MaybeUninit<u64>]]);
            check: { check_first_wins(inputs, outputs) };
            words: inputs.len() * inputs.first().map_or(0, |s| s.len());

            /// The class counts of up to [`MAX_CLASS_INPUTS`] inputs, in one pass:
            /// `counts[c]` becomes the number of bit positions whose *class* (the
            /// set of inputs with that bit set, bit `p` for input `p`) is exactly
            /// `c`. `counts[0]` counts the positions no input has, so the counts
            /// add up to 64 × the words per input.
            ///
            /// Panics unless there are at most [`MAX_CLASS_INPUTS`] inputs, all of
            /// one length, and `2^inputs` counts.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let a = [0b0011_u64, u64::MAX];
            /// let b = [0b0101_u64, 0];
            /// let mut counts = [0; 4];
            /// kernel::class_counts(&[&a, &b], &mut counts);
            /// // neither, only `a`, only `b`, both:
            /// assert_eq!(counts, [61, 1 + 64, 1, 1]);
            /// ```
            fn class_counts(inputs: &[&[u64]], counts: &mut [u64]);
            check: { check_class_counts(inputs, counts) };
            words: inputs.first().map_or(0, |s| s.len());

            /// The table-driven split of up to [`MAX_CLASS_INPUTS`] inputs, in one
            /// pass: output `a` keeps the bits of input `a` whose class among the
            /// *other* inputs has its entry set in `tables[a]`. Entry `j` (bit `j`
            /// of the table) is for the bits that, of the other inputs in index
            /// order, exactly those whose bits are set in `j` also have. Each
            /// output word is written once, and none is read, so the outputs may
            /// be uninitialised memory: afterwards every word of every output is
            /// initialised. [`split_by_tables`] is the same over initialised words.
            ///
            /// With one table per class owner this hands every class of bits to
            /// one output (as `first_wins` hands each to the first input that has
            /// it), but any tables are allowed: outputs may overlap.
            ///
            /// Panics unless there are at most [`MAX_CLASS_INPUTS`] inputs, as many
            /// tables and outputs, all of one length, and no table has bits past
            /// its `2^(inputs − 1)` entries.
            ///
            /// ```
            /// use core::mem::MaybeUninit;
            /// use bitmap_core::kernel;
            ///
            /// let a = [0b0011_u64];
            /// let b = [0b0101_u64];
            /// let mut to_a = [MaybeUninit::<u64>::uninit()];
            /// let mut to_b = [MaybeUninit::<u64>::uninit()];
            /// // `a` keeps its bits whatever `b` has (entries 0 and 1); `b` keeps
            /// // only those `a` lacks (entry 0).
            /// kernel::split_by_tables_uninit(&[&a, &b], &[0b11, 0b01], &mut [&mut to_a, &mut to_b]);
            /// // Every word was written: reading them back is fine.
            /// let written = |out: &[MaybeUninit<u64>]| unsafe { out[0].assume_init() };
            /// assert_eq!((written(&to_a), written(&to_b)), (0b0011, 0b0100));
            /// ```
            fn split_by_tables_uninit(inputs: &[&[u64]], tables: &[u8], outputs: &mut [&mut [MaybeUninit<u64>]]);
            check: { check_split_by_tables(inputs, tables, outputs) };
            words: inputs.len() * inputs.first().map_or(0, |s| s.len());

            /// The index of the first non-zero word.
            fn position_nonzero(words: &[u64]) -> Option<usize>;
            check: {};
            words: words.len();
            // Answered by the first word more often than not (a non-empty plan
            // output, a lookup that holds key 0): no call for that.
            first: {
                if words.first().is_some_and(|&w| w != 0) {
                    return Some(0);
                }
            };

            /// The index of the first word that is not all ones.
            fn position_not_all_ones(words: &[u64]) -> Option<usize>;
            check: {};
            words: words.len();
            first: {
                if words.first().is_some_and(|&w| w != u64::MAX) {
                    return Some(0);
                }
            };
            /// Strided gather with an AND over each cell: `dst` bit `j` (every bit
            /// of `dst`) = the AND of the `width` bits of `src` from bit
            /// `j·stride + offset`; bits past `src` read 0. The rank reduction of a
            /// flat layout (`stride = width = ranks`) and the split of one row out
            /// of an interleaved bitmap (`width = 1`).
            ///
            /// Panics if `stride` or `width` is 0.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut pairs = [0u64];
            /// kernel::gather_and(&[0b11_01_11_10_11], 2, 0, 2, &mut pairs); // AND of each bit pair
            /// assert_eq!(pairs, [0b10101]);
            /// let mut odd = [0u64];
            /// kernel::gather_and(&[0b1010_0110], 2, 1, 1, &mut odd); // every other bit, from bit 1
            /// assert_eq!(odd, [0b1101]);
            /// ```
            fn gather_and(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]);
            check: { check_positive("gather_and", stride, width) };
            // The work is the `stride` input words behind each output word, each
            // one compress: the scalar kernel's bit-trick compress costs dozens of
            // instructions where BMI2's `pext` costs one, so a few output words of
            // a wide stride (a fold's per-chunk AND over `G` cells) are already
            // worth the indirect call.
            words: dst.len().saturating_mul(stride);

            /// Strided scatter: `dst` bit `j·stride + offset` |= `src` bit `j`, for
            /// every such position within `dst` (the join of one row into an
            /// interleaved bitmap).
            ///
            /// Panics if `stride` is 0.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut flat = [0b0001u64];
            /// kernel::scatter_or(&[0b11], 2, 1, &mut flat);
            /// assert_eq!(flat, [0b1011]);
            /// ```
            fn scatter_or(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]);
            check: { check_positive("scatter_or", stride, 1) };
            words: dst.len();

            /// PDEP over slices: `dst` gets, at the `i`-th set position of `mask`,
            /// bit `src_start + i` of `src` (0 past its end), and 0 elsewhere.
            /// Returns the number of `src` bits used, `popcount(mask)`.
            ///
            /// Panics unless `mask` and `dst` have one length.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut out = [0u64];
            /// assert_eq!(kernel::deposit(&[0b10], 0, &[0b1010_0000], &mut out), 2);
            /// assert_eq!(out, [0b1000_0000]);
            /// ```
            fn deposit(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize;
            check: { check_same_len(mask.len(), dst.len()) };
            words: dst.len();

            /// PEXT over slices: the bits of `src` at the set positions of `mask`,
            /// in order, written to `dst` from bit `dst_start` to `dst_start +
            /// popcount(mask)`: the bits below `dst_start` are kept, the rest of the
            /// word holding the run's end is cleared, later words are left as they
            /// are, bits past `dst` are dropped. Returns `popcount(mask)`.
            ///
            /// Panics unless `src` and `mask` have one length.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut out = [0b1u64];
            /// assert_eq!(kernel::extract(&[0b1000_0000], &[0b1010_0000], &mut out, 1), 2);
            /// assert_eq!(out, [0b101]);
            /// ```
            fn extract(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize;
            check: { check_same_len(src.len(), mask.len()) };
            words: src.len();

            /// ORs into `dst` bits `start..end` (clamped to `dst`) the repetition of
            /// the first `period` bits of `pattern`: bit `p` gets pattern bit
            /// `(p − start) % period`.
            ///
            /// Panics if `period` is 0 or `pattern` has fewer than `period` bits.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut out = [0u64];
            /// kernel::fill_periodic(&mut out, 2, 12, &[0b011], 3);
            /// assert_eq!(out, [0b1011_0110_1100]);
            /// ```
            fn fill_periodic(dst: &mut [u64], start: usize, end: usize, pattern: &[u64], period: usize);
            check: { check_pattern(pattern, period) };
            words: dst.len();

            /// `words` bit `i` &= bit `i − shift` for every `i`, bits before 0
            /// reading as set: one step of the windowed run test (after steps of
            /// 1, 2, 4, … each set bit marks the end of a run of set bits that
            /// long).
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut words = [0b1110_1101u64];
            /// kernel::and_shifted(&mut words, 1);
            /// assert_eq!(words, [0b1100_1001]);
            /// ```
            fn and_shifted(words: &mut [u64], shift: usize);
            check: {};
            words: words.len();

            /// Transposes each whole block of 64 words as a 64×64 bit matrix, in
            /// place: bit `c` of word `r` of a block trades places with bit `r` of
            /// word `c`. A partial last block is left as it is.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut block = [0u64; 64];
            /// block[3] = 1 << 10;
            /// kernel::transpose64(&mut block);
            /// assert_eq!((block[10], block[3]), (1 << 3, 0));
            /// ```
            fn transpose64(words: &mut [u64]);
            check: {};
            words: words.len();

            /// The row split of a flat, interleaved layout of `n = rows.len()`
            /// rows of one length: `rows[k]` bit `j` = `src` bit `j·n + k` (0 past
            /// `src`'s end), for every bit of every row. 64 rows (8 groups × 8
            /// ranks) are 64×64 bit transposes, 8 rows one bit of every byte;
            /// other counts a strided gather per row.
            ///
            /// Panics unless the rows have one length.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let (mut even, mut odd) = ([0u64], [0u64]);
            /// kernel::split_rows(&[0b1110_0100], &mut [&mut even, &mut odd]);
            /// assert_eq!((even, odd), ([0b1010], [0b1100]));
            /// ```
            fn split_rows(src: &[u64], rows: &mut [&mut [u64]]);
            check: { check_rows("split_rows", rows.iter().map(|r| r.len())) };
            words: rows.len() * rows.first().map_or(0, |r| r.len());

            /// The row join, the inverse of [`split_rows`]: `dst` bit `p` =
            /// `rows[p % n]` bit `p / n` for `n = rows.len()` rows of one length
            /// (0 past their end, and everywhere for no rows), for every bit of
            /// `dst`.
            ///
            /// Panics unless the rows have one length.
            ///
            /// ```
            /// use bitmap_core::kernel;
            ///
            /// let mut flat = [0u64];
            /// kernel::join_rows(&[&[0b1010], &[0b1100]], &mut flat);
            /// assert_eq!(flat, [0b1110_0100]);
            /// ```
            fn join_rows(rows: &[&[u64]], dst: &mut [u64]);
            check: { check_rows("join_rows", rows.iter().map(|r| r.len())) };
            words: dst.len();
        }
    };
}

pub(super) use for_each_kernel_op;
