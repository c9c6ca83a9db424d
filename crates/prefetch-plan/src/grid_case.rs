//! A grid case — one grid plan request as JSON, LMCache's newer
//! `plan_load` — parsed and checked: [`parse_grid_case`]. `plan` takes it
//! beside the flat case: a case with a `windows` field is a grid case.
//!
//! # Format
//!
//! ```json
//! {"windows": [-1, 2], "num_chunks": 4,
//!  "l1": {"0": ["1100", [0, 1]]}, "l2": {"1": ["1111", "0011"]}, "fetching": "prefix"}
//! ```
//!
//! | field | value |
//! |---|---|
//! | `windows` | one window per row (a row is an object group and rank): an integer, `≤ 0` full attention, `≥ 1` a sliding window of that many chunks; at least one |
//! | `num_chunks` | the number of chunks: every row's width, an integer from 0 |
//! | `l1` | optional: L1 manager index (a JSON string of decimal digits) → the cells it locked, one row per window, each an array of chunk indices below `num_chunks` or a string of `num_chunks` `0`/`1` characters |
//! | `l2` | optional: L2 adapter index → the cells it locked, the same way |
//! | `fetching` | optional: `"prefix"` (the default) or `"full"` |
//!
//! Unknown fields are errors, as in the flat case. The grids of one case
//! are limited to the same number of bytes as the flat case's lookups
//! ([`CaseLimits`]).
//!
//! ```
//! use prefetch_plan::grid_case::parse_grid_case;
//! use prefetch_policy::FetchingPolicy;
//!
//! let case = parse_grid_case(r#"{"windows": [-1, 2], "num_chunks": 4, "l1": {"0": ["1100", [0, 1]]}}"#)?;
//! assert_eq!((case.windows.as_slice(), case.num_chunks, case.fetching), (&[-1, 2][..], 4, FetchingPolicy::Prefix));
//! assert_eq!(format!("{:?}", case.l1), "{0: [1100, 1100]}");
//! assert!(case.l2.is_empty());
//! # Ok::<(), prefetch_plan::case::CaseError>(())
//! ```

use bitmap_core::Bitmap;
use prefetch_policy::{FetchingPolicy, Grid, GridMap, HybridError, chunk_count};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::case::{Bound, CaseLimits, RawEntries, Source, adapter_key, first_repeat, parser_error};
use crate::error::{CaseError, CaseErrorKind};

/// One grid plan request, checked: at least one window, every grid has one
/// row per window of `num_chunks` bits.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GridCase {
    /// One window per row.
    pub windows: Vec<i64>,
    /// The number of chunks (every row's width).
    pub num_chunks: usize,
    /// L1 manager index → the cells it locked.
    pub l1: GridMap,
    /// L2 adapter index → the cells it locked.
    pub l2: GridMap,
    /// Which cells are needed.
    pub fetching: FetchingPolicy,
}

/// Whether `text` is a grid case rather than a flat one: a JSON object with
/// a `windows` field. Text that is not such an object (or not JSON) is left
/// to the flat parser, whose errors describe the flat case.
pub fn is_grid_case(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default)]
        windows: Option<IgnoredAny>,
    }
    // Most cases are flat and never mention the word: skip the second scan.
    text.contains("\"windows\"")
        && text.trim_start().starts_with('{')
        && serde_json::from_str::<Probe>(text).is_ok_and(|probe| probe.windows.is_some())
}

/// Parses and checks one grid case with the default [`CaseLimits`].
///
/// # Errors
///
/// A [`CaseError`] for the first problem found, checking `windows`,
/// `num_chunks`, `fetching`, `l1` and `l2` in that order.
pub fn parse_grid_case(text: &str) -> Result<GridCase, CaseError> {
    parse_grid_case_with(text, &CaseLimits::default())
}

/// [`parse_grid_case`] with the given limits.
///
/// # Errors
///
/// As [`parse_grid_case`].
pub fn parse_grid_case_with(text: &str, limits: &CaseLimits) -> Result<GridCase, CaseError> {
    let source = Source { text };
    source.check_object("a grid case: a JSON object with windows, num_chunks, l1, l2 and fetching")?;
    let raw: RawGridCase<'_> = serde_json::from_str(text).map_err(|error| parser_error(&error))?;
    let windows = source.windows(raw.windows)?;
    let num_chunks = source.num_chunks(raw.num_chunks)?;
    let fetching = raw.fetching.map(|raw| source.fetching(raw)).transpose()?.unwrap_or_default();
    let mut budget = Budget { used: 0, limit: limits.max_lookup_bytes };
    let shape = (windows.len(), num_chunks);
    let l1 = raw.l1.map(|raw| source.tier(raw, "l1", shape, &mut budget)).transpose()?.unwrap_or_default();
    let l2 = raw.l2.map(|raw| source.tier(raw, "l2", shape, &mut budget)).transpose()?.unwrap_or_default();
    Ok(GridCase { windows, num_chunks, l1, l2, fetching })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a grid case: a JSON object with windows, num_chunks, l1, l2 and fetching")]
struct RawGridCase<'a> {
    #[serde(borrow)]
    windows: &'a RawValue,
    #[serde(borrow)]
    num_chunks: &'a RawValue,
    #[serde(borrow, default)]
    l1: Option<&'a RawValue>,
    #[serde(borrow, default)]
    l2: Option<&'a RawValue>,
    #[serde(borrow, default)]
    fetching: Option<&'a RawValue>,
}

const EXPECTED_WINDOWS: &str = "an array of windows (integers: <= 0 full attention, >= 1 a sliding window)";
const EXPECTED_WINDOW: &str = "a window (an integer: <= 0 full attention, >= 1 a sliding window)";
const EXPECTED_NUM_CHUNKS: &str = "a number of chunks (an integer from 0)";
const EXPECTED_FETCHING: &str = "a fetching policy: \"prefix\" or \"full\"";
const EXPECTED_TIER: &str = "an object from tier index to the cells it locked (one row per window)";
const EXPECTED_ROWS: &str = "an array of rows, one per window";
const EXPECTED_ROW: &str = "a row: an array of chunk indices or a string of 0/1 characters";

/// The bytes the grids of a case may still take.
struct Budget {
    used: u64,
    limit: usize,
}

impl<'t> Source<'t> {
    /// A non-empty array of integer windows.
    pub(crate) fn windows(&self, raw: &RawValue) -> Result<Vec<i64>, CaseError> {
        let items: Vec<&RawValue> =
            serde_json::from_str(raw.get()).map_err(|_| self.wrong_type(raw, "windows".into(), EXPECTED_WINDOWS))?;
        if items.is_empty() {
            return Err(self.error(raw, "windows".into(), HybridError::NoWindows.into()));
        }
        items
            .iter()
            .enumerate()
            .map(|(at, item)| {
                serde_json::from_str::<i64>(item.get())
                    .map_err(|_| self.wrong_type(item, format!("windows[{at}]"), EXPECTED_WINDOW))
            })
            .collect()
    }

    /// A chunk count: a negative one is the hybrid semantics' error, as in
    /// LMCache.
    pub(crate) fn num_chunks(&self, raw: &RawValue) -> Result<usize, CaseError> {
        if let Ok(signed) = serde_json::from_str::<i64>(raw.get()) {
            return chunk_count(signed).map_err(|error| self.error(raw, "num_chunks".into(), error.into()));
        }
        crate::case::unsigned(raw).ok_or_else(|| self.wrong_type(raw, "num_chunks".into(), EXPECTED_NUM_CHUNKS))
    }

    fn fetching(&self, raw: &RawValue) -> Result<FetchingPolicy, CaseError> {
        serde_json::from_str::<String>(raw.get())
            .ok()
            .and_then(|name| name.parse().ok())
            .ok_or_else(|| self.wrong_type(raw, "fetching".into(), EXPECTED_FETCHING))
    }

    /// One tier's map (`l1` or `l2`).
    fn tier(
        &self,
        raw: &RawValue,
        name: &str,
        shape: (usize, usize),
        budget: &mut Budget,
    ) -> Result<GridMap, CaseError> {
        let RawEntries(entries) =
            serde_json::from_str(raw.get()).map_err(|_| self.wrong_type(raw, name.into(), EXPECTED_TIER))?;
        let field = |key: &str| format!("{name}.{}", serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}")));
        let indices: Vec<usize> = entries
            .iter()
            .map(|(key, value)| {
                adapter_key(key)
                    .ok_or_else(|| self.error(value, field(key), CaseErrorKind::InvalidAdapterKey { key: key.clone() }))
            })
            .collect::<Result<_, _>>()?;
        if let Some((position, _)) = first_repeat(indices.iter().copied()) {
            let (key, value) = &entries[position];
            return Err(self.error(value, field(key), CaseErrorKind::DuplicateLookup { index: indices[position] }));
        }
        let (rows, cols) = shape;
        let bytes_per_grid = (rows as u64).saturating_mul(cols.div_ceil(64) as u64).saturating_mul(8);
        let mut map = GridMap::new();
        for ((key, value), index) in entries.iter().zip(indices) {
            budget.used = budget.used.saturating_add(bytes_per_grid);
            if budget.used > budget.limit as u64 {
                let kind = CaseErrorKind::TooLarge { needed: budget.used, limit: budget.limit };
                return Err(self.error(value, field(key), kind));
            }
            let items: Vec<&RawValue> =
                serde_json::from_str(value.get()).map_err(|_| self.wrong_type(value, field(key), EXPECTED_ROWS))?;
            if items.len() != rows {
                let kind = HybridError::RowWindowMismatch { rows: items.len(), windows: rows }.into();
                return Err(self.error(value, field(key), kind));
            }
            let bound = Bound::named(cols, "num_chunks");
            let grid_rows: Vec<Bitmap> = items
                .iter()
                .enumerate()
                .map(|(r, item)| self.bits(item, bound, &|| format!("{}[{r}]", field(key)), EXPECTED_ROW))
                .collect::<Result<_, _>>()?;
            // Every row has `cols` bits, and there are `rows` of them: the
            // map's shared shape holds.
            let grid = Grid::from_rows(grid_rows)
                .map_err(|error| self.error(value, field(key), CaseErrorKind::Json { message: error.to_string() }))?;
            map.insert(index, grid)
                .map_err(|error| self.error(value, field(key), CaseErrorKind::Json { message: error.to_string() }))?;
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> CaseError {
        parse_grid_case(text).expect_err(text)
    }

    #[test]
    fn detection() {
        assert!(is_grid_case(r#"{"windows": [-1], "num_chunks": 1}"#));
        assert!(is_grid_case("\n  {\"num_chunks\": 1,\n \"windows\": []}"));
        assert!(!is_grid_case(r#"{"num_keys": 1, "adapters": [], "lookup": {}}"#));
        assert!(!is_grid_case(r#"{"num_keys": 1, "adapters": [], "lookup": {}, "policy": "\"windows\""}"#));
        assert!(!is_grid_case(r#"["windows"]"#));
        assert!(!is_grid_case(r#"{"windows": [-1], "#));
    }

    #[test]
    fn both_row_encodings_and_defaults() {
        let case = parse_grid_case(
            r#"{"l2": {"3": ["101", [2, 0, 2]], "1": [[], "111"]}, "num_chunks": 3, "windows": [0, 5], "fetching": "full"}"#,
        )
        .unwrap();
        assert_eq!(format!("{:?}", case.l2), "{1: [000, 111], 3: [101, 101]}");
        assert_eq!(case.fetching, FetchingPolicy::Full);
        let case = parse_grid_case(r#"{"windows": [-1], "num_chunks": 0}"#).unwrap();
        assert!(case.l1.is_empty() && case.l2.is_empty());
        assert_eq!(case.fetching, FetchingPolicy::Prefix);
    }

    #[test]
    fn errors_name_the_field() {
        let e = error(r#"{"windows": [], "num_chunks": 3}"#);
        assert_eq!(e.to_string(), "windows: the window list is empty: at least one group is needed");
        let e = error(r#"{"windows": [-1, 1.5], "num_chunks": 3}"#);
        assert_eq!(e.field(), Some("windows[1]"));
        let e = error(r#"{"windows": [-1], "num_chunks": -3}"#);
        assert_eq!(e.to_string(), "num_chunks: the number of chunks must not be negative (got -3)");
        let e = error(r#"{"windows": [-1], "num_chunks": "3"}"#);
        assert_eq!(e.to_string(), r#"num_chunks: expected a number of chunks (an integer from 0), found `"3"`"#);
        let e = error(r#"{"windows": [-1], "num_chunks": 3, "fetching": "all"}"#);
        assert_eq!(e.to_string(), r#"fetching: expected a fetching policy: "prefix" or "full", found `"all"`"#);
        let e = error(r#"{"windows": [-1, 2], "num_chunks": 3, "l1": {"0": ["111"]}}"#);
        assert_eq!(e.to_string(), r#"l1."0": 1 rows but 2 windows: each row needs exactly one window"#);
        let e = error(r#"{"windows": [-1, 2], "num_chunks": 3, "l2": {"0": ["111", [0, 3]]}}"#);
        assert_eq!(e.to_string(), r#"l2."0"[1][1]: index 3 is out of range for num_chunks 3"#);
        let e = error(r#"{"windows": [-1], "num_chunks": 3, "l2": {"0": ["11"]}}"#);
        assert_eq!(e.to_string(), r#"l2."0"[0]: the bit string has 2 characters, but num_chunks is 3"#);
        let e = error(r#"{"windows": [-1], "num_chunks": 3, "l2": {"0": [7]}}"#);
        assert_eq!(e.field(), Some(r#"l2."0"[0]"#));
        let e = error(r#"{"windows": [-1], "num_chunks": 3, "l2": {"x": ["111"]}}"#);
        assert_eq!(e.field(), Some(r#"l2."x""#));
        let e = error(r#"{"windows": [-1], "num_chunks": 3, "l2": {"1": ["111"], "01": ["111"]}}"#);
        assert_eq!(e.field(), Some(r#"l2."01""#));
        let e = error(r#"{"windows": [-1], "num_chunks": 3, "l3": {}}"#);
        assert!(e.to_string().starts_with("unknown field `l3`"), "{e}");
    }

    #[test]
    fn the_limit_applies_before_allocating() {
        let limits = CaseLimits::with_max_lookup_bytes(16);
        let ok = r#"{"windows": [-1, -1], "num_chunks": 64, "l1": {"0": [[], []]}}"#;
        assert!(parse_grid_case_with(ok, &limits).is_ok());
        let e = parse_grid_case_with(
            r#"{"windows": [-1, -1], "num_chunks": 64, "l1": {"0": [[], []]}, "l2": {"0": [[], []]}}"#,
            &limits,
        )
        .unwrap_err();
        assert_eq!(e.kind(), &CaseErrorKind::TooLarge { needed: 32, limit: 16 });
        let huge = r#"{"windows": [-1], "num_chunks": 18446744073709551615, "l1": {"0": [[0]]}}"#;
        assert!(matches!(parse_grid_case(huge).unwrap_err().kind(), CaseErrorKind::TooLarge { .. }));
    }
}
