//! The first-wins planning engine behind the `default` and `retain`
//! policies: each key goes to the lowest-indexed listed adapter whose lookup
//! holds it.
//!
//! # One pass
//!
//! The seed computes the plan as a sequence of whole-bitmap operations (an
//! OR of all lookups, then per adapter an AND, a NOT, an AND and a popcount),
//! each allocating a bitmap and each streaming every word through memory
//! again. Here each word is read once and each output word written once:
//! for word `w`, over the participating adapters in index order,
//! `out[a][w] = lookup[a][w] & !claimed; claimed |= lookup[a][w]` — the
//! dispatched SIMD kernel [`bitmap_core::kernel::first_wins`]. A key is
//! `claimed` once an earlier adapter holds it, so each goes to the first
//! holder, and lookups of adapters that are not listed never participate.
//!
//! # No allocation, no zeroing
//!
//! The lookups handed to the kernel are gathered in stack arrays (up to
//! [`MAX_INLINE_ADAPTERS`] adapters) and the output bitmaps come from the
//! [`LoadPlan`]'s pool, so planning into a warmed plan does not touch the
//! heap. Sequentially, the outputs are filled by
//! [`Bitmap::first_wins_split`], which writes each word once without
//! clearing the buffer first, so a fresh plan costs its allocations and no
//! `memset` (a quarter of a 262,144-key plan's time before). The parallel
//! path does allocate (one small list per chunk), which is noise next to
//! the megabytes it splits.
//!
//! # Parallel
//!
//! Above [`PARALLEL_THRESHOLD_WORDS`] words per bitmap the words are cut
//! into word-aligned chunks planned on rayon's pool. The first-wins rule is
//! per word, so chunks are independent and the result is identical to the
//! sequential plan.

use bitmap_core::{Bitmap, WordsMut, kernel};
use rayon::prelude::*;

use crate::adapter::{AdapterDescriptor, sorted_indices};
use crate::error::PlanError;
use crate::lookup::LookupResults;
use crate::plan::{LoadPlan, check_lookup_lengths};

/// How many listed adapters planning handles with scratch space on the
/// stack. Controllers have a handful of L2 adapters; with more than this,
/// [`plan_first_wins_into`] keeps its short per-adapter lists in `Vec`s (a
/// few small allocations per call) and is otherwise the same.
pub const MAX_INLINE_ADAPTERS: usize = 16;

/// The bitmap size, in `u64` words, from which [`Parallelism::Auto`] plans
/// on rayon's pool: 2¹⁷ words, 8,388,608 keys.
///
/// Below it, `Auto` does not touch rayon at all (not even to ask for the
/// thread count), so small plans pay nothing for the option. Above it, the
/// work per thread (tens of microseconds and more) dwarfs waking the pool
/// (a few microseconds on an idle machine). Where the crossover lies
/// depends on the machine's memory bandwidth per core and on how busy it
/// is: `cargo run --release -p prefetch-policy --example parallel_threshold`
/// measures it on a given machine.
///
/// Chosen from this project's 2-core machine, 3 adapters: at 4 Mi keys
/// (2¹⁶ words) the parallel plan won on an idle machine (31 µs against
/// 39 µs) but lost whenever anything else ran (54 µs against 38 µs in a
/// benchmark run at load 1.3); at 16 Mi keys it won either way (1.45×).
/// "Never slower than sequential" decides: the threshold sits between.
pub const PARALLEL_THRESHOLD_WORDS: usize = 1 << 17;

/// Chunks per pool thread: a few per thread, so a thread slowed by
/// something else is helped by the others, while each chunk stays large.
const CHUNKS_PER_THREAD: usize = 4;

/// Chunk boundaries fall on multiples of this many words (one 64-byte cache
/// line), so two threads rarely write the same line.
const CHUNK_ALIGN_WORDS: usize = 8;

/// Whether planning may split its work across rayon's thread pool.
///
/// ```
/// use prefetch_policy::{DefaultPolicy, Parallelism};
/// let policy = DefaultPolicy::new().with_parallelism(Parallelism::Sequential);
/// assert_eq!(policy.parallelism(), Parallelism::Sequential);
/// assert_eq!(Parallelism::default(), Parallelism::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parallelism {
    /// Parallel from [`PARALLEL_THRESHOLD_WORDS`] words per bitmap when the
    /// pool has more than one thread; sequential below.
    #[default]
    Auto,
    /// Always on the calling thread.
    Sequential,
    /// On rayon's pool whenever the words split into at least two chunks
    /// (of 8 words or more), however small the input: for tests and for
    /// measuring.
    Parallel,
}

/// Plans `num_keys` keys first-wins into `plan`: each key goes to the
/// lowest-indexed adapter of `adapters` (in whatever order they are listed)
/// whose lookup entry holds it. Adapters without a lookup entry, and lookup
/// entries of adapters not listed, get nothing; adapters left with nothing
/// are not in the plan.
///
/// This is the engine of [`DefaultPolicy`](crate::DefaultPolicy); call it
/// directly to choose the [`Parallelism`] per call.
///
/// Allocates nothing when run sequentially, `adapters` has at most
/// [`MAX_INLINE_ADAPTERS`] entries, and `plan` holds enough spare bitmaps
/// with enough capacity (see [`LoadPlan::with_capacity`]).
///
/// # Errors
///
/// [`PlanError::LookupLengthMismatch`] if a lookup bitmap (of any adapter,
/// listed or not) does not have `num_keys` bits, else
/// [`PlanError::DuplicateAdapterIndex`] if two descriptors share an index.
/// On error `plan` is left empty, covering `num_keys` keys.
///
/// ```
/// use prefetch_policy::{plan_first_wins_into, AdapterDescriptor, LoadPlan, LookupResults, Parallelism};
///
/// let lookup = LookupResults::from([(0, "1001".parse()?), (1, "1110".parse()?)]);
/// let adapters = [AdapterDescriptor::new(1, "disk"), AdapterDescriptor::new(0, "dram")];
/// let mut plan = LoadPlan::new(4);
/// plan_first_wins_into(4, &lookup, &adapters, Parallelism::Sequential, &mut plan)?;
/// assert_eq!(plan.to_index_lists(), [(0, vec![0, 3]), (1, vec![1, 2])]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_first_wins_into(
    num_keys: usize,
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
    parallelism: Parallelism,
    plan: &mut LoadPlan,
) -> Result<(), PlanError> {
    plan.reset(num_keys);
    if parallel_chunk_words(num_keys.div_ceil(64), parallelism).is_none() && plan_in_order(lookup, adapters, plan) {
        return Ok(());
    }
    check_lookup_lengths(num_keys, lookup)?;
    // Scratch sized to the adapter count: zeroing 16-slot arrays costs more
    // than a 1,024-key plan's kernel call, and controllers have a handful
    // of adapters.
    match adapters.len() {
        0..=4 => plan_inline::<4>(lookup, adapters, parallelism, plan),
        5..=8 => plan_inline::<8>(lookup, adapters, parallelism, plan),
        9..=MAX_INLINE_ADAPTERS => plan_inline::<MAX_INLINE_ADAPTERS>(lookup, adapters, parallelism, plan),
        count => {
            plan_with_scratch(lookup, adapters, &mut vec![0; count], &mut vec![&NO_LOOKUP; count], parallelism, plan)
        }
    }
}

/// Fills the scratch arrays' unused slots.
static NO_LOOKUP: Bitmap = Bitmap::empty();

/// [`plan_with_scratch`] with its scratch in `N`-slot stack arrays
/// (`adapters.len() <= N`).
#[inline]
fn plan_inline<const N: usize>(
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
    parallelism: Parallelism,
    plan: &mut LoadPlan,
) -> Result<(), PlanError> {
    let count = adapters.len();
    let mut listed = [0; N];
    let mut sources = [&NO_LOOKUP; N];
    plan_with_scratch(lookup, adapters, &mut listed[..count], &mut sources[..count], parallelism, plan)
}

/// The engine after the length check, with scratch space for one index and
/// one lookup bitmap per listed adapter.
#[inline]
fn plan_with_scratch<'l>(
    lookup: &'l LookupResults,
    adapters: &[AdapterDescriptor],
    listed: &mut [usize],
    sources: &mut [&'l Bitmap],
    parallelism: Parallelism,
    plan: &mut LoadPlan,
) -> Result<(), PlanError> {
    sorted_indices(adapters, listed)?;
    let participants = gather_participants_as(lookup, listed, sources, |held| held);
    if participants == 0 {
        return Ok(());
    }
    let (listed, sources) = (&listed[..participants], &sources[..participants]);
    let num_keys = plan.num_keys();
    match parallel_chunk_words(num_keys.div_ceil(64), parallelism) {
        None => {
            // Each output's words are written once, never zeroed first: for a
            // fresh plan that is most of what its allocation would cost.
            let outputs = plan.map_mut().prepare_slots(listed);
            Bitmap::first_wins_split(sources, outputs.iter_mut().map(|(_, bitmap)| bitmap))
                .expect("lookup lengths are checked above");
        }
        Some(chunk_words) => {
            let outputs = plan.map_mut().prepare_overwrite(listed, num_keys);
            first_wins_parallel(sources, outputs, chunk_words);
        }
    }
    plan.remove_empty();
    Ok(())
}

/// The plan of the common shape, sequentially: `adapters` lists exactly
/// the lookup's adapters, in ascending index order, 1 to 4 of them (a
/// controller's handful), and every lookup has `num_keys` bits.
/// Returns `false`, having done nothing, for any other call, which the
/// general path plans (and reports errors for).
///
/// This is the plan at a request's size, where the fixed cost is the time
/// (1,024 keys × 3 adapters: 54 ns, 4.8× a copy of the inputs, when it
/// went through the general path). The lookup's entries are strictly
/// ascending, so adapters that match them one for one are too, with no
/// duplicate to look for: no sort and no merge. With the count a constant,
/// the sources and outputs are arrays of exactly that many, and
/// [`Bitmap::first_wins_split_array`] writes a reused plan's outputs in
/// place.
#[inline]
fn plan_in_order(lookup: &LookupResults, adapters: &[AdapterDescriptor], plan: &mut LoadPlan) -> bool {
    match adapters.len() {
        1 => plan_in_order_exact::<1>(lookup, adapters, plan),
        2 => plan_in_order_exact::<2>(lookup, adapters, plan),
        3 => plan_in_order_exact::<3>(lookup, adapters, plan),
        4 => plan_in_order_exact::<4>(lookup, adapters, plan),
        _ => false,
    }
}

/// [`plan_in_order`] with `M` adapters.
#[inline]
fn plan_in_order_exact<const M: usize>(
    lookup: &LookupResults,
    adapters: &[AdapterDescriptor],
    plan: &mut LoadPlan,
) -> bool {
    let num_keys = plan.num_keys();
    let entries = lookup.entries();
    let (Some(adapters), Ok(entries)) = (adapters.first_chunk::<M>(), <&[_; M]>::try_from(entries)) else {
        return false;
    };
    let (mut sources, mut indices) = ([&NO_LOOKUP; M], [0; M]);
    for (at, (adapter, (index, held))) in adapters.iter().zip(entries).enumerate() {
        if adapter.index != *index || held.len() != num_keys {
            return false;
        }
        (sources[at], indices[at]) = (held, *index);
    }
    let outputs = plan.map_mut().prepare_slots(&indices);
    let outputs = outputs.first_chunk_mut::<M>().expect("prepare_slots gives one slot per index");
    Bitmap::first_wins_split_array(&sources, outputs.each_mut().map(|(_, bitmap)| bitmap))
        .expect("lookup lengths are checked above");
    plan.remove_empty();
    true
}

/// Keeps the listed adapters (`listed`, ascending) that have a lookup entry
/// — the participants — at the front of `listed`, with their lookup words
/// at the front of `inputs`, and returns how many there are.
pub(crate) fn gather_participants<'l>(
    lookup: &'l LookupResults,
    listed: &mut [usize],
    inputs: &mut [&'l [u64]],
) -> usize {
    gather_participants_as(lookup, listed, inputs, Bitmap::as_words)
}

/// [`gather_participants`], recording `view(lookup bitmap)` for each
/// participant. Both lists are sorted: one merge, no allocation.
fn gather_participants_as<'l, T>(
    lookup: &'l LookupResults,
    listed: &mut [usize],
    views: &mut [T],
    view: impl Fn(&'l Bitmap) -> T,
) -> usize {
    let entries = lookup.entries();
    let (mut participants, mut next_entry) = (0, 0);
    for at in 0..listed.len() {
        let adapter = listed[at];
        while next_entry < entries.len() && entries[next_entry].0 < adapter {
            next_entry += 1;
        }
        if let Some((index, held)) = entries.get(next_entry)
            && *index == adapter
        {
            listed[participants] = adapter;
            views[participants] = view(held);
            participants += 1;
            next_entry += 1;
        }
    }
    participants
}

/// The chunk size for planning `words` words per bitmap in parallel, or
/// `None` to plan sequentially.
fn parallel_chunk_words(words: usize, parallelism: Parallelism) -> Option<usize> {
    let threads = match parallelism {
        Parallelism::Sequential => return None,
        // Checked before asking rayon anything: the first question would
        // start its global pool.
        Parallelism::Auto if words < PARALLEL_THRESHOLD_WORDS => return None,
        Parallelism::Auto => match rayon::current_num_threads() {
            0 | 1 => return None,
            threads => threads,
        },
        Parallelism::Parallel => rayon::current_num_threads().max(1),
    };
    let chunk = words.div_ceil(threads * CHUNKS_PER_THREAD).next_multiple_of(CHUNK_ALIGN_WORDS).max(CHUNK_ALIGN_WORDS);
    (words > chunk).then_some(chunk)
}

/// One parallel chunk: a piece of every input and of every output.
type ChunkWork<'a> = (Vec<&'a [u64]>, Vec<&'a mut [u64]>);

/// Splits every bitmap into chunks of `chunk_words` words (the last may be
/// shorter) and plans the chunks on rayon's pool. Each chunk writes a
/// disjoint part of every output (sized to the sources' length).
fn first_wins_parallel(sources: &[&Bitmap], outputs: &mut [(usize, Bitmap)], chunk_words: usize) {
    // The guards clear each output's tail bits when dropped; the kernel never
    // sets them anyway (the sources' tails are clear).
    let mut guards: Vec<WordsMut<'_>> = outputs.iter_mut().map(|(_, bitmap)| bitmap.words_mut()).collect();
    let words = sources.first().map_or(0, |source| source.num_words());
    let chunks = words.div_ceil(chunk_words);
    // Transpose: chunk c gets the c-th piece of every input and output.
    let mut work: Vec<ChunkWork<'_>> =
        (0..chunks).map(|_| (Vec::with_capacity(sources.len()), Vec::with_capacity(guards.len()))).collect();
    for source in sources {
        for ((chunk_inputs, _), piece) in work.iter_mut().zip(source.as_words().chunks(chunk_words)) {
            chunk_inputs.push(piece);
        }
    }
    for guard in &mut guards {
        for ((_, chunk_outputs), piece) in work.iter_mut().zip(guard.chunks_mut(chunk_words)) {
            chunk_outputs.push(piece);
        }
    }
    work.into_par_iter().for_each(|(chunk_inputs, mut chunk_outputs)| {
        kernel::first_wins(&chunk_inputs, &mut chunk_outputs);
    });
}

#[cfg(test)]
mod tests {
    use bitmap_core::Bitmap;

    use super::*;

    fn adapters(indices: &[usize]) -> Vec<AdapterDescriptor> {
        indices.iter().map(|&i| AdapterDescriptor::new(i, format!("a{i}"))).collect()
    }

    /// A deterministic pseudo-random bitmap (xorshift), density about 1/2.
    fn noise(len: usize, seed: u64) -> Bitmap {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state & 1 == 1
            })
            .collect()
    }

    #[test]
    fn chunking_rules() {
        assert_eq!(parallel_chunk_words(1 << 20, Parallelism::Sequential), None);
        assert_eq!(parallel_chunk_words(PARALLEL_THRESHOLD_WORDS - 1, Parallelism::Auto), None);
        // Forced: any size with at least two aligned chunks.
        assert_eq!(parallel_chunk_words(CHUNK_ALIGN_WORDS, Parallelism::Parallel), None);
        let chunk = parallel_chunk_words(CHUNK_ALIGN_WORDS + 1, Parallelism::Parallel);
        assert_eq!(chunk, Some(CHUNK_ALIGN_WORDS));
        for words in [17, 1000, 1 << 20] {
            let chunk = parallel_chunk_words(words, Parallelism::Parallel).unwrap();
            assert_eq!(chunk % CHUNK_ALIGN_WORDS, 0);
            assert!(chunk < words);
        }
    }

    #[test]
    fn parallel_equals_sequential_on_large_inputs() {
        // Big enough for `Auto` to split, with a ragged tail.
        let num_keys = PARALLEL_THRESHOLD_WORDS * 64 + 77;
        let lookup: LookupResults = (0..3).map(|a| (a, noise(num_keys, a as u64 + 1))).collect();
        let listed = adapters(&[2, 0, 1]);
        let mut sequential = LoadPlan::new(0);
        plan_first_wins_into(num_keys, &lookup, &listed, Parallelism::Sequential, &mut sequential).unwrap();
        for parallelism in [Parallelism::Auto, Parallelism::Parallel] {
            let mut parallel = LoadPlan::new(0);
            plan_first_wins_into(num_keys, &lookup, &listed, parallelism, &mut parallel).unwrap();
            assert_eq!(parallel, sequential, "{parallelism:?}");
        }
        assert_eq!(
            sequential.planned_count(),
            lookup.iter().fold(Bitmap::new(num_keys), |acc, (_, b)| acc | b).popcount()
        );
    }

    #[test]
    fn errors_leave_an_empty_plan() {
        let lookup = LookupResults::from([(0, Bitmap::new(3))]);
        let mut plan = LoadPlan::from_entries(3, [(0, "1".repeat(3).parse().unwrap())]).unwrap();
        let error = plan_first_wins_into(4, &lookup, &adapters(&[0]), Parallelism::Auto, &mut plan);
        assert_eq!(error, Err(PlanError::LookupLengthMismatch { adapter: 0, expected: 4, actual: 3 }));
        assert!(plan.is_empty());
        assert_eq!(plan.num_keys(), 4);
        let error = plan_first_wins_into(3, &lookup, &adapters(&[0, 0]), Parallelism::Auto, &mut plan);
        assert_eq!(error, Err(PlanError::DuplicateAdapterIndex { index: 0 }));
    }

    #[test]
    fn reuses_a_plan_across_shapes() {
        let mut plan = LoadPlan::new(0);
        for (num_keys, count) in [(1000, 3), (10, 5), (5000, 2), (0, 1), (130, 4)] {
            let lookup: LookupResults = (0..count).map(|a| (a, noise(num_keys, (num_keys + a) as u64))).collect();
            let listed = adapters(&(0..count).collect::<Vec<_>>());
            plan_first_wins_into(num_keys, &lookup, &listed, Parallelism::Sequential, &mut plan).unwrap();
            let fresh = crate::reference::naive_first_wins_plan(num_keys, &lookup, &listed).unwrap();
            assert_eq!(plan, fresh, "{num_keys} keys, {count} adapters");
        }
    }

    #[test]
    fn the_in_order_path_agrees_with_the_general_one() {
        // One plan reused across sizes (growing, shrinking, within and past
        // its capacity) and adapter counts 1 to 4: listed in index order the
        // calls take `plan_in_order`, listed in reverse the general path.
        // An adapter whose keys are all claimed by earlier ones, and one with
        // no keys, leave the plan.
        let (mut in_order, mut reversed) = (LoadPlan::new(0), LoadPlan::new(0));
        for (num_keys, count) in [(1024, 3), (24, 3), (24, 1), (1100, 4), (64, 2), (0, 2), (700, 4), (5000, 3)] {
            let mut lookup: LookupResults =
                (0..count).map(|a| (a, noise(num_keys, (num_keys * 7 + a) as u64))).collect();
            if count >= 2 {
                let first = lookup.get(0).cloned().unwrap_or_default();
                lookup.insert(count - 1, first);
            }
            if count >= 3 {
                lookup.insert(1, Bitmap::new(num_keys));
            }
            let listed: Vec<usize> = (0..count).collect();
            let expected = crate::reference::naive_first_wins_plan(num_keys, &lookup, &adapters(&listed)).unwrap();
            plan_first_wins_into(num_keys, &lookup, &adapters(&listed), Parallelism::Sequential, &mut in_order)
                .unwrap();
            let backwards: Vec<usize> = listed.iter().rev().copied().collect();
            plan_first_wins_into(num_keys, &lookup, &adapters(&backwards), Parallelism::Sequential, &mut reversed)
                .unwrap();
            assert_eq!(in_order, expected, "{num_keys} keys, {count} adapters in order");
            assert_eq!(reversed, expected, "{num_keys} keys, {count} adapters reversed");
        }
        // A lookup that does not match the listing one for one goes the
        // general way: an adapter without a lookup, and a lookup's bitmap of
        // the wrong length.
        let lookup = LookupResults::from([(0, noise(100, 1)), (2, noise(100, 2))]);
        plan_first_wins_into(100, &lookup, &adapters(&[0, 1, 2]), Parallelism::Sequential, &mut in_order).unwrap();
        assert_eq!(in_order, crate::reference::naive_first_wins_plan(100, &lookup, &adapters(&[0, 1, 2])).unwrap());
        let error = plan_first_wins_into(101, &lookup, &adapters(&[0, 2]), Parallelism::Sequential, &mut in_order);
        assert_eq!(error, Err(PlanError::LookupLengthMismatch { adapter: 0, expected: 101, actual: 100 }));
    }

    #[test]
    fn more_adapters_than_fit_inline() {
        let count = MAX_INLINE_ADAPTERS + 5;
        let num_keys = 300;
        let lookup: LookupResults = (0..count).map(|a| (a, noise(num_keys, a as u64 * 7 + 3))).collect();
        let listed = adapters(&(0..count).rev().collect::<Vec<_>>());
        for parallelism in [Parallelism::Sequential, Parallelism::Parallel] {
            let mut plan = LoadPlan::new(0);
            plan_first_wins_into(num_keys, &lookup, &listed, parallelism, &mut plan).unwrap();
            assert_eq!(plan, crate::reference::naive_first_wins_plan(num_keys, &lookup, &listed).unwrap());
        }
    }
}
