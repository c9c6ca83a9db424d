//! The bit moves of the hybrid-model layouts, word by word: strided gather
//! with an AND over each cell (rank reduction, row split), strided scatter
//! (row join), deposit and extract (PDEP/PEXT over whole bitmaps), periodic
//! fills (unfold) and the shifted AND of the windowed run test, plus the
//! 64×64 bit-matrix transpose of the 64-row split and join.
//!
//! Each loop is written once, generic over [`BitMoves`] (the per-word
//! compress and expand): [`Soft`] is the portable bit-trick form, and on
//! x86-64 the `bmi2` module supplies `pext`/`pdep`, chosen at run time where
//! they are fast (see `x86_64::bmi2::is_fast`). The `*_best` functions pick
//! between them; every SIMD kernel's table points at those, and the scalar
//! kernel has its own bit-by-bit references in `scalar.rs`.
//!
//! All of it is safe code: every read past a slice's end reads as 0, and
//! every write is to an index the loop bounds by the slice's length.

/// Per-word compress (PEXT: the bits of `x` at the set positions of `mask`,
/// packed to the bottom) and expand (PDEP: the low bits of `x` spread to the
/// set positions of `mask`).
pub(crate) trait BitMoves: Copy {
    /// What [`compress_with`](BitMoves::compress_with) needs to know of a
    /// mask used for many words.
    type Compressor: Copy;
    /// `pext(x, mask)`.
    fn compress(self, x: u64, mask: u64) -> u64;
    /// `pdep(x, mask)`.
    fn expand(self, x: u64, mask: u64) -> u64;
    /// Prepares `mask` for [`compress_with`](BitMoves::compress_with).
    fn compressor(self, mask: u64) -> Self::Compressor;
    /// `pext(x, mask)` for the mask `compressor` was made from.
    fn compress_with(self, compressor: Self::Compressor, x: u64) -> u64;
}

/// Compress and expand by Hacker's Delight's parallel-suffix method (§7-4,
/// §7-5): six rounds of shifts and masks, no loop over the set bits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Soft;

/// The six move masks of Hacker's Delight's compress for `mask`.
#[inline(always)]
fn move_masks(mask: u64) -> [u64; 6] {
    let mut m = mask;
    let mut mk = !m << 1;
    let mut moves = [0; 6];
    for (i, mv_out) in moves.iter_mut().enumerate() {
        let mut mp = mk ^ (mk << 1);
        mp ^= mp << 2;
        mp ^= mp << 4;
        mp ^= mp << 8;
        mp ^= mp << 16;
        mp ^= mp << 32;
        let mv = mp & m;
        *mv_out = mv;
        m = (m ^ mv) | (mv >> (1 << i));
        mk &= !mp;
    }
    moves
}

impl BitMoves for Soft {
    type Compressor = (u64, [u64; 6]);

    #[inline(always)]
    fn compress(self, x: u64, mask: u64) -> u64 {
        self.compress_with(self.compressor(mask), x)
    }

    #[inline(always)]
    fn compressor(self, mask: u64) -> Self::Compressor {
        (mask, move_masks(mask))
    }

    #[inline(always)]
    fn compress_with(self, (mask, moves): Self::Compressor, x: u64) -> u64 {
        let mut x = x & mask;
        for (i, &mv) in moves.iter().enumerate() {
            let t = x & mv;
            x = (x ^ t) | (t >> (1 << i));
        }
        x
    }

    #[inline(always)]
    fn expand(self, x: u64, mask: u64) -> u64 {
        let moves = move_masks(mask);
        let mut x = x;
        for (i, &mv) in moves.iter().enumerate().rev() {
            let t = x << (1 << i);
            x = (x & !mv) | (t & mv);
        }
        x & mask
    }
}

/// The mask of the low `n` bits, `n <= 64`.
#[inline(always)]
pub(crate) const fn low_bits(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1 << n) - 1 }
}

/// Word `i` of `words`, 0 past the end.
#[inline(always)]
fn word(words: &[u64], i: usize) -> u64 {
    words.get(i).copied().unwrap_or(0)
}

/// The 64 bits of `words` from bit `start` (bits past the end read 0).
#[inline(always)]
pub(crate) fn bits_from(words: &[u64], start: usize) -> u64 {
    let (i, offset) = (start / 64, start % 64);
    let low = word(words, i) >> offset;
    if offset == 0 { low } else { low | word(words, i + 1) << (64 - offset) }
}

/// Writes runs of bits into a word slice front to back: words it passes
/// are overwritten whole, except that the bits below the starting bit of
/// the first word are kept. Anything past the slice's end is dropped.
struct BitWriter<'d> {
    dst: &'d mut [u64],
    word: usize,
    bit: u32,
    acc: u64,
}

impl<'d> BitWriter<'d> {
    #[inline(always)]
    fn new(dst: &'d mut [u64], start: usize) -> Self {
        let (word, bit) = (start / 64, (start % 64) as u32);
        let acc = dst.get(word).map_or(0, |&w| w & low_bits(bit));
        BitWriter { dst, word, bit, acc }
    }

    /// Appends the low `n <= 64` bits of `value` (its other bits clear).
    #[inline(always)]
    fn push(&mut self, value: u64, n: u32) {
        if n == 0 {
            return;
        }
        self.acc |= value << self.bit;
        let end = self.bit + n;
        if end >= 64 {
            if let Some(w) = self.dst.get_mut(self.word) {
                *w = self.acc;
            }
            self.word += 1;
            self.acc = if self.bit == 0 { 0 } else { value >> (64 - self.bit) };
            self.bit = end - 64;
        } else {
            self.bit = end;
        }
    }

    /// Whether every further bit would be dropped.
    #[inline(always)]
    fn is_full(&self) -> bool {
        self.word >= self.dst.len()
    }

    /// Stores the partly filled last word (its bits past the run cleared).
    #[inline(always)]
    fn finish(self) {
        if self.bit > 0
            && let Some(w) = self.dst.get_mut(self.word)
        {
            *w = self.acc;
        }
    }
}

/// The positions of a periodic set (`phase`, `phase + period`, …) within
/// successive words: yields, for each word, the mask of its positions.
#[derive(Clone, Copy)]
struct Periodic {
    period: usize,
    /// Positions `0, period, 2·period, …` below 64 (for `period < 64`).
    pattern: u64,
    /// The first position at or after the current word's start, relative to
    /// that start (may be 64 or more when a word holds none).
    next: usize,
}

impl Periodic {
    #[inline(always)]
    fn new(period: usize, phase: usize) -> Self {
        let mut pattern = 0u64;
        if period < 64 {
            let mut p = 0;
            while p < 64 {
                pattern |= 1 << p;
                p += period;
            }
        }
        Periodic { period, pattern, next: phase }
    }

    /// The mask of the current word, then moves to the next word.
    #[inline(always)]
    fn advance(&mut self) -> u64 {
        if self.next >= 64 {
            self.next -= 64;
            return 0;
        }
        if self.period >= 64 {
            let mask = 1 << self.next;
            self.next = self.next + self.period - 64;
            return mask;
        }
        let mask = self.pattern << self.next;
        let count = mask.count_ones() as usize;
        self.next = self.next + count * self.period - 64;
        mask
    }

    /// Skips whole words that hold no position, returning how many.
    #[inline(always)]
    fn skip_empty(&mut self) -> usize {
        let skipped = self.next / 64;
        self.next %= 64;
        skipped
    }
}

/// `dst` bit `j` (for every bit of `dst`) = the AND of `src` bits
/// `j·stride + offset .. + width` (bits past `src` read 0). `stride` and
/// `width` are at least 1.
///
/// One pass over the source words: each word's cells are the positions of
/// a periodic mask, tested for `width` set bits by a doubling AND over the
/// word and the next (as one `u128`), then compressed out and appended. A
/// cell wider than 64 bits is tested word by word.
#[inline(always)]
pub(crate) fn gather_and<B: BitMoves>(
    moves: B,
    src: &[u64],
    stride: usize,
    offset: usize,
    width: usize,
    dst: &mut [u64],
) {
    let total = dst.len() * 64;
    if total == 0 {
        return;
    }
    if 64usize.is_multiple_of(stride) && offset % 64 + width <= stride {
        return gather_and_aligned(moves, &src[(offset / 64).min(src.len())..], stride, offset % 64, width, dst);
    }
    if stride <= BLOCK_STRIDE && width <= 64 {
        return gather_and_strided(moves, &src[(offset / 64).min(src.len())..], stride, offset % 64, width, dst);
    }
    let mut out = BitWriter::new(dst, 0);
    if width > 64 {
        let mut start = offset;
        for _ in 0..total {
            let mut all = true;
            let mut rest = width;
            let mut p = start;
            while rest > 0 && all {
                let take = rest.min(64);
                all = bits_from(src, p) & low_bits(take as u32) == low_bits(take as u32);
                p = p.saturating_add(take);
                rest -= take;
            }
            out.push(u64::from(all), 1);
            start = start.saturating_add(stride);
        }
        out.finish();
        return;
    }
    let mut cells = Periodic::new(stride, offset % 64);
    let mut i = offset / 64;
    let mut written = 0;
    while written < total && !out.is_full() {
        if i >= src.len() {
            // Every further cell reads as absent: zeros to the end.
            while !out.is_full() {
                out.push(0, 64);
            }
            break;
        }
        let skipped = cells.skip_empty();
        if skipped > 0 {
            i += skipped;
            continue;
        }
        let mask = cells.advance();
        let pair = u128::from(src[i]) | u128::from(word(src, i + 1)) << 64;
        let mut run = pair;
        let mut covered = 1;
        while covered < width {
            let shift = covered.min(width - covered);
            run &= run >> shift;
            covered += shift;
        }
        let n = mask.count_ones();
        out.push(moves.compress(run as u64, mask), n);
        written += n as usize;
        i += 1;
    }
    out.finish();
}

/// The widest stride [`gather_and_strided`] takes: its per-word masks
/// live in a stack array of `stride + 1` words.
const BLOCK_STRIDE: usize = 64;

/// The doubling steps of a `width`-bit AND run (`width <= 64`): after
/// `x &= x >> s` for each, bit `p` is the AND of bits `p..p + width`.
#[inline(always)]
fn run_steps(width: usize) -> ([u32; 6], usize) {
    let mut shifts = [0u32; 6];
    let (mut covered, mut steps) = (1, 0);
    while covered < width {
        let shift = covered.min(width - covered);
        shifts[steps] = shift as u32;
        steps += 1;
        covered += shift;
    }
    (shifts, steps)
}

/// [`gather_and`] for `stride <= 64`, `width <= 64` and `offset < 64`, any
/// stride (3, 5, 20: the shapes that are not powers of two). Output word
/// `k` is cells `64k..64k + 64`, which start in input words `k·stride ..
/// k·stride + stride` (and, for an offset past the first stride, one word
/// more): the same positions in every such block, so the per-word masks
/// and where each word's cells land in the output word are computed once
/// per call, and each output word is a fixed sequence of shifted ANDs
/// (the run test, over a word and the next, as cells may cross a word),
/// one compress per input word and an OR: no per-word bookkeeping.
#[inline(always)]
fn gather_and_strided<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    debug_assert!(stride <= BLOCK_STRIDE && width <= 64 && offset < 64);
    // The cell starts of one block, relative to its first word, a word at
    // a time in registers (setting them bit by bit in the array would
    // chain 64 stores through memory, longer than a short call's work),
    // and where word t's cells go in the output word: below 64 for every
    // word, as each of the `words` words holds at least one start.
    let words = (offset + 63 * stride) / 64 + 1;
    let mut masks = [0u64; BLOCK_STRIDE + 1];
    let mut lands = [0u32; BLOCK_STRIDE + 1];
    let mut cells = Periodic::new(stride, offset);
    let mut before = 0;
    for (mask, land) in masks[..words].iter_mut().zip(&mut lands[..words]) {
        *mask = cells.advance();
        *land = before;
        before += mask.count_ones();
    }
    // The 64th start ends the block: a word past it would hold cells of
    // the next output word.
    if let Some(last) = masks[..words].last_mut() {
        let excess = before.saturating_sub(64);
        for _ in 0..excess {
            *last &= !(1u64 << (63 - last.leading_zeros()));
        }
    }
    let (shifts, steps) = run_steps(width);
    let shifts = &shifts[..steps];
    // The run test of a cell starting in `lo` that may end in `hi`: the
    // doubling AND over the 128-bit pair, low word kept.
    let run = |mut lo: u64, mut hi: u64| {
        for &s in shifts {
            lo &= (lo >> s) | (hi << (64 - s));
            hi &= hi >> s;
        }
        lo
    };
    let masks = &masks[..words];
    let lands = &lands[..words];
    // Whole blocks with every word (and the one after) in `src`, by plain
    // indexing; the rest read words past the end as 0.
    let body = if src.len() > words { ((src.len() - words - 1) / stride + 1).min(dst.len()) } else { 0 };
    let (head, tail) = dst.split_at_mut(body);
    for (k, out) in head.iter_mut().enumerate() {
        let block = &src[k * stride..k * stride + words + 1];
        let mut acc = 0;
        for t in 0..words {
            acc |= moves.compress(run(block[t], block[t + 1]), masks[t]) << lands[t];
        }
        *out = acc;
    }
    // Blocks that start past `src` hold only absent cells.
    let live = (src.len() - (body * stride).min(src.len())).div_ceil(stride).min(tail.len());
    let (tail, absent) = tail.split_at_mut(live);
    absent.fill(0);
    for (k, out) in tail.iter_mut().enumerate() {
        let base = (body + k) * stride;
        let mut acc = 0;
        for t in 0..words {
            acc |= moves.compress(run(word(src, base + t), word(src, base + t + 1)), masks[t]) << lands[t];
        }
        *out = acc;
    }
}

/// [`gather_and`] when every word holds the same `64 / stride` whole cells
/// (`stride` divides 64, `offset + width <= stride`): each output word is
/// the compressed cells of `stride` input words, with one mask throughout.
#[inline(always)]
fn gather_and_aligned<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    if offset == 0 && width == stride {
        match stride {
            2 => return gather_and_cells::<B, 2>(moves, src, dst),
            4 => return gather_and_cells::<B, 4>(moves, src, dst),
            8 => return gather_and_cells::<B, 8>(moves, src, dst),
            16 => return gather_and_cells::<B, 16>(moves, src, dst),
            32 => return gather_and_cells::<B, 32>(moves, src, dst),
            _ => {}
        }
    }
    if width == 1 {
        match stride {
            2 => return gather_bits::<B, 2>(moves, src, offset, dst),
            4 => return gather_bits::<B, 4>(moves, src, offset, dst),
            8 => return gather_bits::<B, 8>(moves, src, offset, dst),
            16 => return gather_bits::<B, 16>(moves, src, offset, dst),
            32 => return gather_bits::<B, 32>(moves, src, offset, dst),
            _ => {}
        }
    }
    let per_word = 64 / stride;
    let mut mask = 0u64;
    for t in 0..per_word {
        mask |= 1 << (t * stride + offset);
    }
    let compressor = moves.compressor(mask);
    // The doubling steps of the in-word AND run (cells never cross a word
    // here), fixed for the call: at most 6, unused ones shift by 0.
    let mut shifts = [0u32; 6];
    let (mut covered, mut steps) = (1, 0);
    while covered < width {
        let shift = covered.min(width - covered);
        shifts[steps] = shift as u32;
        steps += 1;
        covered += shift;
    }
    let shifts = &shifts[..steps];
    if steps == 0 {
        // One bit per cell (a row split): no run to test.
        return compress_blocks(moves, compressor, src, stride, per_word, dst, |x| x);
    }
    compress_blocks(moves, compressor, src, stride, per_word, dst, |x| {
        let mut run = x;
        for &shift in shifts {
            run &= run >> shift;
        }
        run
    })
}

/// [`gather_and_aligned`] for the rank reduction of a power-of-two rank
/// count `S` (`stride = width = S`, offset 0; the fold's common case):
/// with the stride and the run test's shifts (1, 2, 4, … below `S`)
/// constants, the compiler unrolls the loops over a block's `S` words and
/// over the shifts, where the general form steps through both at run time.
#[inline(always)]
fn gather_and_cells<B: BitMoves, const S: usize>(moves: B, src: &[u64], dst: &mut [u64]) {
    let mut mask = 0u64;
    let mut p = 0;
    while p < 64 {
        mask |= 1 << p;
        p += S;
    }
    compress_blocks(moves, moves.compressor(mask), src, S, 64 / S, dst, |x| {
        let mut run = x;
        let mut shift = 1;
        while shift < S {
            run &= run >> shift;
            shift *= 2;
        }
        run
    })
}

/// [`gather_and_aligned`] for one bit per cell (a row split out of a
/// power-of-two row count `S`, `offset < S`), with the stride a constant
/// so the compiler unrolls the `S` compresses of each output word.
#[inline(always)]
fn gather_bits<B: BitMoves, const S: usize>(moves: B, src: &[u64], offset: usize, dst: &mut [u64]) {
    let mut mask = 0u64;
    let mut p = offset;
    while p < 64 {
        mask |= 1 << p;
        p += S;
    }
    compress_blocks(moves, moves.compressor(mask), src, S, 64 / S, dst, |x| x)
}

/// Each output word of [`gather_and_aligned`]: the compressed cells of
/// `stride` input words, each first mapped by `run`.
#[inline(always)]
fn compress_blocks<B: BitMoves>(
    moves: B,
    compressor: B::Compressor,
    src: &[u64],
    stride: usize,
    per_word: usize,
    dst: &mut [u64],
    run: impl Fn(u64) -> u64,
) {
    let whole = (src.len() / stride).min(dst.len());
    let (full, rest) = dst.split_at_mut(whole);
    for (out, words) in full.iter_mut().zip(src.chunks_exact(stride)) {
        let mut acc = 0;
        for (t, &x) in words.iter().enumerate() {
            acc |= moves.compress_with(compressor, run(x)) << (t * per_word);
        }
        *out = acc;
    }
    // A partial block of input words, then zeros.
    if let Some(out) = rest.first_mut() {
        let mut acc = 0;
        for (t, &x) in src[whole * stride..].iter().enumerate() {
            acc |= moves.compress_with(compressor, run(x)) << (t * per_word);
        }
        *out = acc;
    }
    for out in rest.iter_mut().skip(1) {
        *out = 0;
    }
}

/// `dst` bit `j·stride + offset` |= `src` bit `j`, for every `j` whose
/// position is within `dst`. `stride` is at least 1.
#[inline(always)]
pub(crate) fn scatter_or<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    if 64usize.is_multiple_of(stride) && offset % 64 < stride {
        let first = (offset / 64).min(dst.len());
        let dst = &mut dst[first..];
        let offset = offset % 64;
        return match stride {
            2 => scatter_or_aligned::<B, 2>(moves, src, offset, dst),
            4 => scatter_or_aligned::<B, 4>(moves, src, offset, dst),
            8 => scatter_or_aligned::<B, 8>(moves, src, offset, dst),
            16 => scatter_or_aligned::<B, 16>(moves, src, offset, dst),
            32 => scatter_or_aligned::<B, 32>(moves, src, offset, dst),
            _ => scatter_or_aligned_any(moves, src, stride, offset, dst),
        };
    }
    let src_bits = src.len() * 64;
    let mut cells = Periodic::new(stride, offset % 64);
    let mut o = offset / 64;
    let mut taken = 0;
    while o < dst.len() && taken < src_bits {
        let skipped = cells.skip_empty();
        if skipped > 0 {
            o += skipped;
            continue;
        }
        let mask = cells.advance();
        let n = mask.count_ones() as usize;
        dst[o] |= moves.expand(bits_from(src, taken), mask);
        taken += n;
        o += 1;
    }
}

/// [`scatter_or`] when `stride` divides 64 and `offset < stride` (a row
/// joined into a flat layout of a power-of-two row count): every `dst`
/// word takes the next `64 / stride` bits of `src` at the same positions,
/// so each `src` word is expanded into `stride` whole `dst` words with one
/// mask, without the general loop's per-word bookkeeping.
#[inline(always)]
fn scatter_or_aligned_any<B: BitMoves>(moves: B, src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    let per_word = 64 / stride;
    let mut mask = 0u64;
    for t in 0..per_word {
        mask |= 1 << (offset + t * stride);
    }
    for (words, &s) in dst.chunks_mut(stride).zip(src) {
        for (t, d) in words.iter_mut().enumerate() {
            // `t · per_word < 64`: `t < stride` and `stride · per_word = 64`.
            *d |= moves.expand(s >> (t * per_word), mask);
        }
    }
}

/// [`scatter_or_aligned_any`] with the stride a constant, so the compiler
/// unrolls the `S` expands of each source word.
#[inline(always)]
fn scatter_or_aligned<B: BitMoves, const S: usize>(moves: B, src: &[u64], offset: usize, dst: &mut [u64]) {
    scatter_or_aligned_any(moves, src, S, offset, dst)
}

/// `dst[r]` = the 64 bits of `src` from bit `start + 64r` (0 past its end):
/// a copy shifted by `start % 64`, over pairs of adjacent words so that it
/// vectorises.
#[inline(always)]
fn copy_bits(src: &[u64], start: usize, dst: &mut [u64]) {
    let (first, offset) = (start / 64, (start % 64) as u32);
    let src = &src[first.min(src.len())..];
    // Words whose both halves are within `src`.
    let whole = src.len().saturating_sub(1).min(dst.len());
    let (head, tail) = dst.split_at_mut(whole);
    if offset == 0 {
        head.copy_from_slice(&src[..whole]);
    } else {
        for ((d, &lo), &hi) in head.iter_mut().zip(&src[..whole]).zip(&src[1..=whole]) {
            *d = (lo >> offset) | (hi << (64 - offset));
        }
    }
    for (r, d) in tail.iter_mut().enumerate() {
        *d = bits_from(src, (whole + r) * 64 + offset as usize);
    }
}

/// The number of leading words of `words` equal to `m`, 8 words per test
/// (an OR of XORs, which vectorises) and then one by one.
#[inline(always)]
fn run_len(words: &[u64], m: u64) -> usize {
    let mut run = 0;
    for chunk in words.chunks_exact(8) {
        if chunk.iter().fold(0, |acc, &w| acc | (w ^ m)) != 0 {
            break;
        }
        run += 8;
    }
    run + words[run..].iter().take_while(|&&w| w == m).count()
}

/// PDEP over slices: `dst` (as long as `mask`) gets, at the `i`-th set
/// position of `mask`, bit `src_start + i` of `src` (0 past its end), and 0
/// elsewhere. Returns `popcount(mask)`.
///
/// Runs of empty and of whole mask words (a prefix plan's cells are
/// mostly these) are a fill and a shifted copy. Other words take one
/// expand each, their source bits a funnel shift of the two words under
/// the running bit position; while both are within `src` they are read
/// by plain indexing, without a branch on where the bits come from.
#[inline(always)]
pub(crate) fn deposit<B: BitMoves>(moves: B, src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    let n = mask.len().min(dst.len());
    let (mask, dst) = (&mask[..n], &mut dst[..n]);
    let mut taken = src_start;
    let mut i = 0;
    // Each word takes at most 64 bits, so the words of a stretch of `k`
    // mask words read source words below `taken / 64 + k + 1`: stretches
    // of up to `RUN` words whose reads all lie within `src` go without
    // per-word bounds tests.
    const RUN: usize = 16;
    while i < n {
        let m = mask[i];
        if m == 0 || m == u64::MAX {
            let run = run_len(&mask[i..], m);
            if m == 0 {
                dst[i..i + run].fill(0);
            } else {
                copy_bits(src, taken, &mut dst[i..i + run]);
                taken += 64 * run;
            }
            i += run;
            continue;
        }
        let k = (n - i).min(RUN);
        let first = taken / 64;
        if first + k + 1 > src.len() {
            dst[i] = moves.expand(bits_from(src, taken), m);
            taken += m.count_ones() as usize;
            i += 1;
            continue;
        }
        let window = &src[first..first + k + 1];
        let mut bit = taken % 64;
        let mut done = 0;
        for (d, &m) in dst[i..i + k].iter_mut().zip(&mask[i..i + k]) {
            if m == 0 || m == u64::MAX {
                break;
            }
            let w = bit / 64;
            // `x >> (64 - bit)` without the undefined shift by 64.
            let x = (window[w] >> (bit % 64)) | ((window[w + 1] << 1) << (63 - bit % 64));
            *d = moves.expand(x, m);
            bit += m.count_ones() as usize;
            done += 1;
        }
        taken = first * 64 + bit;
        i += done;
    }
    taken - src_start
}

/// PEXT over slices: the bits of `src` at the set positions of `mask`, in
/// order, written to `dst` from bit `dst_start` (the bits below it kept,
/// the rest of the last word written cleared, dropped past `dst`'s end).
/// Returns `popcount(mask)` over the common length.
///
/// One compress per word and no branch on the mask or on where the bits
/// land: the output word under construction is stored after every input
/// word (the same word again until it fills), and the bits that spill
/// into the next one replace it by a select, so the mix of word counts a
/// random mask gives costs no mispredicted branches.
#[inline(always)]
pub(crate) fn extract<B: BitMoves>(moves: B, src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    let n = src.len().min(mask.len());
    let (src, mask) = (&src[..n], &mask[..n]);
    let mut t = dst_start;
    // Bits written past `dst` are dropped: the words that end within it
    // go through the branch-free loop, the rest through the `BitWriter`.
    let fits = dst.len() * 64;
    let mut acc = dst.get(t / 64).map_or(0, |&w| w & low_bits((t % 64) as u32));
    let mut i = 0;
    while i < n && t + 64 <= fits {
        let (s, m) = (src[i], mask[i]);
        if m == 0 || m == u64::MAX {
            // A run of empty words adds nothing; a run of whole words
            // (those that end within `dst`) is the source shifted up to
            // the bit position, over pairs of adjacent words so that it
            // vectorises.
            let run = run_len(&mask[i..], m);
            if m == 0 {
                i += run;
                continue;
            }
            let run = run.min((fits - t) / 64);
            let (o, bit) = (t / 64, (t % 64) as u32);
            let words = &src[i..i + run];
            let out = &mut dst[o..o + run];
            if bit == 0 {
                out.copy_from_slice(words);
            } else {
                out[0] = acc | (words[0] << bit);
                for ((d, &lo), &hi) in out[1..].iter_mut().zip(words).zip(&words[1..]) {
                    *d = (lo >> (64 - bit)) | (hi << bit);
                }
                acc = words[run - 1] >> (64 - bit);
            }
            t += 64 * run;
            i += run;
            continue;
        }
        let x = moves.compress(s, m);
        let c = m.count_ones() as usize;
        let bit = t % 64;
        acc |= x << bit;
        // `x >> (64 - bit)`: the bits that land in the next word.
        let spill = (x >> 1) >> (63 - bit);
        dst[t / 64] = acc;
        let crossed = bit + c >= 64;
        acc = if crossed { spill } else { acc };
        t += c;
        i += 1;
    }
    // The partly filled word (its bits past the run clear), where the
    // `BitWriter` below takes it up.
    if !t.is_multiple_of(64)
        && let Some(w) = dst.get_mut(t / 64)
    {
        *w = acc;
    }
    if i == n {
        return t - dst_start;
    }
    let mut out = BitWriter::new(dst, t);
    let mut count = t - dst_start;
    for (&s, &m) in src[i..].iter().zip(&mask[i..]) {
        let c = m.count_ones();
        out.push(moves.compress(s, m), c);
        count += c as usize;
    }
    out.finish();
    count
}

/// The 64 bits of the infinite repetition of `pattern`'s first `period`
/// bits, from position `phase < period` of it.
#[inline(always)]
fn periodic_bits(pattern: &[u64], period: usize, phase: usize, small: u128) -> u64 {
    if period < 64 {
        return (small >> phase) as u64;
    }
    let head = period - phase;
    let first = bits_from(pattern, phase);
    if head >= 64 { first } else { (first & low_bits(head as u32)) | bits_from(pattern, 0) << head }
}

/// The longest word cycle [`fill_periodic`] precomputes on the stack.
const CYCLE_WORDS: usize = 64;
/// The cycles [`fill_periodic`] keeps in a buffer of this many words.
const SMALL_CYCLE_WORDS: usize = 8;

/// ORs into `dst` bits `start..end` (clamped to `dst`) the repetition of the
/// first `period >= 1` bits of `pattern`: bit `p` gets pattern bit
/// `(p − start) % period`.
#[inline(always)]
pub(crate) fn fill_periodic(dst: &mut [u64], start: usize, end: usize, pattern: &[u64], period: usize) {
    let end = end.min(dst.len() * 64);
    if start >= end {
        return;
    }
    // For a short period, the first 128 bits of the repetition, so any 64
    // bits of it are one shift away.
    let mut small = 0u128;
    if period < 64 {
        small = u128::from(word(pattern, 0) & low_bits(period as u32));
        let mut filled = period;
        while filled < 128 {
            small |= small << filled;
            filled *= 2;
        }
    }
    if 64usize.is_multiple_of(period) {
        // Every word holds the same bits: a splat, fused with the OR.
        let bit = start % 64;
        let unit = periodic_bits(pattern, period, 0, small);
        let word_bits = unit.rotate_left(bit as u32);
        let (first, last) = (start / 64, (end - 1) / 64);
        let edge = |o: usize| {
            let lo = if o == first { u64::MAX << bit } else { u64::MAX };
            let hi = if o == last { low_bits(((end - 1) % 64 + 1) as u32) } else { u64::MAX };
            lo & hi
        };
        dst[first] |= word_bits & edge(first);
        if last > first {
            for w in &mut dst[first + 1..last] {
                *w |= word_bits;
            }
            dst[last] |= word_bits & edge(last);
        }
        return;
    }
    // The first (partial) word, then whole words: the phase advances by
    // `64 % period` per word, kept below `period` by one subtraction.
    let bit = start % 64;
    let n = (64 - bit).min(end - start);
    dst[start / 64] |= (periodic_bits(pattern, period, 0, small) & low_bits(n as u32)) << bit;
    let step = 64 % period;
    let mut phase = n % period;
    let mut p = start + n;
    // The whole words repeat every `period / gcd(period, 64)` words: when
    // that cycle fits a stack buffer, compute it once and OR it in round
    // and round.
    let cycle = period / (1usize << period.trailing_zeros().min(6));
    if cycle <= CYCLE_WORDS && p + 64 * cycle <= end {
        // Short cycles (every period up to 8 words, and 20 = 5 words, the
        // 5 groups × 4 ranks of a 300-chunk request) in a small buffer:
        // clearing the full 512 bytes showed in the profile of such a
        // fold_unfold as `memset` (5.8% of it; 4.5% after).
        let mut small_words = [0u64; SMALL_CYCLE_WORDS];
        let mut large_words;
        let words: &mut [u64] = if cycle <= SMALL_CYCLE_WORDS {
            &mut small_words
        } else {
            large_words = [0u64; CYCLE_WORDS];
            &mut large_words
        };
        for w in &mut words[..cycle] {
            *w = periodic_bits(pattern, period, phase, small);
            phase += step;
            if phase >= period {
                phase -= period;
            }
        }
        let whole = (end - p) / 64;
        let first = p / 64;
        // By whole cycles: a fixed-length inner loop the compiler unrolls
        // and vectorises, where `iter().cycle()` tests for its wrap-around
        // at every word.
        let cycle_words = &words[..cycle];
        for block in dst[first..first + whole].chunks_mut(cycle) {
            for (d, &w) in block.iter_mut().zip(cycle_words) {
                *d |= w;
            }
        }
        // `phase` is back where it started after `cycle` words; advance it
        // over the rest of the whole words.
        for _ in 0..whole % cycle {
            phase += step;
            if phase >= period {
                phase -= period;
            }
        }
        p += whole * 64;
    }
    while p + 64 <= end {
        dst[p / 64] |= periodic_bits(pattern, period, phase, small);
        phase += step;
        if phase >= period {
            phase -= period;
        }
        p += 64;
    }
    if p < end {
        dst[p / 64] |= periodic_bits(pattern, period, phase, small) & low_bits((end - p) as u32);
    }
}

/// `words[i] &= words[i − shift]` for every bit `i` (bits before 0 read as
/// set): one step of the windowed run test. In place, top block first:
/// each block's shifted words are computed from the original words into a
/// stack buffer (a loop without aliasing, which the compiler vectorises for
/// the kernel's features), then ANDed in; blocks below are still original.
#[inline(always)]
pub(crate) fn and_shifted(words: &mut [u64], shift: usize) {
    const BLOCK: usize = 32;
    let (word_shift, bit_shift) = (shift / 64, (shift % 64) as u32);
    let n = words.len();
    // Words whose sources are all real words (index `i − word_shift − 1
    // >= 0`) go by blocks; the few below, one by one.
    let first_full = (word_shift + 1).min(n);
    let mut end = n;
    let mut shifted = [0u64; BLOCK];
    while end > first_full {
        let start = end.saturating_sub(BLOCK).max(first_full);
        let len = end - start;
        let (low, high) =
            (&words[start - word_shift - 1..end - word_shift - 1], &words[start - word_shift..end - word_shift]);
        if bit_shift == 0 {
            shifted[..len].copy_from_slice(high);
        } else {
            for ((s, &h), &l) in shifted[..len].iter_mut().zip(high).zip(low) {
                *s = (h << bit_shift) | (l >> (64 - bit_shift));
            }
        }
        for (w, &s) in words[start..end].iter_mut().zip(&shifted[..len]) {
            *w &= s;
        }
        end = start;
    }
    let read = |words: &[u64], k: usize| if k < word_shift { u64::MAX } else { words[k - word_shift] };
    for i in (0..end).rev() {
        let shifted = if bit_shift == 0 {
            read(words, i)
        } else {
            let below = if i == 0 { u64::MAX } else { read(words, i - 1) };
            (read(words, i) << bit_shift) | (below >> (64 - bit_shift))
        };
        words[i] &= shifted;
    }
}

/// Transposes each whole 64-word block of `words` as a 64×64 bit matrix
/// (bit `c` of word `r` ↔ bit `r` of word `c`), in place; a partial last
/// block is left as it is. Hacker's Delight's recursive block swap: six
/// rounds of 32 masked swaps.
#[inline(always)]
pub(crate) fn transpose64(words: &mut [u64]) {
    for block in words.chunks_exact_mut(64) {
        let mut width = 32;
        let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
        while width != 0 {
            // Pairs (r, r + width) of each 2·width run, as two slices: the
            // loop over them has no aliasing, so for width >= 4 the
            // compiler vectorises it for the kernel's features.
            for pair in block.chunks_exact_mut(2 * width) {
                let (low, high) = pair.split_at_mut(width);
                for (a, b) in low.iter_mut().zip(high.iter_mut()) {
                    let t = ((*a >> width) ^ *b) & mask;
                    *a ^= t << width;
                    *b ^= t;
                }
            }
            width >>= 1;
            mask ^= mask << width;
        }
    }
}

/// The row split (see `kernel::split_rows`): 64 rows by 64×64 transposes
/// of each block of 64 flat words, other counts by a [`gather_and`] of
/// each row, with `gather` (the kernel's choice of it).
#[inline(always)]
fn split_rows_with(src: &[u64], rows: &mut [&mut [u64]], gather: impl Fn(&[u64], usize, usize, usize, &mut [u64])) {
    let n = rows.len();
    if n == 64 {
        let len = rows.first().map_or(0, |r| r.len());
        let mut block = [0u64; 64];
        for b in 0..len {
            let start = (b * 64).min(src.len());
            let words = &src[start..(start + 64).min(src.len())];
            block[..words.len()].copy_from_slice(words);
            block[words.len()..].fill(0);
            transpose64(&mut block);
            for (row, &word) in rows.iter_mut().zip(&block) {
                row[b] = word;
            }
        }
        return;
    }
    for (k, row) in rows.iter_mut().enumerate() {
        gather(src, n, k, 1, row);
    }
}

/// The row join (see `kernel::join_rows`): 64 rows by 64×64 transposes,
/// other counts by a [`scatter_or`] of each row, with `scatter`.
#[inline(always)]
fn join_rows_with(rows: &[&[u64]], dst: &mut [u64], scatter: impl Fn(&[u64], usize, usize, &mut [u64])) {
    let n = rows.len();
    if n == 64 {
        let len = rows.first().map_or(0, |r| r.len()).min(dst.len().div_ceil(64));
        let mut block = [0u64; 64];
        for b in 0..len {
            for (slot, row) in block.iter_mut().zip(rows) {
                *slot = row[b];
            }
            transpose64(&mut block);
            let start = b * 64;
            let end = (start + 64).min(dst.len());
            dst[start..end].copy_from_slice(&block[..end - start]);
        }
        let done = (len * 64).min(dst.len());
        dst[done..].fill(0);
        return;
    }
    dst.fill(0);
    for (k, row) in rows.iter().enumerate() {
        scatter(row, n, k, dst);
    }
}

/// The row split with `moves` (the scalar kernel's).
#[inline(always)]
pub(crate) fn split_rows<B: BitMoves>(moves: B, src: &[u64], rows: &mut [&mut [u64]]) {
    split_rows_with(src, rows, |src, stride, offset, width, dst| gather_and(moves, src, stride, offset, width, dst));
}

/// The row join with `moves` (the scalar kernel's).
#[inline(always)]
pub(crate) fn join_rows<B: BitMoves>(moves: B, rows: &[&[u64]], dst: &mut [u64]) {
    join_rows_with(rows, dst, |src, stride, offset, dst| scatter_or(moves, src, stride, offset, dst));
}

/// The row split with the fastest [`BitMoves`] of this CPU.
#[inline(always)]
pub(crate) fn split_rows_best(src: &[u64], rows: &mut [&mut [u64]]) {
    split_rows_with(src, rows, gather_and_best);
}

/// The row join with the fastest [`BitMoves`] of this CPU.
#[inline(always)]
pub(crate) fn join_rows_best(rows: &[&[u64]], dst: &mut [u64]) {
    join_rows_with(rows, dst, scatter_or_best);
}

/// [`gather_and`] with the fastest [`BitMoves`] of this CPU, and the
/// 8-bit rank reduction (8 ranks, or 8 groups of a chunk) in AVX2
/// registers where the CPU has them.
#[inline]
pub(crate) fn gather_and_best(src: &[u64], stride: usize, offset: usize, width: usize, dst: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    let (src, offset, dst) =
        if stride == 8 && width == 8 && offset.is_multiple_of(64) && super::x86_64::avx2::is_available() {
            let src = &src[(offset / 64).min(src.len())..];
            // SAFETY: `is_available` checked that the CPU has AVX2.
            let done = unsafe { super::x86_64::avx2::and_bytes(src, dst) };
            (&src[done * 8..], 0, &mut dst[done..])
        } else {
            (src, offset, dst)
        };
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::gather_and(src, stride, offset, width, dst) };
    }
    gather_and(Soft, src, stride, offset, width, dst)
}

/// [`scatter_or`] with the fastest [`BitMoves`] of this CPU.
#[inline]
pub(crate) fn scatter_or_best(src: &[u64], stride: usize, offset: usize, dst: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::scatter_or(src, stride, offset, dst) };
    }
    scatter_or(Soft, src, stride, offset, dst)
}

/// [`deposit`] with the fastest [`BitMoves`] of this CPU (and AVX2 for
/// its runs of whole words where the CPU has it).
#[inline]
pub(crate) fn deposit_best(src: &[u64], src_start: usize, mask: &[u64], dst: &mut [u64]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        if super::x86_64::avx2::is_available() {
            // SAFETY: `is_fast` checked BMI2 and popcnt, `is_available` AVX2.
            return unsafe { super::x86_64::bmi2::deposit_avx2(src, src_start, mask, dst) };
        }
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::deposit(src, src_start, mask, dst) };
    }
    deposit(Soft, src, src_start, mask, dst)
}

/// [`extract`] with the fastest [`BitMoves`] of this CPU (and AVX2 for
/// its runs of whole words where the CPU has it).
#[inline]
pub(crate) fn extract_best(src: &[u64], mask: &[u64], dst: &mut [u64], dst_start: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::x86_64::bmi2::is_fast() {
        if super::x86_64::avx2::is_available() {
            // SAFETY: `is_fast` checked BMI2 and popcnt, `is_available` AVX2.
            return unsafe { super::x86_64::bmi2::extract_avx2(src, mask, dst, dst_start) };
        }
        // SAFETY: `is_fast` checked that the CPU has BMI2 and popcnt.
        return unsafe { super::x86_64::bmi2::extract(src, mask, dst, dst_start) };
    }
    extract(Soft, src, mask, dst, dst_start)
}
