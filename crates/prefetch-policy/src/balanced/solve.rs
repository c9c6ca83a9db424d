//! The balancing problem over key classes, solved exactly: how many keys of
//! each class each adapter loads.
//!
//! # The problem
//!
//! A *class* is a set of participants (listed adapters with a lookup) and
//! the number of keys held by exactly those participants. Each class's keys
//! are shared out among its participants; participant `a` ends with
//! `load[a]` keys. Minimise `T = max_a load[a] / weight[a]`.
//!
//! # The algorithm
//!
//! For a bound `T`, participant `a` may take `cap[a] = ⌊T·weight[a]⌋` keys,
//! and a plan within the bound exists exactly when the flow network
//! *source → class (its key count) → its participants → sink (`cap`)*
//! carries every key. Integral capacities give an integral flow: the
//! quotas.
//!
//! `T` starts at the lower bound `keys / Σ weights` and only rises, and
//! only when it must: classes are placed one at a time (fewest holders
//! first, then by holder set), each greedily on its participants in index
//! order, then by augmenting paths (breadth-first, lowest index first) that
//! move earlier classes' keys aside. When a class cannot be placed, the
//! participants the search reached are full and take only the classes the
//! search reached, so any bound must give those participants room for the
//! keys left: `T` rises to the smallest value that does (the next
//! *event* `k / weight[a]` of one of them), and placement goes on. The
//! final `T` is the smallest bound that carries every key, so the plan is
//! optimal; each rise is exact, so `T` never overshoots.
//!
//! Floating point: `cap[a]` is `⌊fl(T·weight[a])⌋`, which is monotone in
//! `T`, and every event is the smallest `f64` at which a capacity reaches
//! its next integer, so the search is exact in floating point; it can
//! differ from exact arithmetic only where `T·weight[a]` is within an ulp of
//! an integer (a relative error near 2⁻⁵²).
//!
//! Everything is deterministic: the same classes, order and weights give
//! the same quotas.

/// The classes of a balancing problem, indexed `0..len()`; a class with no
/// keys is allowed and ignored.
pub(super) trait Classes {
    /// The number of class slots.
    fn len(&self) -> usize;
    /// The number of keys in `class`.
    fn keys(&self, class: usize) -> u64;
    /// Whether `participant` holds the keys of `class`.
    fn holds(&self, class: usize, participant: usize) -> bool;
}

/// A marker for "not reached" in the search's parent arrays.
const NONE: usize = usize::MAX;

/// Working memory for [`solve`], borrowed so that the dense path keeps it
/// on the stack and the general path in vectors.
pub(super) struct Scratch<'s> {
    /// `flow[class * participants + participant]`: the quotas, the result.
    pub(super) flow: &'s mut [u64],
    /// Per participant: keys placed.
    pub(super) load: &'s mut [u64],
    /// Per participant: keys allowed at the current bound.
    pub(super) cap: &'s mut [u64],
    /// Per participant: the class the search reached it from.
    pub(super) participant_parent: &'s mut [usize],
    /// Per class: the participant the search reached it from.
    pub(super) class_parent: &'s mut [usize],
    /// The search's queue of classes (one slot per class).
    pub(super) queue: &'s mut [usize],
}

/// Solves the problem: fills `scratch.flow` with the quotas and
/// `scratch.load` with each participant's total, placing classes in the
/// order `order` lists them (every class with keys must be listed once).
/// Returns the bound `T` reached, at least the largest weighted load.
pub(super) fn solve(classes: &impl Classes, order: &[usize], weights: &[f64], scratch: Scratch<'_>) -> f64 {
    let Scratch { flow, load, cap, participant_parent, class_parent, queue } = scratch;
    let participants = weights.len();
    debug_assert_eq!(flow.len(), classes.len() * participants);
    flow.fill(0);
    load.fill(0);
    // The search treats a participant with a parent as already reached:
    // stale values from the caller would make it give up at once and raise
    // the bound past the optimum.
    participant_parent.fill(NONE);
    class_parent.fill(NONE);
    let total_keys: u64 = order.iter().map(|&class| classes.keys(class)).sum();
    let total_weight: f64 = weights.iter().sum();
    let mut bound = lowest_bound(total_keys, total_weight);
    set_caps(bound, weights, cap);

    for &class in order {
        let mut left = classes.keys(class);
        while left > 0 {
            // Greedily, lowest index first.
            for participant in (0..participants).filter(|&p| classes.holds(class, p)) {
                let room = cap[participant] - load[participant];
                let take = room.min(left);
                flow[class * participants + participant] += take;
                load[participant] += take;
                left -= take;
            }
            if left == 0 {
                break;
            }
            let searched = Search { classes, participants, flow, load, cap, participant_parent, class_parent, queue };
            match searched.find_room(class) {
                Some(end) => {
                    left -= augment(
                        classes,
                        participants,
                        class,
                        end,
                        left,
                        flow,
                        load,
                        cap,
                        participant_parent,
                        class_parent,
                    )
                }
                None => {
                    // Every participant reached is full: the bound must
                    // give them room for the `left` keys.
                    let mut need = left;
                    for participant in (0..participants).filter(|&p| participant_parent[p] != NONE) {
                        need = need.saturating_add(cap[participant]);
                    }
                    bound = raise_bound(bound, weights, participant_parent, need);
                    set_caps(bound, weights, cap);
                }
            }
            // Reset only what the search touched.
            participant_parent.fill(NONE);
            for &reached in queue.iter().take_while(|&&c| c != NONE) {
                class_parent[reached] = NONE;
            }
            class_parent[class] = NONE;
        }
    }
    bound
}

/// The search for room for one more key of a class: the borrowed problem.
struct Search<'a, 's, C> {
    classes: &'a C,
    participants: usize,
    flow: &'a [u64],
    load: &'a [u64],
    cap: &'a [u64],
    participant_parent: &'a mut [usize],
    class_parent: &'a mut [usize],
    queue: &'s mut [usize],
}

impl<C: Classes> Search<'_, '_, C> {
    /// Breadth-first from `start` through participants and the classes
    /// with keys on them, lowest indices first: the first participant with
    /// room, or `None` once every reachable participant is full (those are
    /// the ones with a parent). `queue` lists the classes reached, ended by
    /// [`NONE`] if not full.
    fn find_room(self, start: usize) -> Option<usize> {
        let Search { classes, participants, flow, load, cap, participant_parent, class_parent, queue } = self;
        let mut head = 0;
        let mut tail = 0;
        // The start class is the root: its parent is any non-NONE value.
        class_parent[start] = 0;
        let mut current = Some(start);
        let mut found = None;
        'search: while let Some(class) = current {
            for participant in 0..participants {
                if !classes.holds(class, participant) || participant_parent[participant] != NONE {
                    continue;
                }
                participant_parent[participant] = class;
                if load[participant] < cap[participant] {
                    found = Some(participant);
                    break 'search;
                }
                for other in 0..classes.len() {
                    if class_parent[other] == NONE && flow[other * participants + participant] > 0 {
                        class_parent[other] = participant;
                        queue[tail] = other;
                        tail += 1;
                    }
                }
            }
            current = (head < tail).then(|| {
                head += 1;
                queue[head - 1]
            });
        }
        if tail < queue.len() {
            queue[tail] = NONE;
        }
        found
    }
}

/// Pushes as many of `left` keys of `start` as the path the search found
/// to `end` carries; returns how many.
#[allow(clippy::too_many_arguments)]
fn augment(
    classes: &impl Classes,
    participants: usize,
    start: usize,
    end: usize,
    left: u64,
    flow: &mut [u64],
    load: &mut [u64],
    cap: &[u64],
    participant_parent: &[usize],
    class_parent: &[usize],
) -> u64 {
    debug_assert!(classes.holds(participant_parent[end], end));
    // The bottleneck: the keys left, the room at the end, and the keys each
    // class on the way has on the participant it gives up.
    let mut amount = left.min(cap[end] - load[end]);
    let mut participant = end;
    let mut class = participant_parent[participant];
    while class != start {
        let given_up = class_parent[class];
        amount = amount.min(flow[class * participants + given_up]);
        participant = given_up;
        class = participant_parent[participant];
    }
    // Move the keys along the path.
    let mut participant = end;
    let mut class = participant_parent[participant];
    loop {
        flow[class * participants + participant] += amount;
        if class == start {
            break;
        }
        let given_up = class_parent[class];
        flow[class * participants + given_up] -= amount;
        participant = given_up;
        class = participant_parent[participant];
    }
    load[end] += amount;
    amount
}

/// `keys / total_weight`, the bound every plan needs (all keys within the
/// total capacity), rounded down so it is never above the optimum.
fn lowest_bound(keys: u64, total_weight: f64) -> f64 {
    let bound = keys as f64 / total_weight;
    if bound.is_finite() { bound.next_down().max(0.0) } else { f64::MAX }
}

/// `⌊bound·weight⌋` for each participant (saturating).
fn set_caps(bound: f64, weights: &[f64], cap: &mut [u64]) {
    for (cap, &weight) in cap.iter_mut().zip(weights) {
        *cap = capacity(bound, weight);
    }
}

/// `⌊bound·weight⌋`, saturating at `u64::MAX` (as `as` does).
///
/// `as` alone: it rounds toward zero, which is the floor wherever the
/// result is not 0 or saturated (a product below 0 or NaN gives 0 either
/// way), and `f64::floor` is a call into libm on baseline x86-64 (no
/// SSE4.1 `roundsd`), a few per cent of a `balanced` plan at 262,144 × 3.
#[inline]
fn capacity(bound: f64, weight: f64) -> u64 {
    (bound * weight) as u64
}

/// The smallest bound, not below `bound`, at which the participants with a
/// parent in `reached` have `need` keys of room together.
fn raise_bound(bound: f64, weights: &[f64], reached: &[usize], need: u64) -> f64 {
    let members = || (0..weights.len()).filter(|&p| reached[p] != NONE);
    let room = |bound: f64| members().fold(0u64, |sum, p| sum.saturating_add(capacity(bound, weights[p])));
    // Room is at most bound·Σw: start there, then step from event to event.
    let weight: f64 = members().map(|p| weights[p]).sum();
    let mut bound = bound.max(need as f64 / weight);
    if !bound.is_finite() {
        return f64::MAX;
    }
    while room(bound) < need {
        // The next event: the least bound at which some member's capacity
        // grows by one. (Members of the same weight in a row share it: with
        // equal weights, one search for it instead of one a member, whose
        // float conversions were most of this function's time.)
        let mut next = f64::INFINITY;
        let mut searched = f64::NAN;
        for weight in members().map(|p| weights[p]) {
            if weight != searched {
                next = next.min(next_event(bound, weight));
                searched = weight;
            }
        }
        bound = next;
        if !bound.is_finite() {
            return f64::MAX;
        }
    }
    bound
}

/// The smallest `f64` above `bound` at which `capacity(_, weight)` exceeds
/// `capacity(bound, weight)`.
fn next_event(bound: f64, weight: f64) -> f64 {
    let target = capacity(bound, weight).saturating_add(1);
    if target == u64::MAX {
        return f64::INFINITY;
    }
    // `target / weight` is within an ulp or two of the event; step to it.
    let mut event = (target as f64 / weight).max(bound.next_up());
    while capacity(event, weight) < target && event.is_finite() {
        event = event.next_up();
    }
    while event > bound.next_up() && capacity(event.next_down(), weight) >= target {
        event = event.next_down();
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Classes as `(holder mask, keys)`, indexed by position.
    struct List<'a>(&'a [(u32, u64)]);

    impl Classes for List<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn keys(&self, class: usize) -> u64 {
            self.0[class].1
        }
        fn holds(&self, class: usize, participant: usize) -> bool {
            self.0[class].0 >> participant & 1 == 1
        }
    }

    fn run(classes: &[(u32, u64)], weights: &[f64]) -> (Vec<u64>, Vec<u64>, f64) {
        let (c, p) = (classes.len(), weights.len());
        let mut flow = vec![0; c * p];
        let mut load = vec![0; p];
        let bound = solve(
            &List(classes),
            &(0..c).collect::<Vec<_>>(),
            weights,
            Scratch {
                flow: &mut flow,
                load: &mut load,
                cap: &mut vec![0; p],
                participant_parent: &mut vec![NONE; p],
                class_parent: &mut vec![NONE; c],
                queue: &mut vec![0; c],
            },
        );
        (flow, load, bound)
    }

    #[test]
    fn replicated_equal_and_weighted() {
        let (_, load, bound) = run(&[(0b111, 3000)], &[1.0, 1.0, 1.0]);
        assert_eq!(load, [1000, 1000, 1000]);
        assert_eq!(bound, 1000.0);
        let (_, load, bound) = run(&[(0b111, 3000)], &[2.0, 1.0, 1.0]);
        assert_eq!(load, [1500, 750, 750]);
        assert_eq!(bound, 750.0);
        let (_, load, _) = run(&[(0b111, 3001)], &[1.0, 1.0, 1.0]);
        assert_eq!(load, [1001, 1000, 1000]);
    }

    #[test]
    fn forced_keys_raise_the_bound_and_paths_move_keys() {
        // Adapter 0 alone holds 10 keys; 3 shared keys go elsewhere.
        let (flow, load, bound) = run(&[(0b001, 10), (0b111, 3)], &[1.0, 1.0, 1.0]);
        assert_eq!(load, [10, 3, 0]);
        assert_eq!(bound, 10.0);
        assert_eq!(flow, [10, 0, 0, 0, 3, 0]);
        // Shared keys placed first on 0 must move to 1 when 0's own arrive.
        let (flow, load, _) = run(&[(0b011, 4), (0b001, 2)], &[1.0, 1.0]);
        assert_eq!(load, [3, 3]);
        assert_eq!(flow, [1, 3, 2, 0]);
    }

    #[test]
    fn events_are_exact_for_awkward_weights() {
        for weight in [0.1, 0.3, 1.0 / 3.0, 7.7, 1e-9, 1e9] {
            for keys in [1, 2, 3, 10, 999] {
                let (_, load, bound) = run(&[(0b1, keys)], &[weight]);
                assert_eq!(load, [keys]);
                assert_eq!(capacity(bound, weight), keys, "{weight} {keys}");
                assert!(capacity(bound.next_down(), weight) < keys, "{weight} {keys}: bound not the least");
            }
        }
    }

    #[test]
    fn empty_and_keyless_classes() {
        let (flow, load, _) = run(&[(0b11, 0)], &[1.0, 2.0]);
        assert_eq!((flow, load), (vec![0, 0], vec![0, 0]));
        let (_, load, _) = run(&[], &[1.0]);
        assert_eq!(load, [0]);
    }

    /// Found by `optimal_against_brute_force`: the dense path hands `solve`
    /// scratch filled with zeros, not `NONE`; the first search must still
    /// run (weights 1, 0.5, 0.1: the optimum puts both shared keys of class
    /// {0, 1} on participant 1, for a largest weighted load of 4, not 5).
    #[test]
    fn scratch_needs_no_initialisation() {
        let classes = [(0b001, 1), (0b011, 2), (0b101, 3)];
        let mut flow = vec![7; 9];
        let mut load = vec![7; 3];
        let bound = solve(
            &List(&classes),
            &[0, 1, 2],
            &[1.0, 0.5, 0.1],
            Scratch {
                flow: &mut flow,
                load: &mut load,
                cap: &mut [0; 3],
                participant_parent: &mut [0; 3],
                class_parent: &mut [0; 3],
                queue: &mut [0; 3],
            },
        );
        assert_eq!(load, [4, 2, 0]);
        assert_eq!(flow, [1, 0, 0, 0, 2, 0, 3, 0, 0]);
        assert_eq!(bound, 4.0);
    }
}
