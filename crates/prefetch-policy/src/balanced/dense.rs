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
/// Harley–Seal counts). From 4 to 16 they time the same at 262,144 keys ×
/// 3; 32 is slower.
const MAX_SUPER_BLOCKS: usize = 16;

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
        for (block, record) in records.iter().take(blocks).enumerate() {
            let range = block * block_words..words.min((block + 1) * block_words);
            if (1..C).all(|class| record[class] <= owners.left[class]) {
                router.fixed(range.end, tables);
            } else {
                route_changing_block::<P, C>(&mut router, range, record, &owners, &flow, search);
            }
            let before = owners.owner;
            for (class, &keys) in record.iter().enumerate().skip(1) {
                owners.take(class, keys, &flow);
            }
            if owners.owner != before {
                tables = owners.tables();
            }
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

/// Where each class's keys go next: its current owner and that owner's
/// quota left.
struct Owners<const P: usize, const C: usize> {
    owner: [u8; C],
    left: [u64; C],
}

impl<const P: usize, const C: usize> Owners<P, C> {
    fn new(flow: &[[u64; P]; C]) -> Self {
        let mut owners = Owners { owner: [0; C], left: [0; C] };
        for class in 1..C {
            owners.owner[class] = class.trailing_zeros() as u8;
            owners.advance(class, 0, flow);
        }
        owners
    }

    /// Makes the owner of `class` its first participant from `from` on with
    /// a quota; leaves it alone (with nothing left) if there is none.
    fn advance(&mut self, class: usize, from: usize, flow: &[[u64; P]; C]) {
        if let Some(next) = (from..P).find(|&p| class >> p & 1 == 1 && flow[class][p] > 0) {
            self.owner[class] = next as u8;
            self.left[class] = flow[class][next];
        } else {
            self.left[class] = 0;
        }
    }

    /// Records that the next `keys` keys of `class` went out, owner after
    /// owner, each up to its quota.
    #[inline]
    fn take(&mut self, class: usize, mut keys: u64, flow: &[[u64; P]; C]) {
        while keys > 0 && self.left[class] > 0 {
            let taken = keys.min(self.left[class]);
            self.left[class] -= taken;
            keys -= taken;
            if self.left[class] == 0 {
                self.advance(class, usize::from(self.owner[class]) + 1, flow);
            }
        }
        debug_assert_eq!(keys, 0, "class {class} has more keys than quotas");
    }

    /// Hands out the keys of `class` in `mask` (one word), lowest first,
    /// into `out`: owner after owner, each up to its quota.
    #[inline]
    fn split_word(&mut self, class: usize, mut mask: u64, out: &mut [u64; P], flow: &[[u64; P]; C]) {
        while mask != 0 {
            let keys = u64::from(mask.count_ones());
            let owner = usize::from(self.owner[class]);
            let left = self.left[class];
            if keys <= left || left == 0 {
                // (`left == 0` only if the counts were wrong: keep the keys
                // on the last owner rather than lose them.)
                out[owner] |= mask;
                self.take(class, keys.min(left), flow);
                return;
            }
            let rest = clear_lowest_ones(mask, left);
            out[owner] |= mask ^ rest;
            self.take(class, left, flow);
            mask = rest;
        }
    }

    /// The split tables of the outputs (see [`kernel::split_by_tables`]):
    /// for participant `a`, entry `j` is set if `a` owns the class of `a`
    /// plus the other participants whose bits are set in `j` (the others
    /// in index order).
    fn tables(&self) -> [u8; P] {
        core::array::from_fn(|a| {
            (0..1usize << (P - 1)).fold(0u8, |table, others| {
                let below = others & ((1 << a) - 1);
                let class = below | (others >> a) << (a + 1) | 1 << a;
                table | u8::from(usize::from(self.owner[class]) == a) << others
            })
        })
    }

    /// Routes one word: the class masks of `held`, each to its owner, split
    /// where a quota ends.
    #[inline]
    fn route_word(&mut self, held: [u64; P], flow: &[[u64; P]; C]) -> [u64; P] {
        let masks = class_masks::<P, C>(held);
        let mut out = [0u64; P];
        for (class, &mask) in masks.iter().enumerate().skip(1) {
            self.split_word(class, mask, &mut out, flow);
        }
        out
    }
}

/// The keys of each class in one word: `masks[c]` has the keys held by
/// exactly the participants in `c`.
#[inline]
fn class_masks<const P: usize, const C: usize>(held: [u64; P]) -> [u64; C] {
    let mut masks = [0u64; C];
    masks[0] = u64::MAX;
    for (p, &bits) in held.iter().enumerate() {
        for class in 0..1 << p {
            masks[class | 1 << p] = masks[class] & bits;
            masks[class] &= !bits;
        }
    }
    masks
}

/// The keys of `class` in one word.
#[inline]
fn class_mask<const P: usize>(held: &[u64; P], class: usize) -> u64 {
    held.iter().enumerate().fold(u64::MAX, |mask, (p, &bits)| mask & if class >> p & 1 == 1 { bits } else { !bits })
}

/// The longest run [`ChangeSearch::Guessing`] searches word by word for the
/// words where owners change: one AVX-512 vector.
const LEAF_WORDS: usize = 8;

/// The words [`ChangeSearch::Guessing`] counts around the word where it
/// guesses a quota ends (a multiple of [`LEAF_WORDS`]).
const GUESS_WINDOW_WORDS: usize = 16;

/// Words counted at a time by [`ChangeSearch::Scan`].
const SCAN_WORDS: usize = 16;

/// The keys of `class` in the words `run`, without a branch per word (the
/// compiler vectorises it with SSE2).
#[inline]
fn class_keys<const P: usize>(inputs: &[&[u64]; P], run: core::ops::Range<usize>, class: usize) -> u64 {
    // The complement of every lookup not in `class`: XOR with all ones.
    let flips: [u64; P] = core::array::from_fn(|p| if class >> p & 1 == 1 { 0 } else { u64::MAX });
    let lookups: [&[u64]; P] = core::array::from_fn(|p| &inputs[p][run.clone()]);
    (0..run.len())
        .map(|word| {
            let mask = (0..P).fold(u64::MAX, |mask, p| mask & (lookups[p][word] ^ flips[p]));
            u64::from(mask.count_ones())
        })
        .sum()
}

/// The most owner changes in one super-block with up to
/// `MAX_KERNEL_PARTICIPANTS` participants: one per (class, participant).
const MAX_CHANGES: usize = MAX_KERNEL_PARTICIPANTS << (MAX_KERNEL_PARTICIPANTS - 1);

/// A word where a class changes owner: (word, class, its owner and quota
/// left at the start of the word).
type Change = (usize, usize, u8, u64);

/// Routes a super-block in which some classes change owner (`record`: its
/// class counts; `owners`: the state at its start, left unchanged).
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
) {
    let inputs = router.inputs;
    let held = |word: usize| -> [u64; P] { core::array::from_fn(|p| inputs[p][word]) };
    let mut changes: [Change; MAX_CHANGES] = [(0, 0, 0, 0); MAX_CHANGES];
    let mut count = 0;
    let mut state = Owners::<P, C> { owner: owners.owner, left: owners.left };
    let found = &mut Found { changes: &mut changes, count: &mut count };
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

/// How [`route_changing_block`] finds the words where owners change. Both
/// find the same words; which is faster depends on what a
/// [`kernel::class_counts`] call of a few hundred words costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChangeSearch {
    /// Count a window of [`GUESS_WINDOW_WORDS`] words around the word
    /// where the quota would end if the class's keys were spread evenly,
    /// and the shorter of the runs around it, by [`kernel::class_counts`]
    /// calls, down to the run of [`LEAF_WORDS`] words where a quota ends
    /// (see [`find_changes_guessing`]): 3 calls on 88 words on average for
    /// a super-block of 256 words with one change.
    Guessing,
    /// Count runs of [`SCAN_WORDS`] words from the start of the
    /// super-block up to the run where a quota ends, in this crate's own
    /// loop (see [`class_keys`]).
    Scan,
}

impl ChangeSearch {
    /// [`Guessing`](ChangeSearch::Guessing) on the AVX-512 and AVX2
    /// kernels, [`Scan`](ChangeSearch::Scan) on the others. The guesses
    /// count few words, in few calls: at 262,144 keys × 3 adapters,
    /// interleaved, they took the `balanced` plan from 2.55× to 2.44× the
    /// `default` plan on AVX-512 (against halving the super-block, 5
    /// `class_counts` calls on 248 words a change), and from 4.29× to
    /// 4.23× on AVX2 (against the scan; AVX2's `class_counts` of 8–128
    /// words takes 2–3× as long as AVX-512's, its Harley–Seal loop
    /// needing 64 words). On the portable kernel they measured the same as
    /// the scan.
    fn for_active_kernel() -> ChangeSearch {
        if matches!(kernel::Kernel::active().kind(), kernel::KernelKind::Avx512 | kernel::KernelKind::Avx2) {
            ChangeSearch::Guessing
        } else {
            ChangeSearch::Scan
        }
    }
}

/// The keys of one class in a run of words: where to look for the words
/// where its owner changes.
struct ClassRun {
    range: core::ops::Range<usize>,
    class: usize,
    /// The keys of `class` in `range`.
    keys: u64,
}

/// The words found where a class changes owner.
struct Found<'c> {
    changes: &'c mut [Change; MAX_CHANGES],
    count: &'c mut usize,
}

impl Found<'_> {
    /// Searches `run` word by word from `state` (moved to its end), adding
    /// the words where the owner of `class` changes.
    fn search_words<const P: usize, const C: usize>(
        &mut self,
        inputs: &[&[u64]; P],
        run: core::ops::Range<usize>,
        class: usize,
        state: &mut Owners<P, C>,
        flow: &[[u64; P]; C],
    ) {
        for word in run {
            let held: [u64; P] = core::array::from_fn(|p| inputs[p][word]);
            let keys = u64::from(class_mask(&held, class).count_ones());
            if keys >= state.left[class] && state.left[class] > 0 {
                // At most one change per (class, participant): never full.
                self.changes[*self.count] = (word, class, state.owner[class], state.left[class]);
                *self.count += 1;
            }
            state.take(class, keys, flow);
        }
    }
}

/// Adds to `found` the words of `run` where its class changes owner, from
/// its owner and quota left at the start (in `state`, which it moves to
/// the end of the run), by [guessing](ChangeSearch::Guessing).
///
/// The class changes owner in a run exactly when the run holds at least
/// the quota left to its owner. A run where it does not is passed over
/// whole; a run of at most [`LEAF_WORDS`] words is searched word by word.
/// A longer one is cut in three: a window of [`GUESS_WINDOW_WORDS`] words
/// around the word where the quota would end if the class's keys were
/// spread evenly over the run (they are, nearly, in a few hundred words
/// of a class of thousands of keys), and the words before and after it.
/// The window and the shorter of the other two are counted by one
/// [`kernel::class_counts`] call each (the third's keys are the rest), and
/// the three are searched in order the same way. A run of at most two
/// windows is halved instead. Where the guess is right, a change costs a
/// count of the window and of at most half the run, instead of halving
/// the run down to a leaf: 3 calls on 88 words on average in a 256-word
/// super-block, against 5 calls on 248.
fn find_changes_guessing<const P: usize, const C: usize>(
    inputs: &[&[u64]; P],
    run: ClassRun,
    state: &mut Owners<P, C>,
    flow: &[[u64; P]; C],
    found: &mut Found<'_>,
) {
    let ClassRun { range, class, keys } = run;
    let left = state.left[class];
    if keys < left || left == 0 {
        state.take(class, keys, flow);
        return;
    }
    if range.len() <= LEAF_WORDS {
        found.search_words(inputs, range, class, state, flow);
        return;
    }
    let count = |words: core::ops::Range<usize>| -> u64 {
        let run: [&[u64]; P] = core::array::from_fn(|p| &inputs[p][words.clone()]);
        let mut counts = [0u64; C];
        kernel::class_counts(&run, &mut counts);
        counts[class]
    };
    // Cuts at multiples of `LEAF_WORDS` from the start (super-blocks
    // start at one), so the counts' loads stay on the inputs' alignment.
    let len = range.len();
    if len <= 2 * GUESS_WINDOW_WORDS {
        let middle = range.start + (len / 2).next_multiple_of(LEAF_WORDS);
        let first = count(range.start..middle);
        let halves = [(range.start..middle, first), (middle..range.end, keys - first)];
        for (range, keys) in halves {
            find_changes_guessing(inputs, ClassRun { range, class, keys }, state, flow, found);
        }
        return;
    }
    // The quota's last key, `left` of `keys`, evenly spread: `0 < left <= keys`.
    let guess = (u128::from(left) * len as u128 / u128::from(keys)) as usize;
    let window_start = guess.saturating_sub(GUESS_WINDOW_WORDS / 2).next_multiple_of(LEAF_WORDS);
    let window_start = range.start + window_start.min(len - GUESS_WINDOW_WORDS);
    let window_end = window_start + GUESS_WINDOW_WORDS;
    let window = count(window_start..window_end);
    let (before, after) = if window_start - range.start <= range.end - window_end {
        let before = count(range.start..window_start);
        (before, keys - before - window)
    } else {
        let after = count(window_end..range.end);
        (keys - after - window, after)
    };
    let parts =
        [(range.start..window_start, before), (window_start..window_end, window), (window_end..range.end, after)];
    for (range, keys) in parts {
        find_changes_guessing(inputs, ClassRun { range, class, keys }, state, flow, found);
    }
}

/// [`find_changes_guessing`]'s words by a [scan](ChangeSearch::Scan): runs
/// of [`SCAN_WORDS`] words from the start, up to the last change, each
/// counted in one loop without a branch per word, and word by word only
/// where a quota ends.
fn find_changes_scan<const P: usize, const C: usize>(
    inputs: &[&[u64]; P],
    run: ClassRun,
    state: &mut Owners<P, C>,
    flow: &[[u64; P]; C],
    found: &mut Found<'_>,
) {
    let ClassRun { range, class, keys: mut remaining } = run;
    for start in range.clone().step_by(SCAN_WORDS) {
        if remaining <= state.left[class] {
            break;
        }
        let run = start..range.end.min(start + SCAN_WORDS);
        let keys = class_keys(inputs, run.clone(), class);
        remaining -= keys;
        if keys < state.left[class] {
            state.take(class, keys, flow);
        } else {
            found.search_words(inputs, run, class, state, flow);
        }
    }
    // (The rest fits in the quota left.)
    state.take(class, remaining, flow);
}

/// `bits` without its `n` lowest set bits.
#[inline]
fn clear_lowest_ones(mut bits: u64, n: u64) -> u64 {
    for _ in 0..n {
        bits &= bits.wrapping_sub(1);
    }
    bits
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

    #[test]
    fn clearing_lowest_ones() {
        assert_eq!(clear_lowest_ones(0b1011_0110, 0), 0b1011_0110);
        assert_eq!(clear_lowest_ones(0b1011_0110, 2), 0b1011_0000);
        assert_eq!(clear_lowest_ones(u64::MAX, 63), 1 << 63);
    }

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
                plan_with::<3, 8, 0, 16>(num_keys, &indices, &inputs, &weights, &mut planned, search);
                assert_eq!(planned, expected, "case {case}, {search:?}");
            }
            // (Whether this case exercised a change inside a super-block:
            // the routing differs from one fixed table per super-block.)
            let words_per_block = MIN_SUPER_BLOCK_WORDS.max(words.div_ceil(16)).next_multiple_of(8);
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
