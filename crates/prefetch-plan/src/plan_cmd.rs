//! `prefetch-plan plan`: read cases, write one answer line per case. A
//! case is a flat plan request ([`case`](crate::case)) or, when it has a
//! `windows` field, a grid plan request ([`grid_case`](crate::grid_case)).
//!
//! # A bad case stops the run
//!
//! At the first case that cannot be planned, the command writes nothing
//! for it, flushes the answers of the cases before it (each whole, one
//! line per case), reports the error on standard error with its line and
//! field, and exits with status 2; the cases after it are not read.
//!
//! Why stop rather than skip: answers carry no case identifier, so a
//! consumer matches the *n*-th answer line to the *n*-th case. Skipping a
//! bad case would shift every later answer onto the wrong case, silently
//! for a consumer that does not parse standard error. Stopping keeps the
//! rule simple: every answer line on standard output is the whole answer
//! to the case at the same position, and a non-zero status means the
//! answers stop early, at the case the message names.

use std::io::{BufRead, BufWriter, Write};

use crate::answer::{AnswerError, Planner, Trim};
use crate::case::{CaseError, CaseLimits, parse_case_with};
use crate::error::{CliError, Location};
use crate::grid_case::{is_grid_case, parse_grid_case_with};
use crate::reader::CaseReader;

/// How `plan` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanOptions {
    /// The policy for cases that name none.
    pub policy: String,
    /// Whether to trim plans to their loadable prefix.
    pub trim: Trim,
    /// What one case may allocate.
    pub limits: CaseLimits,
    /// Flush after every answer (for an interactive terminal) rather than
    /// when the buffer fills and at the end.
    pub flush_each_answer: bool,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        PlanOptions {
            policy: "default".to_owned(),
            trim: Trim::None,
            limits: CaseLimits::default(),
            flush_each_answer: false,
        }
    }
}

impl PlanOptions {
    /// These options with `policy` as the default policy.
    #[must_use]
    pub fn with_policy(mut self, policy: impl Into<String>) -> PlanOptions {
        self.policy = policy.into();
        self
    }

    /// These options with the given trim.
    #[must_use]
    pub fn with_trim(mut self, trim: Trim) -> PlanOptions {
        self.trim = trim;
        self
    }

    /// These options with the given limits.
    #[must_use]
    pub fn with_limits(mut self, limits: CaseLimits) -> PlanOptions {
        self.limits = limits;
        self
    }

    /// These options, flushing after every answer or not.
    #[must_use]
    pub fn with_flush_each_answer(mut self, flush: bool) -> PlanOptions {
        self.flush_each_answer = flush;
        self
    }
}

/// Plans every case of `input`, writing one answer line per case to
/// `output`, and returns the number of cases answered.
///
/// # Errors
///
/// At the first bad case, [`CliError::BadCase`] (or
/// [`NotUtf8`](CliError::NotUtf8), [`Plan`](CliError::Plan)) after the
/// answers before it are written and flushed; [`CliError::BadOption`] for
/// an unknown default policy, before reading anything;
/// [`CliError::Io`] if reading or writing fails.
///
/// ```
/// use prefetch_plan::plan_cmd::{run, PlanOptions};
///
/// let input = r#"{"num_keys": 2, "adapters": [0], "lookup": {"0": "11"}}
/// {"num_keys": 2, "adapters": [0], "lookup": {"0": [2]}}
/// {"num_keys": 1, "adapters": [0], "lookup": {"0": [0]}}
/// "#;
/// let mut output = Vec::new();
/// let error = run(input.as_bytes(), &mut output, &PlanOptions::default()).unwrap_err();
/// assert_eq!(String::from_utf8(output)?, "{\"plan\": {\"0\": [0, 1]}, \"retain\": [false, false], \"prefix_len\": 2}\n");
/// assert_eq!(error.to_string(), r#"line 2: lookup."0"[0]: key index 2 is out of range for num_keys 2"#);
/// assert_eq!(error.exit_code(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run<R: BufRead, W: Write>(input: R, output: W, options: &PlanOptions) -> Result<usize, CliError> {
    let mut planner = Planner::new(&options.policy, options.trim)
        .map_err(|error| CliError::BadOption { option: "--policy", message: error.to_string() })?;
    answer_each(input, output, options.flush_each_answer, |text, case_line, output| {
        if is_grid_case(text) {
            let case = parse_grid_case_with(text, &options.limits).map_err(|error| bad_case(error, case_line))?;
            let answer = planner.answer_grid(&case).map_err(|error| unplannable(error, case_line))?;
            answer.write_line(output).map_err(CliError::io("writing the answers"))
        } else {
            let case = parse_case_with(text, &options.limits).map_err(|error| bad_case(error, case_line))?;
            let answer = planner.answer(&case).map_err(|error| unplannable(error, case_line))?;
            answer.write_line(output).map_err(CliError::io("writing the answers"))
        }
    })
}

/// Reads every case of `input` and calls `answer(text, first_line, output)`
/// for it, which writes one answer line; returns the number of cases
/// answered. What `plan` and `hit` share: the stop at the first bad case
/// (after flushing the answers before it), the UTF-8 check, the flushing.
///
/// # Errors
///
/// The first error of `answer`, [`CliError::NotUtf8`], or
/// [`CliError::Io`] if reading or writing fails.
pub(crate) fn answer_each<R: BufRead, W: Write>(
    input: R,
    output: W,
    flush_each_answer: bool,
    mut answer: impl FnMut(&str, usize, &mut BufWriter<W>) -> Result<(), CliError>,
) -> Result<usize, CliError> {
    let mut reader = CaseReader::new(input);
    let mut output = BufWriter::with_capacity(1 << 16, output);
    let mut answered = 0;
    let result = loop {
        let case_text = match reader.next_case().map_err(CliError::io("reading the cases")) {
            Ok(Some(case_text)) => case_text,
            Ok(None) => break Ok(answered),
            Err(error) => break Err(error),
        };
        let case_line = case_text.first_line;
        let answered_one = std::str::from_utf8(case_text.text)
            .map_err(|error| CliError::NotUtf8 {
                location: byte_location(case_text.text, error.valid_up_to(), case_line),
            })
            .and_then(|text| answer(text, case_line, &mut output))
            .and_then(|()| {
                if flush_each_answer { output.flush().map_err(CliError::io("writing the answers")) } else { Ok(()) }
            });
        match answered_one {
            Ok(()) => answered += 1,
            Err(error) => break Err(error),
        }
    };
    // The answers before a bad case are whole: they go out either way.
    let flushed = output.flush().map_err(CliError::io("writing the answers"));
    let answered = result?;
    flushed?;
    Ok(answered)
}

/// [`CliError::BadCase`] for a case that starts on `case_line`.
pub(crate) fn bad_case(error: CaseError, case_line: usize) -> CliError {
    let location = Location { line: case_line + error.line().saturating_sub(1), column: error.column(), case_line };
    CliError::BadCase { location, error: Box::new(error) }
}

/// [`CliError::Plan`] for a case that starts on `case_line`.
pub(crate) fn unplannable(error: AnswerError, case_line: usize) -> CliError {
    CliError::Plan { location: Location { line: case_line, column: None, case_line }, error }
}

/// The line and column (in bytes, from 1) of byte `offset` of a case's
/// text that starts on line `case_line`.
fn byte_location(text: &[u8], offset: usize, case_line: usize) -> Location {
    let before = &text[..offset.min(text.len())];
    let newlines = before.iter().filter(|&&byte| byte == b'\n').count();
    let line_start = before.iter().rposition(|&byte| byte == b'\n').map_or(0, |newline| newline + 1);
    Location { line: case_line + newlines, column: Some(offset - line_start + 1), case_line }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(input: &[u8], options: &PlanOptions) -> (String, Result<usize, CliError>) {
        let mut output = Vec::new();
        let result = run(input, &mut output, options);
        (String::from_utf8(output).unwrap(), result)
    }

    #[test]
    fn answers_in_input_order() {
        let input = b"{\"num_keys\": 1, \"adapters\": [0], \"lookup\": {\"0\": [0]}}\n\n{\"num_keys\": 0, \"adapters\": [], \"lookup\": {}}";
        let (output, result) = plan(input, &PlanOptions::default());
        assert_eq!(result.unwrap(), 2);
        assert_eq!(
            output,
            "{\"plan\": {\"0\": [0]}, \"retain\": [false], \"prefix_len\": 1}\n{\"plan\": {}, \"retain\": [], \"prefix_len\": 0}\n"
        );
    }

    #[test]
    fn invalid_utf8_is_bad_input_with_its_position() {
        let input =
            b"{\"num_keys\": 1, \"adapters\": [0], \"lookup\": {\"0\": [0]}}\n{\"num_keys\": 1,\n \"x\xff\": 1}\n";
        let (output, result) = plan(input, &PlanOptions::default());
        assert_eq!(output.lines().count(), 1);
        let error = result.unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 3, column 4 (in the case that starts on line 2): the input is not valid UTF-8"
        );
        assert_eq!(error.exit_code(), 2);
    }

    #[test]
    fn unknown_default_policy_reads_nothing() {
        let (output, result) = plan(b"not even json", &PlanOptions::default().with_policy("fastest"));
        assert_eq!(output, "");
        let error = result.unwrap_err();
        assert!(error.to_string().starts_with(r#"--policy: unknown prefetch policy "fastest"; known: "#), "{error}");
        assert_eq!(error.exit_code(), 2);
    }

    #[test]
    fn errors_in_multi_line_cases_point_into_the_case() {
        let input = b"\n{\n  \"num_keys\": 1,\n  \"adapters\": [0],\n  \"lookup\": {\"0\": [0, 1]}\n}\n";
        let error = plan(input, &PlanOptions::default()).1.unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"line 5 (in the case that starts on line 2): lookup."0"[1]: key index 1 is out of range for num_keys 1"#
        );
        let input = b"{\"num_keys\": 1,\n\"adapters\": [0] \"lookup\": {}}\n";
        let error = plan(input, &PlanOptions::default()).1.unwrap_err();
        assert_eq!(error.to_string(), "line 2, column 17 (in the case that starts on line 1): expected `,` or `}`");
    }
}
