//! [`Clock`]: where a tier takes the time for its locks' time-to-live.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A monotonic clock in milliseconds, as LMCache's `TTLLock` counts.
///
/// A lock taken at `t` with a time-to-live of `ttl` ms is held while
/// `now < t + ttl`. Injected so tests decide what time it is.
pub trait Clock: Send + Sync + core::fmt::Debug {
    /// Milliseconds since the clock's own epoch; never decreases.
    fn now_ms(&self) -> u64;
}

/// The process's monotonic clock ([`Instant`]), from when it was built.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    epoch: Instant,
}

impl SystemClock {
    /// A clock that reads 0 now.
    pub fn new() -> SystemClock {
        SystemClock { epoch: Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A clock that moves only when told: for deterministic tests.
///
/// Clones share the time, so a test keeps one handle and gives the tier
/// another.
///
/// ```
/// use tier_state::{Clock, ManualClock};
/// let clock = ManualClock::new(10);
/// let handle = clock.clone();
/// handle.advance(5);
/// assert_eq!(clock.now_ms(), 15);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock that reads `now_ms`.
    pub fn new(now_ms: u64) -> ManualClock {
        ManualClock { now: Arc::new(AtomicU64::new(now_ms)) }
    }

    /// Moves the clock `ms` forward.
    pub fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `now_ms`; a test may move it back, which a real
    /// clock never does.
    pub fn set(&self, now_ms: u64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}
