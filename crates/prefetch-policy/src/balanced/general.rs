//! The key-by-key balanced engine, for any number of participants: only
//! the classes present get a slot (at most one per key), found by their
//! holder sets in an ordered map.
//!
//! It allocates (the map, the quotas, one holder set per class) and costs
//! about `P` operations and one map lookup per key and pass; it plans
//! exactly what the word-parallel engine would, and serves the rare
//! controllers with more than
//! [`MAX_DENSE_PARTICIPANTS`](super::dense::MAX_DENSE_PARTICIPANTS)
//! participants.

use std::collections::BTreeMap;

use super::solve::{Classes, Scratch, solve};
use crate::plan::LoadPlan;

/// The classes present, in the map's order; a class is a holder set as
/// `P`-bit words (participant `p` is bit `p % 64` of word `p / 64`).
struct PresentClasses {
    holders: Vec<Vec<u64>>,
    counts: Vec<u64>,
}

impl Classes for PresentClasses {
    fn len(&self) -> usize {
        self.counts.len()
    }

    fn keys(&self, class: usize) -> u64 {
        self.counts[class]
    }

    fn holds(&self, class: usize, participant: usize) -> bool {
        self.holders[class][participant / 64] >> (participant % 64) & 1 == 1
    }
}

/// Plans `num_keys` keys of the participants (`indices`, `inputs` and
/// `weights` in index order) into `plan`, whose entries become exactly
/// `indices` (the caller removes the empty ones).
pub(super) fn plan(num_keys: usize, indices: &[usize], inputs: &[&[u64]], weights: &[f64], plan: &mut LoadPlan) {
    let participants = inputs.len();
    let words = num_keys.div_ceil(64);
    let mut holders = vec![0u64; participants.div_ceil(64)];

    // Count.
    let mut classes: BTreeMap<Vec<u64>, u64> = BTreeMap::new();
    for_each_key(inputs, words, &mut holders, |_, holders| match classes.get_mut(holders) {
        Some(count) => *count += 1,
        None => {
            classes.insert(holders.to_vec(), 1);
        }
    });
    let (holder_sets, counts): (Vec<Vec<u64>>, Vec<u64>) = classes.into_iter().unzip();
    let present = PresentClasses { holders: holder_sets, counts };

    // Solve, fewest holders first, then as numbers (as the dense engine).
    let mut order: Vec<usize> = (0..present.len()).collect();
    order.sort_by(|&a, &b| {
        let ones = |class: usize| present.holders[class].iter().map(|word| word.count_ones()).sum::<u32>();
        ones(a).cmp(&ones(b)).then_with(|| present.holders[a].iter().rev().cmp(present.holders[b].iter().rev()))
    });
    let classes = present.len();
    let mut flow = vec![0u64; classes * participants];
    solve(
        &present,
        &order,
        weights,
        Scratch {
            flow: &mut flow,
            load: &mut vec![0; participants],
            cap: &mut vec![0; participants],
            participant_parent: &mut vec![0; participants],
            class_parent: &mut vec![0; classes],
            queue: &mut vec![0; classes],
        },
    );

    // Assign: each class's keys in index order, to its participants in
    // index order, each up to its quota.
    let index_of: BTreeMap<&[u64], usize> =
        present.holders.iter().enumerate().map(|(class, set)| (set.as_slice(), class)).collect();
    let quota = |class: usize, participant: usize| flow[class * participants + participant];
    let first_owner = |class: usize, from: usize| (from..participants).find(|&p| quota(class, p) > 0);
    let mut owner: Vec<usize> = (0..classes).map(|class| first_owner(class, 0).unwrap_or(0)).collect();
    let mut left: Vec<u64> = (0..classes).map(|class| quota(class, owner[class])).collect();
    let outputs = plan.map_mut().prepare_overwrite(indices, num_keys);
    let mut guards: Vec<_> = outputs.iter_mut().map(|(_, bitmap)| bitmap.words_mut()).collect();
    for guard in &mut guards {
        guard.fill(0);
    }
    for_each_key(inputs, words, &mut holders, |key, holders| {
        let class = index_of[holders];
        let to = owner[class];
        guards[to][key / 64] |= 1 << (key % 64);
        left[class] -= 1;
        if left[class] == 0
            && let Some(next) = first_owner(class, to + 1)
        {
            owner[class] = next;
            left[class] = quota(class, next);
        }
    });
}

/// Calls `visit(key, holder set)` for every key some participant holds,
/// in index order.
fn for_each_key(inputs: &[&[u64]], words: usize, holders: &mut [u64], mut visit: impl FnMut(usize, &[u64])) {
    for word in 0..words {
        let union = inputs.iter().fold(0, |union, input| union | input[word]);
        let mut rest = union;
        while rest != 0 {
            let bit = rest.trailing_zeros();
            rest &= rest - 1;
            holders.fill(0);
            for (p, input) in inputs.iter().enumerate() {
                holders[p / 64] |= (input[word] >> bit & 1) << (p % 64);
            }
            visit(word * 64 + bit as usize, holders);
        }
    }
}
