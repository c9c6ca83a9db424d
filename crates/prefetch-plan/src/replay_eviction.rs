//! `replay`'s eviction options: `--eviction` (one policy or a list), and
//! LMCache's trigger, `--l1-watermark`, `--evict-ratio` (lists sweep like
//! capacities), `--l2-watermark`, `--l2-evict-ratio` (one for every
//! adapter or one each) and `--evict-interval-ms`, checked and expanded
//! into the variants a sweep replays.

use kv_replay::{DEFAULT_EVICT_INTERVAL_MS, Eviction, Trigger};

use crate::error::CliError;

/// The eviction options of `replay`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct EvictionOptions {
    /// `--eviction`: each policy is a variant of the sweep.
    pub evictions: Vec<Eviction>,
    /// `--l1-watermark`: empty for strict capacity; several sweep.
    pub l1_watermarks: Vec<f64>,
    /// `--evict-ratio`: L1's ratios (empty: LMCache's 0.2); several sweep.
    pub evict_ratios: Vec<f64>,
    /// `--l2-watermark`: none (strict capacity), one for every adapter, or
    /// one per adapter in order.
    pub l2_watermarks: Vec<f64>,
    /// `--l2-evict-ratio`: as `l2_watermarks` (empty: 0.2).
    pub l2_evict_ratios: Vec<f64>,
    /// `--evict-interval-ms`: `None` for LMCache's 1,000.
    pub evict_interval_ms: Option<u64>,
}

impl Default for EvictionOptions {
    fn default() -> EvictionOptions {
        EvictionOptions {
            evictions: vec![Eviction::Lru],
            l1_watermarks: Vec::new(),
            evict_ratios: Vec::new(),
            l2_watermarks: Vec::new(),
            l2_evict_ratios: Vec::new(),
            evict_interval_ms: None,
        }
    }
}

/// One variant of a sweep: the policy, L1's trigger and each adapter's.
#[derive(Clone, Debug, PartialEq)]
pub struct EvictionVariant {
    /// The policy of every tier.
    pub eviction: Eviction,
    /// L1's trigger (`None`: strict capacity).
    pub l1_trigger: Option<Trigger>,
    /// Each adapter's trigger.
    pub l2_triggers: Vec<Option<Trigger>>,
    /// The checks' interval.
    pub evict_interval_ms: u64,
}

impl EvictionOptions {
    /// Whether any tier has a trigger.
    pub fn has_trigger(&self) -> bool {
        !self.l1_watermarks.is_empty() || !self.l2_watermarks.is_empty()
    }

    /// The variants to replay, `--eviction` varying slowest, then L1's
    /// watermark, then its ratio.
    ///
    /// ```
    /// use kv_replay::Eviction;
    /// use prefetch_plan::replay_eviction::EvictionOptions;
    ///
    /// let mut options = EvictionOptions::default();
    /// options.evictions = vec![Eviction::Lru, Eviction::Arc];
    /// options.l1_watermarks = vec![0.8, 0.9];
    /// let variants = options.variants(1)?;
    /// assert_eq!(variants.len(), 4);
    /// assert_eq!((variants[3].eviction, variants[3].l1_trigger.unwrap().watermark), (Eviction::Arc, 0.9));
    /// assert_eq!(variants[3].l1_trigger.unwrap().ratio, 0.2); // LMCache's default
    /// assert_eq!(variants[3].l2_triggers, [None]);
    /// # Ok::<(), prefetch_plan::error::CliError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CliError::BadOption`] naming the flag: a watermark or ratio outside
    /// [0, 1]; a ratio or interval without a watermark to use it; a count
    /// of `--l2-watermark` or `--l2-evict-ratio` values that is neither one
    /// nor one per adapter; an interval of 0; no policy.
    pub fn variants(&self, adapters: usize) -> Result<Vec<EvictionVariant>, CliError> {
        let bad = |option: &'static str, message: String| CliError::BadOption { option, message };
        for (option, values) in [
            ("--l1-watermark", &self.l1_watermarks),
            ("--evict-ratio", &self.evict_ratios),
            ("--l2-watermark", &self.l2_watermarks),
            ("--l2-evict-ratio", &self.l2_evict_ratios),
        ] {
            if let Some(value) = values.iter().find(|value| !(0.0..=1.0).contains(*value)) {
                return Err(bad(option, format!("{value} is outside [0, 1]")));
            }
        }
        if self.evictions.is_empty() {
            return Err(bad("--eviction", format!("give a policy: {}", Eviction::names())));
        }
        if !self.evict_ratios.is_empty() && self.l1_watermarks.is_empty() {
            return Err(bad("--evict-ratio", "needs --l1-watermark (without it L1 keeps strict capacity)".to_owned()));
        }
        if !self.l2_evict_ratios.is_empty() && self.l2_watermarks.is_empty() {
            let message = "needs --l2-watermark (without it the adapters keep strict capacity)".to_owned();
            return Err(bad("--l2-evict-ratio", message));
        }
        match self.evict_interval_ms {
            Some(_) if !self.has_trigger() => {
                let message = "needs --l1-watermark or --l2-watermark: strict capacity has no checks".to_owned();
                return Err(bad("--evict-interval-ms", message));
            }
            Some(0) => return Err(bad("--evict-interval-ms", "must be at least 1".to_owned())),
            _ => {}
        }
        let per_adapter = |option: &'static str, values: &[f64], default: f64| -> Result<Vec<f64>, CliError> {
            match values.len() {
                0 => Ok(vec![default; adapters]),
                1 => Ok(vec![values[0]; adapters]),
                n if n == adapters => Ok(values.to_vec()),
                n => {
                    Err(bad(option, format!("{n} values for {adapters} --l2 adapters: give one for all, or one each")))
                }
            }
        };
        let l2_triggers: Vec<Option<Trigger>> = if self.l2_watermarks.is_empty() {
            vec![None; adapters]
        } else {
            let watermarks = per_adapter("--l2-watermark", &self.l2_watermarks, 0.0)?;
            let ratios = per_adapter("--l2-evict-ratio", &self.l2_evict_ratios, Trigger::LMCACHE_DEFAULT.ratio)?;
            watermarks.into_iter().zip(ratios).map(|(watermark, ratio)| Some(Trigger { watermark, ratio })).collect()
        };
        let l1_triggers: Vec<Option<Trigger>> = if self.l1_watermarks.is_empty() {
            vec![None]
        } else {
            let default_ratio = [Trigger::LMCACHE_DEFAULT.ratio];
            let ratios = if self.evict_ratios.is_empty() { &default_ratio[..] } else { &self.evict_ratios };
            self.l1_watermarks
                .iter()
                .flat_map(|&watermark| ratios.iter().map(move |&ratio| Some(Trigger { watermark, ratio })))
                .collect()
        };
        let evict_interval_ms = self.evict_interval_ms.unwrap_or(DEFAULT_EVICT_INTERVAL_MS);
        Ok(self
            .evictions
            .iter()
            .flat_map(|&eviction| {
                let l2_triggers = &l2_triggers;
                l1_triggers.iter().map(move |&l1_trigger| EvictionVariant {
                    eviction,
                    l1_trigger,
                    l2_triggers: l2_triggers.clone(),
                    evict_interval_ms,
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(options: &EvictionOptions, adapters: usize) -> String {
        let error = options.variants(adapters).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        error.to_string()
    }

    #[test]
    fn values_outside_the_unit_interval_name_their_flag() {
        let options = EvictionOptions { l1_watermarks: vec![0.5, 1.5], ..EvictionOptions::default() };
        assert_eq!(message(&options, 0), "--l1-watermark: 1.5 is outside [0, 1]");
        let options =
            EvictionOptions { l1_watermarks: vec![0.5], evict_ratios: vec![-0.1], ..EvictionOptions::default() };
        assert_eq!(message(&options, 0), "--evict-ratio: -0.1 is outside [0, 1]");
        let options = EvictionOptions { l2_watermarks: vec![f64::NAN], ..EvictionOptions::default() };
        assert_eq!(message(&options, 1), "--l2-watermark: NaN is outside [0, 1]");
        let options =
            EvictionOptions { l2_watermarks: vec![0.9], l2_evict_ratios: vec![2.0], ..EvictionOptions::default() };
        assert_eq!(message(&options, 1), "--l2-evict-ratio: 2 is outside [0, 1]");
    }

    #[test]
    fn options_without_a_watermark_are_refused() {
        let options = EvictionOptions { evict_ratios: vec![0.1], ..EvictionOptions::default() };
        assert!(message(&options, 0).starts_with("--evict-ratio: needs --l1-watermark"));
        let options = EvictionOptions { l2_evict_ratios: vec![0.1], ..EvictionOptions::default() };
        assert!(message(&options, 1).starts_with("--l2-evict-ratio: needs --l2-watermark"));
        let options = EvictionOptions { evict_interval_ms: Some(500), ..EvictionOptions::default() };
        assert!(message(&options, 0).starts_with("--evict-interval-ms: needs"));
        let options =
            EvictionOptions { evict_interval_ms: Some(0), l1_watermarks: vec![0.8], ..EvictionOptions::default() };
        assert_eq!(message(&options, 0), "--evict-interval-ms: must be at least 1");
    }

    #[test]
    fn adapters_get_one_value_each_or_one_for_all() {
        let options =
            EvictionOptions { l2_watermarks: vec![0.9, 0.7], l2_evict_ratios: vec![0.5], ..EvictionOptions::default() };
        let variants = options.variants(2).unwrap();
        assert_eq!(
            variants[0].l2_triggers,
            [Some(Trigger { watermark: 0.9, ratio: 0.5 }), Some(Trigger { watermark: 0.7, ratio: 0.5 })]
        );
        assert_eq!((variants.len(), variants[0].l1_trigger), (1, None));
        assert!(message(&options, 3).contains("2 values for 3 --l2 adapters"));
        let options = EvictionOptions { l2_watermarks: vec![0.9], ..EvictionOptions::default() };
        assert_eq!(options.variants(2).unwrap()[0].l2_triggers, [Some(Trigger { watermark: 0.9, ratio: 0.2 }); 2]);
    }

    #[test]
    fn strict_capacity_is_the_default() {
        let variants = EvictionOptions::default().variants(2).unwrap();
        assert_eq!(
            variants,
            [EvictionVariant {
                eviction: Eviction::Lru,
                l1_trigger: None,
                l2_triggers: vec![None, None],
                evict_interval_ms: 1_000
            }]
        );
    }
}
