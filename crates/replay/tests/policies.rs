//! The replay with LMCache's policies against an obvious model of
//! docs/REPLAY.md's rules: `HashSet`s for residence, the first-wins plan
//! written out, and `tier-state`'s plain transcriptions of LMCache's Python
//! policies (`policy_model`: `Vec`s and `HashSet`s, O(n) an event) instead
//! of the native ones. Every count of every tier must agree, for LRU,
//! S3-FIFO and ARC, at strict capacity (one victim at a time) and under
//! LMCache's trigger on L1 and an adapter.

use std::collections::HashSet;

use kv_replay::synthetic::{SyntheticOptions, generate};
use kv_replay::{Eviction, ReplayConfig, Replayer, Report, Trace, Trigger};
use tier_state::policy_model::{ArcModel, LruModel, S3FifoModel};

/// One of LMCache's policies, as its plain model.
enum Model {
    Lru(LruModel),
    S3Fifo(S3FifoModel),
    Arc(ArcModel),
}

impl Model {
    fn new(eviction: Eviction) -> Model {
        match eviction {
            Eviction::Lru => Model::Lru(LruModel::default()),
            Eviction::S3Fifo => Model::S3Fifo(S3FifoModel::default()),
            Eviction::Arc => Model::Arc(ArcModel::default()),
            other => panic!("no model of {other:?}"),
        }
    }
    fn created(&mut self, slots: &[u32]) {
        match self {
            Model::Lru(model) => model.created(slots),
            Model::S3Fifo(model) => model.created(slots),
            Model::Arc(model) => model.created(slots),
        }
    }
    fn touched(&mut self, slots: &[u32]) {
        match self {
            Model::Lru(model) => model.touched(slots),
            Model::S3Fifo(model) => model.touched(slots),
            Model::Arc(model) => model.touched(slots),
        }
    }
    fn removed(&mut self, slots: &[u32]) {
        match self {
            Model::Lru(model) => model.removed(slots),
            Model::S3Fifo(model) => model.removed(slots),
            Model::Arc(model) => model.removed(slots),
        }
    }
    fn victims(&mut self, ratio: f64) -> Vec<u32> {
        match self {
            Model::Lru(model) => model.victims(ratio, None),
            Model::S3Fifo(model) => model.victims(ratio, None),
            Model::Arc(model) => model.victims(ratio, None),
        }
    }
}

/// A tier of the model: what it holds, its policy, its counts.
struct ModelTier {
    capacity: Option<usize>,
    trigger: Option<Trigger>,
    held: HashSet<u32>,
    policy: Model,
    hits: u64,
    evictions: u64,
    peak: usize,
    checks: u64,
    by_checks: u64,
    dropped: u64,
}

impl ModelTier {
    fn new(capacity: Option<usize>, eviction: Eviction, trigger: Option<Trigger>) -> ModelTier {
        ModelTier {
            capacity,
            trigger,
            held: HashSet::new(),
            policy: Model::new(eviction),
            hits: 0,
            evictions: 0,
            peak: 0,
            checks: 0,
            by_checks: 0,
            dropped: 0,
        }
    }

    fn remove(&mut self, victims: &[u32]) {
        for key in victims {
            assert!(self.held.remove(key), "a victim is held");
        }
        self.policy.removed(victims);
        self.evictions += victims.len() as u64;
    }

    fn admit(&mut self, key: u32) {
        self.held.insert(key);
        self.peak = self.peak.max(self.held.len());
    }

    /// Strict capacity, one key (rule (d) with a policy).
    fn touch(&mut self, key: u32) {
        if self.held.contains(&key) {
            self.policy.touched(&[key]);
        } else if self.capacity == Some(0) {
            self.evictions += 1;
        } else {
            if self.capacity.is_some_and(|capacity| self.held.len() >= capacity) {
                let victims = self.policy.victims(1e-12);
                self.remove(&victims);
            }
            self.admit(key);
            self.policy.created(&[key]);
        }
    }

    fn check(&mut self) {
        let (Some(trigger), Some(capacity)) = (self.trigger, self.capacity) else { return };
        let usage = if capacity == 0 { 0.0 } else { self.held.len() as f64 / capacity as f64 };
        if usage >= trigger.watermark {
            let victims = self.policy.victims(trigger.ratio);
            self.remove(&victims);
            self.checks += 1;
            self.by_checks += victims.len() as u64;
        }
    }

    fn touch_batch(&mut self, keys: &[u32]) {
        let held: Vec<u32> = keys.iter().copied().filter(|key| self.held.contains(key)).collect();
        self.policy.touched(&held);
    }

    fn write_batch(&mut self, keys: &[u32], rewrite: bool) {
        let mut batch = Vec::new();
        for &key in keys {
            if self.held.contains(&key) {
                if rewrite {
                    batch.push(key);
                }
            } else if self.capacity.is_none_or(|capacity| self.held.len() < capacity) {
                self.admit(key);
                batch.push(key);
            } else {
                self.dropped += 1;
            }
        }
        self.policy.created(&batch);
    }
}

/// The replay of docs/REPLAY.md, the obvious way; returns per tier (hits,
/// evictions, entries, peak, checks, evicted by checks, dropped) and the
/// hit blocks.
fn model_replay(trace: &Trace, config: &ReplayConfig) -> (u64, Vec<[u64; 7]>) {
    let mut l1 = ModelTier::new(config.l1, config.eviction, config.l1_trigger);
    let mut l2: Vec<ModelTier> = config
        .adapters
        .iter()
        .map(|adapter| ModelTier::new(adapter.capacity, config.eviction, adapter.trigger))
        .collect();
    let interval = config.evict_interval_ms;
    let (mut next_check, mut hit_blocks) = (interval, 0);
    for request in trace.requests() {
        // One check per interval passed, literally (no skipping).
        while config.has_trigger() && request.timestamp_ms >= next_check {
            l1.check();
            l2.iter_mut().for_each(ModelTier::check);
            next_check += interval;
        }
        let keys = request.keys;
        // Who serves each key: L1 (None inside Some), the first adapter holding it, or nobody.
        let owner: Vec<Option<Option<usize>>> = keys
            .iter()
            .map(|key| {
                if l1.held.contains(key) {
                    Some(None)
                } else {
                    l2.iter().position(|tier| tier.held.contains(key)).map(Some)
                }
            })
            .collect();
        let hit = owner.iter().position(Option::is_none).unwrap_or(keys.len());
        hit_blocks += hit as u64;
        for who in &owner[..hit] {
            match who {
                Some(None) => l1.hits += 1,
                Some(Some(j)) => l2[*j].hits += 1,
                None => unreachable!(),
            }
        }
        if l1.trigger.is_some() {
            let hits: Vec<u32> = (0..hit).filter(|&i| owner[i] == Some(None)).map(|i| keys[i]).collect();
            let lacked: Vec<u32> = (0..keys.len()).filter(|&i| owner[i] != Some(None)).map(|i| keys[i]).collect();
            l1.touch_batch(&hits);
            l1.write_batch(&lacked, false);
        } else {
            keys.iter().for_each(|&key| l1.touch(key));
        }
        for (j, tier) in l2.iter_mut().enumerate() {
            let served: Vec<u32> = (0..hit).filter(|&i| owner[i] == Some(Some(j))).map(|i| keys[i]).collect();
            if tier.trigger.is_some() {
                tier.touch_batch(&served);
                tier.write_batch(&keys[hit..], true);
            } else {
                served.iter().chain(&keys[hit..]).for_each(|&key| tier.touch(key));
            }
        }
    }
    let counts = |tier: &ModelTier| {
        [tier.hits, tier.evictions, tier.held.len() as u64, tier.peak as u64, tier.checks, tier.by_checks, tier.dropped]
    };
    (hit_blocks, std::iter::once(&l1).chain(&l2).map(counts).collect())
}

fn replay_counts(report: &Report) -> (u64, Vec<[u64; 7]>) {
    let counts = |tier: &kv_replay::TierReport| {
        [
            tier.hit_blocks,
            tier.evictions,
            tier.entries as u64,
            tier.peak_entries as u64,
            tier.checks_fired,
            tier.evicted_by_checks,
            tier.dropped_full,
        ]
    };
    (report.hit_blocks, std::iter::once(&report.l1).chain(&report.l2).map(counts).collect())
}

#[test]
fn lmcaches_policies_agree_with_their_plain_models_in_the_replay() {
    // 600 requests of about 8 blocks, 100 ms apart: 60 checks.
    let trace = generate(&SyntheticOptions::default().with_size(600, 8).with_seed(21));
    let mut checked = 0;
    for eviction in [Eviction::Lru, Eviction::S3Fifo, Eviction::Arc] {
        for (l1, l2, l1_trigger, l2_triggers) in [
            (Some(60), vec![Some(200), None], None, vec![None, None]),
            (Some(0), vec![Some(90)], None, vec![None]),
            (Some(60), vec![Some(200), None], Some((0.8, 0.2)), vec![Some((0.7, 0.3)), None]),
            (Some(40), vec![Some(150)], Some((0.5, 0.5)), vec![None]),
            (Some(100), vec![Some(120)], Some((1.0, 0.05)), vec![Some((0.0, 1.0))]),
        ] {
            if eviction == Eviction::Lru && l1_trigger.is_none() {
                // Strict `lru` is the replay's own tier (reference.rs checks it).
                continue;
            }
            let mut config = ReplayConfig::new(l1, &l2);
            config.eviction = eviction;
            config.l1_trigger = l1_trigger.map(|(watermark, ratio)| Trigger::new(watermark, ratio).unwrap());
            for (adapter, trigger) in config.adapters.iter_mut().zip(&l2_triggers) {
                adapter.trigger = trigger.map(|(watermark, ratio)| Trigger::new(watermark, ratio).unwrap());
            }
            let report = Replayer::new(&config).unwrap().replay(&trace).unwrap();
            let (replayed, model) = (replay_counts(&report), model_replay(&trace, &config));
            assert_eq!(replayed, model, "{config:?}");
            checked += 1;
            if config.has_trigger() {
                assert!(model.1.iter().any(|counts| counts[4] > 0), "{config:?}: a check must fire");
            }
        }
    }
    assert_eq!(checked, 13);
}
