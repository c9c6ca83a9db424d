//! The word-parallel balanced engine, for up to [`MAX_DENSE_PARTICIPANTS`]
//! participants: every class has a slot (`C = 2^P` of them), and all
//! scratch space is on the stack.
//!
//! # Counting
//!
//! The words are cut into at most [`MAX_SUPER_BLOCKS`] *super-blocks*, and
//! the keys of every class are counted in each; the per-super-block counts
//! are kept (the *records*). Up to [`MAX_KERNEL_PARTICIPANTS`]
//! participants, [`kernel::class_counts`] counts all classes of a
//! super-block in one pass over its words (one Harley–Seal count per set
//! of participants, so `2^P − 1` popcount streams: 7 for 3 adapters). Above,
//! the fused kernels count the keys every set `T` of participants holds in
//! common, `I(T) = popcount(AND of T's lookups)`: `popcount` for one
//! participant, `and_popcount` for two, and for three or more an
//! `and_popcount` against the product of the others, built a
//! [`CHUNK_WORDS`]-word chunk at a time on the stack; the Möbius transform
//! over supersets turns those into class counts (keys held by exactly `T`).
//!
//! # Assigning
//!
//! Each class hands its keys, in index order, to its participants in index
//! order, each up to its quota. At any point every class has one current
//! owner; the owners change only where a quota runs out, at most once per
//! (class, participant) pair. The records say in which super-blocks that
//! happens. Up to [`MAX_KERNEL_PARTICIPANTS`] participants, every other
//! super-block is routed with fixed owners in one pass of
//! [`kernel::split_by_tables`] (each output word is its lookup word AND
//! the entry of its table that the other lookups select; the tables say
//! which classes it owns); in a super-block where an owner changes, the
//! words where the changing classes' quotas end are found class by class
//! (see [`ChangeSearch`]: by counting a window around where the quota
//! would end were the keys spread evenly, with [`kernel::class_counts`]
//! calls, or by counting runs of it from its start), the stretches
//! between those words are routed with fixed owners, and only those words
//! are split class by class. Above, every word is routed class by class.

use bitmap_core::{Bitmap, SplitWriter, kernel};

use super::owners::{Owners, class_masks};
use super::search::{Change, ChangeSearch, ClassRun, Found, MAX_CHANGES, find_changes_guessing, find_changes_scan};
use super::solve::{Classes, Scratch, solve};
use crate::plan::LoadPlan;

/// The most participants the word-parallel `balanced` engine plans (256
/// classes of keys, all scratch space on the stack); with more, a
/// key-by-key engine plans the same plan, slower and allocating (see
/// [`plan_balanced_into`](crate::plan_balanced_into)).
pub const MAX_DENSE_PARTICIPANTS: usize = 8;

/// The most participants counted and routed by the class kernels
/// ([`kernel::class_counts`], [`kernel::split_by_tables`]); above, the
/// counts come from products and fused counts and every word is routed
/// class by class.
const MAX_KERNEL_PARTICIPANTS: usize = kernel::MAX_CLASS_INPUTS;

/// The most super-blocks: the owners change in at most one super-block
/// per (class, participant) pair, and those are scanned for the words
/// where they do, so more, and smaller, super-blocks make that part
/// smaller; fewer make fewer counting kernel calls (each folds `2^P − 1`
/// counts and has a fixed cost). From 4 to 16 they timed the same at
/// 262,144 keys × 3 on Zen 4; on a Sapphire Rapids Xeon 8 took 3% less
/// than 16 (2.02–2.06× the `default` plan against 2.09–2.14×, and
/// 1.09–1.11× against 1.12–1.13× at 4,194,304 keys), 4 the same as 8;
/// 32 is slower on both.
const MAX_SUPER_BLOCKS: usize = 8;

/// Records kept on the stack, in `u64`s: 16 KiB. With many participants
/// (many classes) there are fewer super-blocks.
const RECORD_WORDS: usize = 2048;

/// The smallest super-block, in words: shorter kernel calls cost more than
/// they count.
const MIN_SUPER_BLOCK_WORDS: usize = 64;

/// Words of a product of three or more lookups built at a time: 1 KiB.
const CHUNK_WORDS: usize = 128;

/// The classes of `P` participants: slot `c` is the class of keys held by
/// exactly the participants whose bits are set in `c`.
struct DenseClasses<'a, const P: usize> {
    counts: &'a [u64],
}

impl<const P: usize> Classes for DenseClasses<'_, P> {
    fn len(&self) -> usize {
        self.counts.len()
    }

    #[inline]
    fn keys(&self, class: usize) -> u64 {
        self.counts[class]
    }

    #[inline]
    fn holds(&self, class: usize, participant: usize) -> bool {
        class >> participant & 1 == 1
    }
}

/// Plans `num_keys` keys of `P` participants (`C = 2^P` classes; `D`
/// product buffers, `P - 2` above [`MAX_KERNEL_PARTICIPANTS`], else none;
/// records of up to `B` super-blocks) into `plan`, whose entries become
/// exactly `indices` (the caller removes the empty ones).
pub(super) fn plan<const P: usize, const C: usize, const D: usize, const B: usize>(
    num_keys: usize,
    indices: &[usize],
    inputs: &[&[u64]],
    weights: &[f64],
    plan: &mut LoadPlan,
) {
    plan_with::<P, C, D, B>(num_keys, indices, inputs, weights, plan, ChangeSearch::for_active_kernel());
}

/// [`plan`], finding the words where owners change by `search` (the same
/// words either way).
fn plan_with<const P: usize, const C: usize, const D: usize, const B: usize>(
    num_keys: usize,
    indices: &[usize],
    inputs: &[&[u64]],
    weights: &[f64],
    plan: &mut LoadPlan,
    search: ChangeSearch,
) {
    debug_assert!(C == 1 << P && B == MAX_SUPER_BLOCKS.min(RECORD_WORDS / C));
    debug_assert!(D == if P > MAX_KERNEL_PARTICIPANTS { P - 2 } else { 0 });
    debug_assert!(indices.len() == P && inputs.len() == P && weights.len() == P);
    let inputs: [&[u64]; P] = core::array::from_fn(|p| inputs[p]);
    let words = inputs[0].len();

    // Count.
    // (Sized by `B`, not by the largest `C`: zeroing unused records
    // costs more than planning 1,024 keys.)
    let block_words = MIN_SUPER_BLOCK_WORDS.max(words.div_ceil(B)).next_multiple_of(8);
    let blocks = words.div_ceil(block_words);
    let mut records = [[0u64; C]; B];
    let mut totals = [0u64; C];
    let mut products = [[0u64; CHUNK_WORDS]; D];
    for (block, record) in records.iter_mut().take(blocks).enumerate() {
        let range = block * block_words..words.min((block + 1) * block_words);
        count_classes::<P, C>(&inputs, range, &mut products, record);
    }
    // Summed after all the counts rather than after each: reading a
    // kernel call's counts waits for its last sums, which the next call's
    // loop can otherwise overlap.
    for record in records.iter().take(blocks) {
        for (total, &count) in totals.iter_mut().zip(record.iter()) {
            *total += count;
        }
    }

    // Solve.
    let mut order = [0usize; C];
    let mut listed = 0;
    for holders in 1..=P as u32 {
        for class in (1..C).filter(|class| class.count_ones() == holders) {
            order[listed] = class;
            listed += 1;
        }
    }
    let mut flow = [[0u64; P]; C];
    solve(
        &DenseClasses::<P> { counts: &totals },
        &order[..listed],
        weights,
        Scratch {
            flow: flow.as_flattened_mut(),
            load: &mut [0; P],
            cap: &mut [0; P],
            participant_parent: &mut [0; P],
            class_parent: &mut [0; C],
            queue: &mut [0; C],
        },
    );

    // Assign: every output word written once, into the slots' buffers as
    // they are (a fresh plan's are never zeroed).
    let mut owners = Owners::<P, C>::new(&flow);
    let mut slots = plan.map_mut().prepare_slots(indices).iter_mut();
    let outputs: [&mut Bitmap; P] = core::array::from_fn(|_| &mut slots.next().expect("a slot per participant").1);
    let mut writer = SplitWriter::new(num_keys, outputs);
    if P <= MAX_KERNEL_PARTICIPANTS {
        let mut router = Router { inputs: &inputs, writer: &mut writer, tables: [0; P], end: 0 };
        // (Rebuilt only where an owner changes: most super-blocks keep them.)
        let mut tables = owners.tables();
        // (Zeroed once: zeroing its 1 KiB in every changing block was a
        // tenth of this function's time.)
        let mut changes: [Change; MAX_CHANGES] = [(0, 0, 0, 0); MAX_CHANGES];
        for (block, record) in records.iter().take(blocks).enumerate() {
            let range = block * block_words..words.min((block + 1) * block_words);
            // Most super-blocks end inside every quota: they keep the
            // tables and only count the quotas down. (Tested without a
            // branch per class, and without comparing the owners before
            // and after: that read of 8 bytes just after single-byte
            // writes waited for them, a tenth of this function's time.)
            let inside =
                (1..C).fold(true, |inside, class| inside & (record[class] < owners.left[class] || record[class] == 0));
            if inside {
                router.fixed(range.end, tables);
                for (left, &keys) in owners.left.iter_mut().zip(record).skip(1) {
                    *left -= keys;
                }
                continue;
            }
            if (1..C).all(|class| record[class] <= owners.left[class]) {
                router.fixed(range.end, tables);
            } else {
                route_changing_block::<P, C>(&mut router, range, record, &owners, &flow, search, &mut changes);
            }
            for (class, &keys) in record.iter().enumerate().skip(1) {
                owners.take(class, keys, &flow);
            }
            tables = owners.tables();
        }
        router.flush();
    } else {
        let held = |word: usize| -> [u64; P] { core::array::from_fn(|p| inputs[p][word]) };
        for held in (0..words).map(held) {
            writer.push(owners.route_word(held, &flow));
        }
    }
    writer.finish();
}

/// Counts the keys of each class in the words `range` into `counts`.
fn count_classes<const P: usize, const C: usize>(
    inputs: &[&[u64]; P],
    range: core::ops::Range<usize>,
    products: &mut [[u64; CHUNK_WORDS]],
    counts: &mut [u64; C],
) {
    if P <= MAX_KERNEL_PARTICIPANTS {
        let inputs: [&[u64]; P] = core::array::from_fn(|p| &inputs[p][range.clone()]);
        kernel::class_counts(&inputs, counts);
        // (Keys nobody holds are no class.)
        counts[0] = 0;
        return;
    }
    // `common[t]`: keys every participant of `t` holds, whoever else does.
    let common = counts;
    common.fill(0);
    let slice = |p: usize| &inputs[p][range.clone()];
    for a in 0..P {
        common[1 << a] = kernel::popcount(slice(a));
        for b in a + 1..P {
            common[1 << a | 1 << b] = kernel::and_popcount(slice(a), slice(b));
        }
    }
    if P >= 3 {
        for start in range.clone().step_by(CHUNK_WORDS) {
            let chunk = start..range.end.min(start + CHUNK_WORDS);
            let len = chunk.len();
            for a in 0..P {
                for b in a + 1..P - 1 {
                    let (x, y) = (&inputs[a][chunk.clone()], &inputs[b][chunk.clone()]);
                    for (product, (x, y)) in products[0][..len].iter_mut().zip(x.iter().zip(y)) {
                        *product = x & y;
                    }
                    extend::<P, C>(inputs, chunk.clone(), products, 0, 1 << a | 1 << b, b, common);
                }
            }
        }
    }
    // Möbius over supersets: exactly-`t` = common(t) − exactly-supersets.
    common[0] = 0;
    for bit in 0..P {
        for set in (0..C).filter(|set| set >> bit & 1 == 0) {
            common[set] = common[set].wrapping_sub(common[set | 1 << bit]);
        }
    }
    // (Keys nobody holds are no class.)
    common[0] = 0;
}

/// With `products[depth]` holding the AND of the lookups in `set` (whose
/// highest member is `last`) over `chunk`, adds the counts of every
/// superset made of `set` and higher participants.
fn extend<const P: usize, const C: usize>(
    inputs: &[&[u64]; P],
    chunk: core::ops::Range<usize>,
    products: &mut [[u64; CHUNK_WORDS]],
    depth: usize,
    set: usize,
    last: usize,
    common: &mut [u64; C],
) {
    let len = chunk.len();
    for next in last + 1..P {
        let held = &inputs[next][chunk.clone()];
        common[set | 1 << next] += kernel::and_popcount(&products[depth][..len], held);
        if next + 1 < P {
            let (done, rest) = products.split_at_mut(depth + 1);
            for (product, (x, y)) in rest[0][..len].iter_mut().zip(done[depth].iter().zip(held)) {
                *product = x & y;
            }
            extend::<P, C>(inputs, chunk.clone(), products, depth + 1, set | 1 << next, next, common);
        }
    }
}

/// Routes a super-block in which some classes change owner (`record`: its
/// class counts; `owners`: the state at its start, left unchanged;
/// `changes`: room for the words found, whatever it holds).
///
/// Finds the words where an owner changes, class by class, by `search`
/// (see [`ChangeSearch`]), routes the runs between them with fixed owners,
/// and splits only those words class by class.
fn route_changing_block<const P: usize, const C: usize>(
    router: &mut Router<'_, '_, '_, P>,
    range: core::ops::Range<usize>,
    record: &[u64],
    owners: &Owners<P, C>,
    flow: &[[u64; P]; C],
    search: ChangeSearch,
    changes: &mut [Change; MAX_CHANGES],
) {
    let inputs = router.inputs;
    let held = |word: usize| -> [u64; P] { core::array::from_fn(|p| inputs[p][word]) };
    let mut count = 0;
    let mut state = Owners::<P, C> { owner: owners.owner, left: owners.left };
    let found = &mut Found { changes, count: &mut count };
    for class in (1..C).filter(|&class| record[class] > owners.left[class]) {
        let class_run = ClassRun { range: range.clone(), class, keys: record[class] };
        match search {
            ChangeSearch::Guessing => find_changes_guessing(inputs, class_run, &mut state, flow, found),
            ChangeSearch::Scan => find_changes_scan(inputs, class_run, &mut state, flow, found),
        }
    }
    let changes = &mut changes[..count];
    changes.sort_unstable_by_key(|&(word, class, ..)| (word, class));

    let mut routing = Owners::<P, C> { owner: owners.owner, left: owners.left };
    let mut at = 0;
    while at < changes.len() {
        let word = changes[at].0;
        router.fixed(word, routing.tables());
        // Every class to its current owner, and the changing ones split
        // where their quotas end.
        let masks = class_masks::<P, C>(held(word));
        let mut out = [0u64; P];
        let mut changing = [false; C];
        while at < changes.len() && changes[at].0 == word {
            let (_, class, owner, left) = changes[at];
            (changing[class], routing.owner[class], routing.left[class]) = (true, owner, left);
            at += 1;
        }
        for (class, &mask) in masks.iter().enumerate().skip(1) {
            if changing[class] {
                routing.split_word(class, mask, &mut out, flow);
            } else {
                out[usize::from(routing.owner[class])] |= mask;
            }
        }
        router.push(out);
    }
    router.fixed(range.end, routing.tables());
}

/// Writes the outputs front to back: runs of words with fixed owners
/// (output `a` is lookup `a` AND the entry of its table that the other
/// lookups select), merged while the tables stay the same and written by
/// one [`kernel::split_by_tables`] pass each, and single words split class
/// by class.
struct Router<'r, 'w, 'o, const P: usize> {
    inputs: &'r [&'r [u64]; P],
    writer: &'w mut SplitWriter<'o, P>,
    /// The tables of the run not yet written.
    tables: [u8; P],
    /// Where that run ends (the writer's position if there is none).
    end: usize,
}

impl<const P: usize> Router<'_, '_, '_, P> {
    /// Routes the words up to `end` with fixed owners, as `tables` say.
    #[inline]
    fn fixed(&mut self, end: usize, tables: [u8; P]) {
        if tables != self.tables {
            self.flush();
            self.tables = tables;
        }
        self.end = end;
    }

    /// Writes the next word: `words[a]` to output `a`.
    #[inline]
    fn push(&mut self, words: [u64; P]) {
        self.flush();
        self.writer.push(words);
        self.end = self.writer.written_words();
    }

    /// Writes the run routed so far.
    fn flush(&mut self) {
        let start = self.writer.written_words();
        if self.end > start {
            self.writer.split_by_tables(self.inputs, &self.tables, self.end - start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count_classes` of `P` random lookups over words `3..700`, against
    /// a key-by-key count.
    fn check_class_counts<const P: usize, const C: usize>() {
        let words = 700;
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let lookups: Vec<Vec<u64>> = (0..P).map(|_| (0..words).map(|_| next() & next()).collect()).collect();
        let inputs: [&[u64]; P] = core::array::from_fn(|p| lookups[p].as_slice());
        let mut counts = [0u64; C];
        let mut products = [[0u64; CHUNK_WORDS]; 6];
        count_classes::<P, C>(&inputs, 3..words, &mut products, &mut counts);
        let mut expected = [0u64; C];
        let held_by = |word: usize| -> [u64; P] { core::array::from_fn(|p| inputs[p][word]) };
        for held in (3..words).map(held_by) {
            for bit in 0..64 {
                let class = (0..P).filter(|&p| held[p] >> bit & 1 == 1).fold(0, |c, p| c | 1 << p);
                expected[class] += 1;
            }
        }
        expected[0] = 0;
        assert_eq!(counts, expected, "{P} participants");
    }

    /// Both change searches plan what the key-by-key engine plans, on
    /// lookups whose owners change inside super-blocks at many places
    /// (several densities, weights and lengths, word 0 and the last word
    /// included), whichever kernel is active.
    #[test]
    fn both_change_searches_plan_the_same() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut changing_blocks = 0;
        for case in 0..60 {
            let words = [1, 7, 64, 100, 257, 1000, 4096][case % 7];
            let num_keys = words * 64 - case % 3;
            let lookups: Vec<Bitmap> = (0..3)
                .map(|p| {
                    let mut bits: Vec<u64> = (0..words)
                        .map(|_| if (case + p) % 4 == 0 { next() | next() } else { next() & next() })
                        .collect();
                    if num_keys % 64 != 0 {
                        bits[words - 1] &= (1 << (num_keys % 64)) - 1;
                    }
                    Bitmap::from_word_slice(num_keys, &bits).unwrap()
                })
                .collect();
            let inputs: Vec<&[u64]> = lookups.iter().map(Bitmap::as_words).collect();
            let indices = [0, 1, 2];
            let weights = [[1.0, 1.0, 1.0], [2.0, 1.0, 1.0], [0.3, 1.0, 2.5]][case % 3];
            let mut expected = LoadPlan::new(num_keys);
            super::super::general::plan(num_keys, &indices, &inputs, &weights, &mut expected);
            for search in [ChangeSearch::Guessing, ChangeSearch::Scan] {
                let mut planned = LoadPlan::new(0);
                planned.reset(num_keys);
                plan_with::<3, 8, 0, MAX_SUPER_BLOCKS>(num_keys, &indices, &inputs, &weights, &mut planned, search);
                assert_eq!(planned, expected, "case {case}, {search:?}");
            }
            // (Whether this case exercised a change inside a super-block:
            // the routing differs from one fixed table per super-block.)
            let words_per_block = MIN_SUPER_BLOCK_WORDS.max(words.div_ceil(MAX_SUPER_BLOCKS)).next_multiple_of(8);
            changing_blocks += usize::from(changes_inside_blocks(&expected, &inputs, words_per_block));
        }
        assert!(changing_blocks >= 10, "only {changing_blocks} cases change owners inside a super-block");
    }

    /// Whether some adapter's share of some class changes inside a
    /// super-block of `block_words` words (not at its first word).
    fn changes_inside_blocks(plan: &LoadPlan, inputs: &[&[u64]], block_words: usize) -> bool {
        let outputs: Vec<&[u64]> = (0..3).map(|a| plan.get(a).map_or(&[][..], Bitmap::as_words)).collect();
        let owner_of = |word: usize, bit: usize| -> Option<(usize, usize)> {
            let class = (0..3).filter(|&p| inputs[p][word] >> bit & 1 == 1).fold(0, |c, p| c | 1 << p);
            let owner = (0..3).find(|&a| outputs[a].get(word).is_some_and(|w| w >> bit & 1 == 1))?;
            Some((class, owner))
        };
        let mut last_owner = [usize::MAX; 8];
        for word in 0..inputs[0].len() {
            for bit in 0..64 {
                if let Some((class, owner)) = owner_of(word, bit) {
                    if last_owner[class] != usize::MAX && last_owner[class] != owner && word % block_words != 0 {
                        return true;
                    }
                    last_owner[class] = owner;
                }
            }
        }
        false
    }

    #[test]
    fn class_counts_match_a_key_by_key_count() {
        // Through the class kernel (up to 4), and through products that
        // span several chunks (5).
        check_class_counts::<3, 8>();
        check_class_counts::<4, 16>();
        check_class_counts::<5, 32>();
    }
}
