//! A hit case — which prefix of a hybrid model's request every layer group
//! can serve, as JSON — parsed and checked: [`parse_hit_case`], for
//! `prefetch-plan hit`.
//!
//! # Format
//!
//! Flat (LMCache's `fold_unfold_ranked`: the chunk-major layout, bit
//! `j·G·R + g·R + r` is chunk `j`, group `g`, rank `r`):
//!
//! ```json
//! {"num_chunks": 5, "num_ranks": 1, "windows": [-1, 2], "found": "1111101110"}
//! ```
//!
//! Grouped (`fold_unfold_grouped`: one row per group and rank, each with
//! its window):
//!
//! ```json
//! {"rows": ["11110", [2, 3, 4]], "windows": [-1, 2], "num_chunks": 5}
//! ```
//!
//! | field | value |
//! |---|---|
//! | `windows` | one window per group (flat) or per row (grouped): an integer, `≤ 0` full attention, `≥ 1` a sliding window; at least one |
//! | `num_chunks` | flat: the number of chunks `C`, an integer from 0. Grouped: optional, each row's width; without it every row must be a bit string (an index list has no length of its own) and the rows must be equally long |
//! | `num_ranks` | flat only, optional (default 1): `R`, at least 1 |
//! | `found` | flat: the present keys, an array of indices below `C·G·R` or a string of `C·G·R` `0`/`1` characters |
//! | `rows` | grouped: one row per window, each an array of chunk indices or a bit string |
//!
//! A case has `found` or `rows`, not both. Unknown fields are errors.
//!
//! ```
//! use prefetch_plan::hit_case::{parse_hit_case, HitCase};
//!
//! let case = parse_hit_case(r#"{"rows": ["11110", "00111"], "windows": [-1, 2]}"#)?;
//! assert!(matches!(case, HitCase::Grouped { ref rows, .. } if rows.len() == 2));
//! # Ok::<(), prefetch_plan::case::CaseError>(())
//! ```

use bitmap_core::Bitmap;
use prefetch_policy::HybridError;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::case::{Bound, CaseLimits, Source, parser_error, unsigned};
use crate::error::{CaseError, CaseErrorKind};

/// One hit request, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HitCase {
    /// The flat, chunk-major layout.
    Flat {
        /// `C`.
        num_chunks: usize,
        /// `R`, at least 1.
        num_ranks: usize,
        /// One window per group (`G` = its length, at least 1).
        windows: Vec<i64>,
        /// `C·G·R` bits.
        found: Bitmap,
    },
    /// One row per group and rank.
    Grouped {
        /// The rows, all of one length, one per window.
        rows: Vec<Bitmap>,
        /// One window per row.
        windows: Vec<i64>,
    },
}

/// Parses and checks one hit case with the default [`CaseLimits`].
///
/// # Errors
///
/// A [`CaseError`] for the first problem found.
pub fn parse_hit_case(text: &str) -> Result<HitCase, CaseError> {
    parse_hit_case_with(text, &CaseLimits::default())
}

/// [`parse_hit_case`] with the given limits (on the bytes of `found` or of
/// all rows together).
///
/// # Errors
///
/// As [`parse_hit_case`].
pub fn parse_hit_case_with(text: &str, limits: &CaseLimits) -> Result<HitCase, CaseError> {
    let source = Source { text };
    let raw = source.raw_hit_case()?;
    let windows = source.windows(raw.windows)?;
    match (raw.found, raw.rows) {
        (Some(found), None) => source.flat(&raw, found, windows, limits),
        (None, Some(rows)) => source.grouped(&raw, rows, windows, limits),
        (Some(_), Some(_)) => Err(whole_case(text, "a hit case has `found` (flat) or `rows` (grouped), not both")),
        (None, None) => Err(whole_case(text, "missing field `found` (flat) or `rows` (grouped)")),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a hit case: a JSON object with windows and found or rows")]
struct RawHitCase<'a> {
    #[serde(borrow)]
    windows: &'a RawValue,
    #[serde(borrow, default)]
    num_chunks: Option<&'a RawValue>,
    #[serde(borrow, default)]
    num_ranks: Option<&'a RawValue>,
    #[serde(borrow, default)]
    found: Option<&'a RawValue>,
    #[serde(borrow, default)]
    rows: Option<&'a RawValue>,
}

const EXPECTED_NUM_RANKS: &str = "a number of ranks (an integer from 1)";
const EXPECTED_FOUND: &str = "the present keys: an array of indices or a string of 0/1 characters";
const EXPECTED_ROWS: &str = "an array of rows, one per window";
const EXPECTED_ROW: &str = "a row: an array of chunk indices or a string of 0/1 characters";
const EXPECTED_BIT_STRING_ROW: &str = "a row as a string of 0/1 characters (an index list needs num_chunks)";

/// An error about the case as a whole (no single field to blame).
fn whole_case(text: &str, message: &str) -> CaseError {
    let leading = &text[..text.len() - text.trim_start().len()];
    let line = 1 + leading.matches('\n').count();
    CaseError::new(line, None, None, CaseErrorKind::Json { message: message.to_owned() })
}

impl<'t> Source<'t> {
    fn raw_hit_case(&self) -> Result<RawHitCase<'t>, CaseError> {
        self.check_object("a hit case: a JSON object with windows and found or rows")?;
        serde_json::from_str(self.text).map_err(|error| parser_error(&error))
    }

    fn flat(
        &self,
        raw: &RawHitCase<'_>,
        found: &RawValue,
        windows: Vec<i64>,
        limits: &CaseLimits,
    ) -> Result<HitCase, CaseError> {
        let Some(raw_chunks) = raw.num_chunks else {
            return Err(whole_case(self.text, "missing field `num_chunks` (the flat case needs it)"));
        };
        let num_chunks = self.num_chunks(raw_chunks)?;
        let num_ranks = match raw.num_ranks {
            None => 1,
            Some(raw_ranks) => match unsigned(raw_ranks) {
                Some(0) => return Err(self.error(raw_ranks, "num_ranks".into(), HybridError::ZeroRanks.into())),
                Some(ranks) => ranks,
                None => return Err(self.wrong_type(raw_ranks, "num_ranks".into(), EXPECTED_NUM_RANKS)),
            },
        };
        let num_groups = windows.len();
        let Some(len) = num_chunks.checked_mul(num_groups).and_then(|keys| keys.checked_mul(num_ranks)) else {
            let kind = HybridError::SizeOverflow { num_chunks, num_groups, num_ranks }.into();
            return Err(self.error(found, "found".into(), kind));
        };
        let needed = (len.div_ceil(64) as u64).saturating_mul(8);
        if needed > limits.max_lookup_bytes as u64 {
            return Err(self.error(
                found,
                "found".into(),
                CaseErrorKind::TooLarge { needed, limit: limits.max_lookup_bytes },
            ));
        }
        let found =
            self.bits(found, Bound::named(len, "num_chunks × groups × ranks"), &|| "found".into(), EXPECTED_FOUND)?;
        Ok(HitCase::Flat { num_chunks, num_ranks, windows, found })
    }

    fn grouped(
        &self,
        raw: &RawHitCase<'_>,
        rows: &RawValue,
        windows: Vec<i64>,
        limits: &CaseLimits,
    ) -> Result<HitCase, CaseError> {
        if let Some(raw_ranks) = raw.num_ranks {
            let kind = CaseErrorKind::Json {
                message: "num_ranks is for the flat case: in the grouped case each rank is a row".into(),
            };
            return Err(self.error(raw_ranks, "num_ranks".into(), kind));
        }
        let num_chunks = raw.num_chunks.map(|raw| self.num_chunks(raw)).transpose()?;
        let items: Vec<&RawValue> =
            serde_json::from_str(rows.get()).map_err(|_| self.wrong_type(rows, "rows".into(), EXPECTED_ROWS))?;
        if items.len() != windows.len() {
            let kind = HybridError::RowWindowMismatch { rows: items.len(), windows: windows.len() }.into();
            return Err(self.error(rows, "rows".into(), kind));
        }
        let mut used = 0u64;
        let mut parsed: Vec<Bitmap> = Vec::with_capacity(items.len());
        for (at, item) in items.iter().enumerate() {
            let field = || format!("rows[{at}]");
            let bits = match num_chunks {
                Some(cols) => {
                    used = used.saturating_add((cols.div_ceil(64) as u64).saturating_mul(8));
                    if used > limits.max_lookup_bytes as u64 {
                        return Err(self.error(
                            item,
                            field(),
                            CaseErrorKind::TooLarge { needed: used, limit: limits.max_lookup_bytes },
                        ));
                    }
                    self.bits(item, Bound::named(cols, "num_chunks"), &field, EXPECTED_ROW)?
                }
                None => {
                    // A bit string's length is its own: read it at that
                    // length (the text already holds as many bytes).
                    let Ok(text) = serde_json::from_str::<String>(item.get()) else {
                        return Err(self.wrong_type(item, field(), EXPECTED_BIT_STRING_ROW));
                    };
                    let len = text.chars().count();
                    let expected = parsed.first().map_or(len, Bitmap::len);
                    if len != expected {
                        let kind = HybridError::RaggedRows { row: at, len, expected }.into();
                        return Err(self.error(item, field(), kind));
                    }
                    self.bits(item, Bound::named(len, "row 0's length"), &field, EXPECTED_BIT_STRING_ROW)?
                }
            };
            parsed.push(bits);
        }
        Ok(HitCase::Grouped { rows: parsed, windows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> CaseError {
        parse_hit_case(text).expect_err(text)
    }

    #[test]
    fn flat_cases() {
        let case = parse_hit_case(r#"{"num_chunks": 2, "num_ranks": 2, "windows": [-1], "found": [0, 1, 3]}"#).unwrap();
        let HitCase::Flat { num_chunks, num_ranks, windows, found } = case else { panic!("not flat") };
        assert_eq!((num_chunks, num_ranks, windows, found.to_string()), (2, 2, vec![-1], "1101".to_owned()));
        let case = parse_hit_case(r#"{"num_chunks": 3, "windows": [-1, 2], "found": "111111"}"#).unwrap();
        assert!(matches!(case, HitCase::Flat { num_ranks: 1, .. }));
    }

    #[test]
    fn grouped_cases() {
        let case = parse_hit_case(r#"{"rows": ["110", [2]], "windows": [-1, 1], "num_chunks": 3}"#).unwrap();
        assert_eq!(
            case,
            HitCase::Grouped { rows: vec!["110".parse().unwrap(), "001".parse().unwrap()], windows: vec![-1, 1] }
        );
        let case = parse_hit_case(r#"{"rows": ["", ""], "windows": [-1, 2]}"#).unwrap();
        assert!(matches!(case, HitCase::Grouped { ref rows, .. } if rows.iter().all(Bitmap::is_empty)));
    }

    #[test]
    fn errors() {
        let e = error(r#"{"num_chunks": 2, "num_ranks": 0, "windows": [-1], "found": []}"#);
        assert_eq!(e.to_string(), "num_ranks: the number of ranks must be at least 1 (got 0)");
        let e = error(r#"{"num_chunks": 2, "windows": [-1, 3], "found": [4]}"#);
        assert_eq!(e.to_string(), "found[0]: index 4 is out of range for num_chunks × groups × ranks 4");
        let e = error(r#"{"num_chunks": 2, "windows": [-1, 3], "found": "111"}"#);
        assert_eq!(e.to_string(), "found: the bit string has 3 characters, but num_chunks × groups × ranks is 4");
        let e = error(r#"{"num_chunks": -2, "windows": [-1], "found": []}"#);
        assert_eq!(e.to_string(), "num_chunks: the number of chunks must not be negative (got -2)");
        let e = error(r#"{"windows": [-1], "found": []}"#);
        assert_eq!(e.to_string(), "missing field `num_chunks` (the flat case needs it)");
        let e = error(r#"{"windows": [], "found": [], "num_chunks": 1}"#);
        assert_eq!(e.to_string(), "windows: the window list is empty: at least one group is needed");
        let e = error(r#"{"windows": [-1], "found": [], "rows": []}"#);
        assert_eq!(e.to_string(), "a hit case has `found` (flat) or `rows` (grouped), not both");
        let e = error(r#"{"windows": [-1]}"#);
        assert_eq!(e.to_string(), "missing field `found` (flat) or `rows` (grouped)");
        let e = error(r#"{"rows": ["11"], "windows": [-1, 2]}"#);
        assert_eq!(e.to_string(), "rows: 1 rows but 2 windows: each row needs exactly one window");
        let e = error(r#"{"rows": ["11", "1"], "windows": [-1, 2]}"#);
        assert_eq!(e.to_string(), "rows[1]: row 1 has 1 bits, but row 0 has 2");
        let e = error(r#"{"rows": ["11", [0]], "windows": [-1, 2]}"#);
        assert!(e.to_string().starts_with("rows[1]: expected a row as a string of 0/1 characters"), "{e}");
        let e = error(r#"{"rows": ["11", "1x"], "windows": [-1, 2]}"#);
        assert_eq!(
            e.to_string(),
            "rows[1]: invalid character 'x' at position 1 of the bit string: expected '0' or '1'"
        );
        let e = error(r#"{"rows": ["11"], "windows": [-1], "num_ranks": 1}"#);
        assert_eq!(e.field(), Some("num_ranks"));
        let e = error(r#"{"rows": ["11"], "windows": [-1], "num_chunks": 3}"#);
        assert_eq!(e.to_string(), "rows[0]: the bit string has 2 characters, but num_chunks is 3");
        let e = error(r#"{"num_chunks": 4611686018427387904, "num_ranks": 8, "windows": [-1], "found": []}"#);
        assert!(matches!(e.kind(), CaseErrorKind::Hybrid(HybridError::SizeOverflow { .. })), "{e}");
        let e = error(r#"{"num_chunks": 1000000000000, "windows": [-1], "found": []}"#);
        assert!(matches!(e.kind(), CaseErrorKind::TooLarge { .. }), "{e}");
    }
}
