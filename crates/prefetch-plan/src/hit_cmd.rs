//! `prefetch-plan hit`: read hit cases ([`hit_case`](crate::hit_case)),
//! write one answer line per case: the prefix every layer group can serve
//! and the keys to keep for it (LMCache's `fold_unfold_ranked` and
//! `fold_unfold_grouped`).
//!
//! The same rules as `plan`: a bad case stops the run after the answers
//! before it, with its line and field on standard error and exit status 2
//! (see [`plan_cmd`](crate::plan_cmd)).
//!
//! # The answer
//!
//! Flat: `{"hit": N, "retain": [indices]}`, the flat keys (bits of the
//! chunk-major layout) of the unfolded mask. Grouped: `{"hit": N, "retain":
//! [[indices], …]}`, each row's chunks.

use core::fmt;
use std::io::{self, BufRead, Write};

use bitmap_core::Bitmap;
use prefetch_policy::{FoldWorkspace, fold_unfold_grouped_into, fold_unfold_ranked_into};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::answer::{AnswerError, KeysJson, RowsJson};
use crate::case::CaseLimits;
use crate::error::CliError;
use crate::hit_case::{HitCase, parse_hit_case_with};
use crate::json;
use crate::plan_cmd::{answer_each, bad_case, unplannable};

/// How `hit` runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HitOptions {
    /// What one case may allocate.
    pub limits: CaseLimits,
    /// Flush after every answer rather than when the buffer fills.
    pub flush_each_answer: bool,
}

impl HitOptions {
    /// These options with the given limits.
    #[must_use]
    pub fn with_limits(mut self, limits: CaseLimits) -> HitOptions {
        self.limits = limits;
        self
    }

    /// These options, flushing after every answer or not.
    #[must_use]
    pub fn with_flush_each_answer(mut self, flush: bool) -> HitOptions {
        self.flush_each_answer = flush;
        self
    }
}

/// Computes hits case after case, reusing one fold workspace and one set of
/// output buffers.
///
/// ```
/// use prefetch_plan::hit_case::parse_hit_case;
/// use prefetch_plan::hit_cmd::HitSolver;
///
/// // The issue's worked case: C = 5, [full {0,1,2,3}, window 2 {2,3,4}].
/// let case = parse_hit_case(r#"{"num_chunks": 5, "windows": [-1, 2], "found": [0, 2, 4, 5, 6, 7, 9]}"#)?;
/// let mut solver = HitSolver::new();
/// assert_eq!(solver.answer(&case)?.to_string(), r#"{"hit": 4, "retain": [0, 2, 4, 5, 6, 7]}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct HitSolver {
    workspace: FoldWorkspace,
    mask: Bitmap,
    rows: Vec<Bitmap>,
}

impl HitSolver {
    /// A solver with empty buffers.
    pub fn new() -> HitSolver {
        HitSolver::default()
    }

    /// The hit and the retained keys of `case`.
    ///
    /// # Errors
    ///
    /// [`AnswerError::Hybrid`] if the fold refuses the case; a case from
    /// [`parse_hit_case`](crate::hit_case::parse_hit_case) passes its
    /// checks.
    pub fn answer(&mut self, case: &HitCase) -> Result<HitAnswer<'_>, AnswerError> {
        match case {
            HitCase::Flat { num_chunks, num_ranks, windows, found } => {
                let hit = fold_unfold_ranked_into(
                    found,
                    *num_chunks,
                    *num_ranks,
                    windows,
                    &mut self.workspace,
                    &mut self.mask,
                )?;
                Ok(HitAnswer { hit, retain: Retain::Flat(&self.mask) })
            }
            HitCase::Grouped { rows, windows } => {
                let hit = fold_unfold_grouped_into(rows, windows, &mut self.workspace, &mut self.rows)?;
                Ok(HitAnswer { hit, retain: Retain::Rows(&self.rows) })
            }
        }
    }
}

/// The answer to one hit case (see the [module docs](self)).
///
/// Its `Display` is the JSON line without the newline.
#[derive(Clone, Copy, Debug)]
pub struct HitAnswer<'s> {
    hit: usize,
    retain: Retain<'s>,
}

#[derive(Clone, Copy, Debug)]
enum Retain<'s> {
    Flat(&'s Bitmap),
    Rows(&'s [Bitmap]),
}

impl HitAnswer<'_> {
    /// The hit length in chunks.
    pub fn hit(&self) -> usize {
        self.hit
    }

    /// Writes the answer as one line of JSON, newline included.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_line<W: Write>(&self, writer: W) -> io::Result<()> {
        json::write_line(writer, self)
    }
}

impl fmt::Display for HitAnswer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&json::to_string(self))
    }
}

impl Serialize for HitAnswer<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut answer = serializer.serialize_struct("HitAnswer", 2)?;
        answer.serialize_field("hit", &self.hit)?;
        match self.retain {
            Retain::Flat(mask) => answer.serialize_field("retain", &KeysJson(mask))?,
            Retain::Rows(rows) => answer.serialize_field("retain", &RowsJson(rows))?,
        }
        answer.end()
    }
}

/// Answers every hit case of `input`, one line each, and returns the number
/// answered.
///
/// # Errors
///
/// As [`plan_cmd::run`](crate::plan_cmd::run): at the first bad case,
/// after the answers before it are written.
///
/// ```
/// use prefetch_plan::hit_cmd::{run, HitOptions};
///
/// let input = r#"{"rows": ["1111", "0011"], "windows": [-1, 2]}
/// {"rows": ["1111", "0011"], "windows": [-1]}
/// "#;
/// let mut output = Vec::new();
/// let error = run(input.as_bytes(), &mut output, &HitOptions::default()).unwrap_err();
/// assert_eq!(String::from_utf8(output)?, "{\"hit\": 4, \"retain\": [[0, 1, 2, 3], [2, 3]]}\n");
/// assert_eq!(error.to_string(), "line 2: rows: 2 rows but 1 windows: each row needs exactly one window");
/// assert_eq!(error.exit_code(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run<R: BufRead, W: Write>(input: R, output: W, options: &HitOptions) -> Result<usize, CliError> {
    let mut solver = HitSolver::new();
    answer_each(input, output, options.flush_each_answer, |text, case_line, output| {
        let case = parse_hit_case_with(text, &options.limits).map_err(|error| bad_case(error, case_line))?;
        let answer = solver.answer(&case).map_err(|error| unplannable(error, case_line))?;
        answer.write_line(output).map_err(CliError::io("writing the answers"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hit_case::parse_hit_case;

    fn answer(text: &str) -> String {
        HitSolver::new().answer(&parse_hit_case(text).unwrap()).unwrap().to_string()
    }

    #[test]
    fn the_issue_worked_cases() {
        // A window-2 group holding only chunks {4, 5} of 6 beside a full
        // group holding all: hit 6.
        assert_eq!(
            answer(r#"{"rows": ["111111", "000011"], "windows": [-1, 2]}"#),
            r#"{"hit": 6, "retain": [[0, 1, 2, 3, 4, 5], [4, 5]]}"#
        );
        // Mamba (w = 1) needs only the last chunk.
        assert_eq!(
            answer(r#"{"rows": ["1111", "0001"], "windows": [-1, 1]}"#),
            r#"{"hit": 4, "retain": [[0, 1, 2, 3], [3]]}"#
        );
        // A chunk missing one rank is absent: chunk 1 lacks rank 1.
        assert_eq!(
            answer(r#"{"num_chunks": 3, "num_ranks": 2, "windows": [-1], "found": "111011"}"#),
            r#"{"hit": 1, "retain": [0, 1]}"#
        );
        assert_eq!(answer(r#"{"num_chunks": 0, "windows": [-1, 2], "found": []}"#), r#"{"hit": 0, "retain": []}"#);
    }

    #[test]
    fn buffers_are_reused_without_stale_state() {
        let mut solver = HitSolver::new();
        let big = parse_hit_case(r#"{"rows": ["1111", "1111"], "windows": [-1, -1]}"#).unwrap();
        let small = parse_hit_case(r#"{"rows": ["10"], "windows": [-1]}"#).unwrap();
        assert_eq!(solver.answer(&big).unwrap().to_string(), r#"{"hit": 4, "retain": [[0, 1, 2, 3], [0, 1, 2, 3]]}"#);
        assert_eq!(solver.answer(&small).unwrap().to_string(), r#"{"hit": 1, "retain": [[0]]}"#);
    }
}
