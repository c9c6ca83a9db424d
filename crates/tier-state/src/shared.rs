//! [`SharedTier`]: a tier behind one lock, as LMCache's `L1Manager` holds
//! one lock around every call.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::tier::Tier;

/// A [`Tier`] to share between threads: one `std` mutex around it. Every
/// call is one batch, so the lock is taken once a batch, not once a key.
///
/// ```
/// use std::sync::Arc;
/// use tier_state::{Answer, Batch, Flags, SharedTier, Tier, TierConfig, TierKey};
///
/// let shared = Arc::new(SharedTier::new(Tier::new(TierConfig::new(1024))?));
/// let writers: Vec<_> = (0..4u32)
///     .map(|t| {
///         let shared = Arc::clone(&shared);
///         std::thread::spawn(move || {
///             let keys: Vec<TierKey> = (0..100).map(|i| TierKey::new(i, t)).collect();
///             let mut answer = Batch::default();
///             shared.lock().reserve_write(&keys[..], Flags::All(false), t, &mut answer).unwrap();
///             answer.num_ok()
///         })
///     })
///     .collect();
/// let staged: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
/// assert_eq!(staged, 400);
/// assert_eq!(shared.lock().num_staging(), 400);
/// # Ok::<(), tier_state::TierError>(())
/// ```
#[derive(Debug)]
pub struct SharedTier {
    tier: Mutex<Tier>,
}

impl SharedTier {
    /// Shares `tier`.
    pub fn new(tier: Tier) -> SharedTier {
        SharedTier { tier: Mutex::new(tier) }
    }

    /// Locks the tier for one or more calls. A panic while it was locked
    /// does not poison it for good: every call checks its input before it
    /// changes anything, so the state stays consistent.
    pub fn lock(&self) -> MutexGuard<'_, Tier> {
        self.tier.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tier back.
    pub fn into_inner(self) -> Tier {
        self.tier.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}
