//! Finding the words of a super-block where a class changes owner (its
//! owner's quota ends): by guesses counted with [`kernel::class_counts`]
//! or by a scan, class by class.

use bitmap_core::kernel;

use super::owners::{Owners, class_mask};

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
/// [`kernel::MAX_CLASS_INPUTS`] participants: one per (class, participant).
pub(super) const MAX_CHANGES: usize = kernel::MAX_CLASS_INPUTS << (kernel::MAX_CLASS_INPUTS - 1);

/// A word where a class changes owner: (word, class, its owner and quota
/// left at the start of the word).
pub(super) type Change = (usize, usize, u8, u64);

/// How a super-block's words where owners change are found. Both
/// find the same words; which is faster depends on what a
/// [`kernel::class_counts`] call of a few hundred words costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChangeSearch {
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
    pub(super) fn for_active_kernel() -> ChangeSearch {
        if matches!(kernel::Kernel::active().kind(), kernel::KernelKind::Avx512 | kernel::KernelKind::Avx2) {
            ChangeSearch::Guessing
        } else {
            ChangeSearch::Scan
        }
    }
}

/// The keys of one class in a run of words: where to look for the words
/// where its owner changes.
pub(super) struct ClassRun {
    /// The words.
    pub(super) range: core::ops::Range<usize>,
    /// The class.
    pub(super) class: usize,
    /// The keys of `class` in `range`.
    pub(super) keys: u64,
}

/// The words found where a class changes owner.
pub(super) struct Found<'c> {
    /// The words found, in the order found.
    pub(super) changes: &'c mut [Change; MAX_CHANGES],
    /// How many.
    pub(super) count: &'c mut usize,
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
pub(super) fn find_changes_guessing<const P: usize, const C: usize>(
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
pub(super) fn find_changes_scan<const P: usize, const C: usize>(
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
