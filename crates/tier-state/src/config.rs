//! [`TierConfig`]: a tier's capacity, lock lifetimes and row count.

/// How a [`Tier`](crate::Tier) is built.
///
/// ```
/// use tier_state::TierConfig;
/// let config = TierConfig::new(100_000).with_ttls_ms(300_000, 300_000).with_rows(128);
/// assert_eq!(config.capacity, 100_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TierConfig {
    /// The most objects the tier holds at once: resident objects plus
    /// staging objects (each writer tag's reservation is one object, as
    /// each holds a buffer in LMCache).
    pub capacity: usize,
    /// A read lock's time-to-live in ms (LMCache's `read_ttl_seconds` × 1000).
    pub read_ttl_ms: u64,
    /// A write lock's time-to-live in ms (LMCache's `write_ttl_seconds` × 1000).
    pub write_ttl_ms: u64,
    /// Keys' rows must be below this ([`TierError::RowOutOfRange`](crate::TierError::RowOutOfRange)
    /// otherwise); `u32::MAX` accepts any row.
    pub rows: u32,
}

/// LMCache's default read-lock TTL (`L1ManagerConfig.read_ttl_seconds`): 300 s.
pub const DEFAULT_READ_TTL_MS: u64 = 300_000;

/// LMCache's default write-lock TTL (`L1ManagerConfig.write_ttl_seconds`): 600 s.
pub const DEFAULT_WRITE_TTL_MS: u64 = 600_000;

impl TierConfig {
    /// A tier of `capacity` objects, with LMCache's default lifetimes (300 s read, 600 s write) and
    /// any row.
    pub const fn new(capacity: usize) -> TierConfig {
        TierConfig { capacity, read_ttl_ms: DEFAULT_READ_TTL_MS, write_ttl_ms: DEFAULT_WRITE_TTL_MS, rows: u32::MAX }
    }

    /// The same, with these lock lifetimes.
    pub const fn with_ttls_ms(self, read_ttl_ms: u64, write_ttl_ms: u64) -> TierConfig {
        TierConfig { read_ttl_ms, write_ttl_ms, ..self }
    }

    /// The same, accepting rows `0..rows` only.
    pub const fn with_rows(self, rows: u32) -> TierConfig {
        TierConfig { rows, ..self }
    }
}
