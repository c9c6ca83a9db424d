//! Tier specifications: [`Capacity`] (`20000`, `1e7tok`, `64GiB`, `inf`)
//! and [`TierSpec`] (a capacity, or a list of them for a sweep, with an
//! adapter's `weight=` and `bw=`).

use core::fmt;
use core::str::FromStr;

use prefetch_policy::AdapterWeight;

use crate::error::SpecError;
use crate::tier::Tier;

/// A tier's capacity as the user wrote it; [`blocks`](Capacity::blocks)
/// turns it into blocks.
///
/// ```
/// use kv_replay::Capacity;
///
/// let sizes = [("20000", Some(20_000)), ("1e7tok", Some(19_531)), ("64GiB", Some(1024)), ("inf", None)];
/// for (text, blocks) in sizes {
///     let capacity: Capacity = text.parse()?;
///     // 512-token blocks, 131,072 bytes a token (an 8B model in fp16): 64 MiB a block.
///     assert_eq!(capacity.blocks(512, Some(131_072))?, blocks, "{text}");
/// }
/// # Ok::<(), kv_replay::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Capacity {
    /// A number of blocks.
    Blocks(u64),
    /// A number of tokens: as many whole blocks as fit.
    Tokens(f64),
    /// A number of bytes: as many whole blocks as fit, at
    /// `--kv-bytes-per-token` × `--block-tokens` bytes a block.
    Bytes(f64),
    /// No limit: nothing is ever evicted.
    Infinite,
}

/// Decimal and binary byte units, longest first so `GiB` is not read as
/// `B` after a number `"64Gi"`.
const BYTE_UNITS: [(&str, f64); 9] = [
    ("KiB", 1024.0),
    ("MiB", 1024.0 * 1024.0),
    ("GiB", 1024.0 * 1024.0 * 1024.0),
    ("TiB", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("B", 1.0),
];

/// Parses a non-negative finite decimal number (`20000`, `1e4`, `2.5`).
fn number(text: &str) -> Option<f64> {
    // `f64::from_str` takes "inf" and "nan": only digits, '.', 'e', signs.
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b".eE+-".contains(&b)) {
        return None;
    }
    text.parse::<f64>().ok().filter(|value| value.is_finite() && *value >= 0.0)
}

/// Parses a byte count with a unit (`64GiB`, `500GB`, `12B`).
fn bytes(text: &str) -> Option<f64> {
    BYTE_UNITS.iter().find_map(|(unit, scale)| text.strip_suffix(unit).and_then(number).map(|n| n * scale))
}

impl FromStr for Capacity {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Capacity, SpecError> {
        let bad = || SpecError::BadCapacity { found: text.to_owned() };
        if text == "inf" {
            Ok(Capacity::Infinite)
        } else if let Some(tokens) = text.strip_suffix("tok") {
            number(tokens).map(Capacity::Tokens).ok_or_else(bad)
        } else if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            // Digits alone: exact (through `f64`, 18446744073709551615
            // would round up to 2^64).
            let blocks = text.parse().map_err(|_| SpecError::TooLarge { found: text.to_owned(), blocks: None })?;
            Ok(Capacity::Blocks(blocks))
        } else if let Some(blocks) = number(text) {
            if blocks.fract() != 0.0 {
                return Err(SpecError::FractionalBlocks { found: text.to_owned() });
            }
            // A whole number past `u64` (`99999999999999999999`, `1e20`)
            // is no `Blocks`: it is too large, not fractional.
            let blocks =
                whole_blocks(blocks).ok_or_else(|| SpecError::TooLarge { found: text.to_owned(), blocks: None })?;
            Ok(Capacity::Blocks(blocks))
        } else {
            bytes(text).map(Capacity::Bytes).ok_or_else(bad)
        }
    }
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capacity::Blocks(blocks) => write!(f, "{blocks}"),
            Capacity::Tokens(tokens) => write!(f, "{tokens}tok"),
            Capacity::Bytes(bytes) => write!(f, "{bytes}B"),
            Capacity::Infinite => f.write_str("inf"),
        }
    }
}

/// `value` (whole, not negative) as a `u64`, `None` if it is 2^64 or more
/// (where `as` would saturate).
fn whole_blocks(value: f64) -> Option<u64> {
    // 2^64 is exact in `f64`; `u64::MAX as f64` rounds up to it.
    (value < u64::MAX as f64).then_some(value as u64)
}

impl Capacity {
    /// The most blocks a tier holds, [`Tier::MAX_CAPACITY`]: `2^32 − 2`.
    pub const MAX_BLOCKS: u64 = Tier::MAX_CAPACITY as u64;

    /// The capacity in blocks of `block_tokens` tokens, `None` for
    /// [`Infinite`](Capacity::Infinite).
    ///
    /// # Errors
    ///
    /// [`SpecError::NeedsBytesPerToken`] for bytes without
    /// `kv_bytes_per_token`; [`SpecError::TooLarge`] for more than
    /// [`MAX_BLOCKS`](Capacity::MAX_BLOCKS) blocks, in any form.
    ///
    /// ```
    /// use kv_replay::Capacity;
    ///
    /// let error = Capacity::Tokens(1e15).blocks(512, None).unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "\"1000000000000000tok\" is 1953125000000 blocks, more than a tier can hold: at most 4294967294 blocks (use inf)"
    /// );
    /// ```
    pub fn blocks(self, block_tokens: u64, kv_bytes_per_token: Option<u64>) -> Result<Option<usize>, SpecError> {
        let blocks = match self {
            Capacity::Infinite => return Ok(None),
            Capacity::Blocks(blocks) => Some(blocks),
            Capacity::Tokens(tokens) => whole_blocks((tokens / block_tokens as f64).floor()),
            Capacity::Bytes(bytes) => {
                let per_token =
                    kv_bytes_per_token.ok_or_else(|| SpecError::NeedsBytesPerToken { found: self.to_string() })?;
                whole_blocks((bytes / (per_token as f64 * block_tokens as f64)).floor())
            }
        };
        match blocks {
            Some(blocks) if blocks <= Capacity::MAX_BLOCKS => Ok(Some(blocks as usize)),
            _ => Err(SpecError::TooLarge { found: self.to_string(), blocks }),
        }
    }
}

/// One `--l1` or `--l2` value: `CAP[,CAP…][:weight=W][:bw=RATE]`.
///
/// - Several capacities make a sweep: one replay each.
/// - `weight=W` is the adapter's weight for the `balanced` policy
///   (default 1).
/// - `bw=RATE` is its load bandwidth in bytes per second (`12GB/s`,
///   `2GiB/s`, `5e9`), for the report's estimated load seconds.
///
/// ```
/// use kv_replay::{Capacity, TierSpec};
///
/// let spec: TierSpec = "1e4,1e5:weight=2:bw=12GB/s".parse()?;
/// assert_eq!(spec.capacities, [Capacity::Blocks(10_000), Capacity::Blocks(100_000)]);
/// assert_eq!((spec.weight, spec.bandwidth), (Some(2.0), Some(12e9)));
/// # Ok::<(), kv_replay::SpecError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TierSpec {
    /// One capacity, or several for a sweep.
    pub capacities: Vec<Capacity>,
    /// The weight for `balanced`; `None`: 1.
    pub weight: Option<f64>,
    /// Bytes per second; `None`: no load-time estimate.
    pub bandwidth: Option<f64>,
}

impl TierSpec {
    /// A spec of one capacity, no weight, no bandwidth.
    pub fn new(capacity: Capacity) -> TierSpec {
        TierSpec { capacities: vec![capacity], weight: None, bandwidth: None }
    }
}

impl FromStr for TierSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<TierSpec, SpecError> {
        let mut parts = text.split(':');
        let capacities = parts.next().unwrap_or_default().split(',').map(str::parse).collect::<Result<_, _>>()?;
        let mut spec = TierSpec { capacities, weight: None, bandwidth: None };
        for option in parts {
            let bad = || SpecError::BadOption { found: option.to_owned() };
            match option.split_once('=') {
                Some(("weight", weight)) => {
                    let valid = number(weight).and_then(AdapterWeight::new);
                    let valid = valid.ok_or_else(|| SpecError::BadWeight { found: weight.to_owned() })?;
                    spec.weight = Some(valid.get());
                }
                Some(("bw", rate)) => {
                    let rate = rate.strip_suffix("/s").unwrap_or(rate);
                    let rate = number(rate).or_else(|| bytes(rate)).filter(|rate| *rate > 0.0).ok_or_else(bad)?;
                    spec.bandwidth = Some(rate);
                }
                _ => return Err(bad()),
            }
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities() {
        assert_eq!("1e4".parse::<Capacity>(), Ok(Capacity::Blocks(10_000)));
        assert_eq!("0".parse::<Capacity>(), Ok(Capacity::Blocks(0)));
        assert_eq!("1e7tok".parse::<Capacity>(), Ok(Capacity::Tokens(1e7)));
        assert_eq!("500GB".parse::<Capacity>(), Ok(Capacity::Bytes(5e11)));
        for bad in ["", "-1", "nan", "infinity", "1e4blocks", "GiB", "tok", "1.5e0x"] {
            assert!(matches!(bad.parse::<Capacity>(), Err(SpecError::BadCapacity { .. })), "{bad:?}");
        }
        assert!(matches!("2.5".parse::<Capacity>(), Err(SpecError::FractionalBlocks { .. })));
    }

    /// A whole number too large for a tier says so, and the limit, in every
    /// form: blocks past `u64` when parsed, the rest when made blocks.
    #[test]
    fn too_large_capacities_name_the_limit() {
        let limit = "more than a tier can hold: at most 4294967294 blocks (use inf)";
        for huge in ["99999999999999999999", "1e20", "18446744073709551616"] {
            let error = huge.parse::<Capacity>().unwrap_err();
            assert_eq!(error, SpecError::TooLarge { found: huge.to_owned(), blocks: None });
            assert_eq!(error.to_string(), format!("{huge:?} is {limit}"));
        }
        // The largest `u64` parses; the tier rejects it, with its count.
        let max: Capacity = "18446744073709551615".parse().unwrap();
        assert_eq!(
            max.blocks(16, None).unwrap_err().to_string(),
            format!("\"18446744073709551615\" is 18446744073709551615 blocks, {limit}")
        );
        assert_eq!(Capacity::Blocks(Capacity::MAX_BLOCKS).blocks(16, None), Ok(Some(4_294_967_294)));
        let one_more = Capacity::Blocks(Capacity::MAX_BLOCKS + 1).blocks(16, None).unwrap_err();
        assert_eq!(one_more.to_string(), format!("\"4294967295\" is 4294967295 blocks, {limit}"));
        // Tokens and bytes: with their block count while it fits in `u64`,
        // without it past (where `as` would have saturated to u64::MAX).
        let tokens: Capacity = "1e15tok".parse().unwrap();
        assert_eq!(
            tokens.blocks(512, None).unwrap_err().to_string(),
            format!("\"1000000000000000tok\" is 1953125000000 blocks, {limit}")
        );
        let far: Capacity = "1e30tok".parse().unwrap();
        assert_eq!(far.blocks(512, None), Err(SpecError::TooLarge { found: far.to_string(), blocks: None }),);
        let bytes: Capacity = "1e30B".parse().unwrap();
        assert!(bytes.blocks(16, Some(2)).unwrap_err().to_string().ends_with(&format!("is {limit}")));
        let bytes = Capacity::Bytes(6.4e16);
        assert_eq!(
            bytes.blocks(1, Some(1)).unwrap_err(),
            SpecError::TooLarge { found: bytes.to_string(), blocks: Some(64_000_000_000_000_000) }
        );
        assert_eq!("1e4tok".parse::<Capacity>().unwrap().blocks(512, None), Ok(Some(19)));
    }

    #[test]
    fn blocks() {
        assert_eq!(Capacity::Tokens(1023.0).blocks(512, None), Ok(Some(1)));
        assert_eq!(Capacity::Bytes(1e9).blocks(16, Some(1000)), Ok(Some(62_500)));
        assert!(matches!(Capacity::Bytes(1e9).blocks(16, None), Err(SpecError::NeedsBytesPerToken { .. })));
        assert_eq!(
            Capacity::Blocks(1 << 33).blocks(16, None),
            Err(SpecError::TooLarge { found: "8589934592".to_owned(), blocks: Some(1 << 33) })
        );
    }

    #[test]
    fn specs() {
        let spec: TierSpec = "inf:bw=5e9".parse().unwrap();
        assert_eq!((spec.capacities, spec.bandwidth), (vec![Capacity::Infinite], Some(5e9)));
        assert!(matches!("1e4:weight=0".parse::<TierSpec>(), Err(SpecError::BadWeight { .. })));
        assert!(matches!("1e4:speed=1".parse::<TierSpec>(), Err(SpecError::BadOption { .. })));
        assert!(matches!("1e4,,1e5".parse::<TierSpec>(), Err(SpecError::BadCapacity { .. })));
    }
}
