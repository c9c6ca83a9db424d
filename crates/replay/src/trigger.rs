//! [`Trigger`]: LMCache's eviction trigger for one tier (a watermark and a
//! ratio), and [`CheckClock`], the once-a-second checks on the trace's
//! time.
//!
//! LMCache's eviction controller (`storage_controllers/
//! eviction_controller.py`) wakes every second, computes the tier's usage
//! as used / total, and when `usage >= watermark` asks the policy for
//! `ratio` of its tracked keys and deletes them. The replay runs those
//! checks on the trace's clock: before a request at `t` ms, one check for
//! every whole interval (1,000 ms by default) passed since the last.

use crate::error::ReplayError;

/// LMCache's check interval: its controllers sleep one second.
pub const DEFAULT_EVICT_INTERVAL_MS: u64 = 1_000;

/// When one tier evicts, and how much: LMCache's `EvictionConfig`'s
/// `trigger_watermark` and `eviction_ratio`.
///
/// ```
/// use kv_replay::Trigger;
///
/// let trigger = Trigger::new(0.8, 0.2)?;
/// assert_eq!(trigger, Trigger::LMCACHE_DEFAULT);
/// assert!(trigger.fires(8, 10) && !trigger.fires(7, 10));
/// assert!(Trigger::new(1.5, 0.2).is_err() && Trigger::new(0.8, -0.1).is_err());
/// # Ok::<(), kv_replay::ReplayError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trigger {
    /// Usage (resident / capacity) at or above which a check evicts.
    pub watermark: f64,
    /// The fraction of the policy's tracked keys a check evicts, rounded
    /// as LMCache rounds it ([`tier_state::target_count`]).
    pub ratio: f64,
}

impl Trigger {
    /// LMCache's defaults: watermark 0.8, ratio 0.2.
    pub const LMCACHE_DEFAULT: Trigger = Trigger { watermark: 0.8, ratio: 0.2 };

    /// A trigger at `watermark` evicting `ratio` of the keys.
    ///
    /// # Errors
    ///
    /// [`ReplayError::OutOfRange`] if either is outside [0, 1] (or NaN).
    pub fn new(watermark: f64, ratio: f64) -> Result<Trigger, ReplayError> {
        let trigger = Trigger { watermark, ratio };
        trigger.validate()?;
        Ok(trigger)
    }

    /// Checks both values are in [0, 1], naming the first that is not.
    ///
    /// # Errors
    ///
    /// As [`new`](Trigger::new).
    pub fn validate(&self) -> Result<(), ReplayError> {
        for (what, value) in [("watermark", self.watermark), ("eviction ratio", self.ratio)] {
            if !(0.0..=1.0).contains(&value) {
                return Err(ReplayError::OutOfRange { what, value });
            }
        }
        Ok(())
    }

    /// Whether a check evicts from a tier holding `resident` of
    /// `capacity` keys: `resident / capacity >= watermark`, as LMCache
    /// computes it (a capacity of 0 is a usage of 0).
    pub fn fires(&self, resident: usize, capacity: usize) -> bool {
        let usage = if capacity == 0 { 0.0 } else { resident as f64 / capacity as f64 };
        usage >= self.watermark
    }
}

/// The checks' clock: the next check falls at `next_ms`, one every
/// `interval_ms`, the first at `interval_ms`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckClock {
    interval_ms: u64,
    next_ms: u64,
}

impl CheckClock {
    pub(crate) fn new(interval_ms: u64) -> CheckClock {
        CheckClock { interval_ms, next_ms: interval_ms }
    }

    /// Whether a check falls at or before `now_ms` (and has not run).
    #[inline]
    pub(crate) fn due(&self, now_ms: u64) -> bool {
        now_ms >= self.next_ms
    }

    /// After a check: the next one. If nothing fired, no later check before
    /// `now_ms` can fire either (no request changes the tiers between
    /// them), so they are skipped.
    pub(crate) fn advance(&mut self, now_ms: u64, fired: bool) {
        self.next_ms = if fired {
            self.next_ms.saturating_add(self.interval_ms)
        } else {
            (now_ms / self.interval_ms).saturating_add(1).saturating_mul(self.interval_ms)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_fall_on_whole_intervals_from_the_first() {
        let mut clock = CheckClock::new(1_000);
        assert!(!clock.due(999) && clock.due(1_000));
        clock.advance(3_500, true);
        assert!(clock.due(2_000) && !clock.due(1_999));
        clock.advance(3_500, true);
        clock.advance(3_500, true);
        assert!(!clock.due(3_500) && clock.due(4_000));
        // Nothing fired at 4,000: the checks up to 9,999 are skipped.
        clock.advance(9_999, false);
        assert!(!clock.due(9_999) && clock.due(10_000));
    }

    #[test]
    fn out_of_range_values_are_named() {
        for (watermark, ratio, what) in [
            (1.01, 0.2, "watermark"),
            (-0.0001, 0.2, "watermark"),
            (f64::NAN, 0.2, "watermark"),
            (0.8, 2.0, "eviction ratio"),
        ] {
            match Trigger::new(watermark, ratio) {
                Err(ReplayError::OutOfRange { what: named, .. }) => assert_eq!(named, what),
                other => panic!("{watermark} {ratio}: {other:?}"),
            }
        }
        assert!(Trigger::new(0.0, 1.0).is_ok() && Trigger::new(1.0, 0.0).is_ok());
        // Capacity 0: usage 0, so only a watermark of 0 fires.
        assert!(Trigger::new(0.0, 0.5).unwrap().fires(0, 0) && !Trigger::LMCACHE_DEFAULT.fires(0, 0));
    }
}
