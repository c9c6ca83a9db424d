//! Splitting the input of `plan` into cases: [`CaseReader`].
//!
//! The input is NDJSON — one case per line — but a case may also be a JSON
//! object spread over several lines (a pretty-printed file). The reader
//! tells them apart without parsing: it tracks the nesting of `{`/`[` and
//! whether it is inside a string while it reads a line, and a case ends at
//! the end of the first line where the nesting is back to zero. So an
//! NDJSON line is a case on its own, and a multi-line object is read to
//! its closing brace. Each byte is looked at once, so a pretty-printed case
//! with millions of lines is read in linear time.
//!
//! A line that ends inside a string also ends the case: JSON strings cannot
//! hold a raw newline, so the case is broken anyway, and ending it there
//! lets the parser report the error at that line instead of swallowing the
//! lines after it. Blank lines between cases are skipped.

use std::io::{self, BufRead};

/// Reads cases — the text of each, and the line it starts on — from a
/// buffered reader.
///
/// ```
/// use prefetch_plan::reader::CaseReader;
///
/// let input = "{\"a\": 1}\n\n{\n  \"b\": [1,\n 2]\n}\n{\"c\": \"{[\"}\n";
/// let mut reader = CaseReader::new(input.as_bytes());
/// let mut cases = Vec::new();
/// while let Some(case) = reader.next_case()? {
///     cases.push((case.first_line, String::from_utf8_lossy(case.text).trim_end().to_owned()));
/// }
/// assert_eq!(cases, [(1, "{\"a\": 1}".into()), (3, "{\n  \"b\": [1,\n 2]\n}".into()), (7, "{\"c\": \"{[\"}".into())]);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct CaseReader<R> {
    input: R,
    /// Lines read so far.
    lines: usize,
    /// The current case's text; reused.
    buffer: Vec<u8>,
}

/// One case's text, as bytes (the caller checks UTF-8, so that it can
/// report where the input is not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaseText<'a> {
    /// The line (from 1) the case starts on.
    pub first_line: usize,
    /// The case's lines, line ends included.
    pub text: &'a [u8],
}

impl<R: BufRead> CaseReader<R> {
    /// A reader of the cases in `input`.
    pub fn new(input: R) -> CaseReader<R> {
        CaseReader { input, lines: 0, buffer: Vec::new() }
    }

    /// The number of lines read so far.
    pub fn lines_read(&self) -> usize {
        self.lines
    }

    /// The next case, or `None` at the end of the input. A case still open
    /// at the end of the input is returned as it is, for the parser to
    /// report.
    ///
    /// # Errors
    ///
    /// The reader's I/O errors.
    pub fn next_case(&mut self) -> io::Result<Option<CaseText<'_>>> {
        self.buffer.clear();
        let mut first_line = None;
        let mut nesting = Nesting::default();
        loop {
            let start = self.buffer.len();
            if self.input.read_until(b'\n', &mut self.buffer)? == 0 {
                return Ok(first_line.map(|first_line| CaseText { first_line, text: &self.buffer }));
            }
            self.lines += 1;
            let line = &self.buffer[start..];
            if first_line.is_none() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    self.buffer.truncate(start);
                    continue;
                }
                first_line = Some(self.lines);
            }
            nesting.scan(line);
            if nesting.is_closed_at_line_end() {
                return Ok(first_line.map(|first_line| CaseText { first_line, text: &self.buffer }));
            }
        }
    }
}

/// How deep in JSON brackets the text read so far ends, and whether it is
/// inside a string.
#[derive(Clone, Copy, Debug, Default)]
struct Nesting {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    fn scan(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.in_string {
                // Skip to the next byte that matters inside a string.
                let Some(at) = rest.iter().position(|&b| self.escaped || b == b'"' || b == b'\\') else { return };
                let byte = rest[at];
                rest = &rest[at + 1..];
                if self.escaped {
                    self.escaped = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                }
            } else {
                let Some(at) = rest.iter().position(|&b| matches!(b, b'"' | b'{' | b'[' | b'}' | b']')) else {
                    return;
                };
                match rest[at] {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    // Too many closers: the parser will say so.
                    _ => self.depth = self.depth.saturating_sub(1),
                }
                rest = &rest[at + 1..];
            }
        }
    }

    fn is_closed_at_line_end(&self) -> bool {
        self.depth == 0 || self.in_string
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cases(input: &str) -> Vec<(usize, String)> {
        let mut reader = CaseReader::new(input.as_bytes());
        let mut cases = Vec::new();
        while let Some(case) = reader.next_case().unwrap() {
            cases.push((case.first_line, String::from_utf8(case.text.to_vec()).unwrap()));
        }
        cases
    }

    #[test]
    fn one_case_per_line() {
        assert_eq!(
            cases("{}\n{\"a\": [1]}\r\n  \n\n[]"),
            [(1, "{}\n".into()), (2, "{\"a\": [1]}\r\n".into()), (5, "[]".into())]
        );
        assert_eq!(cases(""), []);
        assert_eq!(cases("\n \n\t\n"), []);
    }

    #[test]
    fn multi_line_objects_run_to_their_closing_brace() {
        let text = "{\n \"a\": \"}\\\"]\",\n \"b\": [\n  1\n ]\n}\n{\"c\": 1}\n";
        assert_eq!(
            cases(text),
            [(1, "{\n \"a\": \"}\\\"]\",\n \"b\": [\n  1\n ]\n}\n".into()), (7, "{\"c\": 1}\n".into())]
        );
    }

    #[test]
    fn escapes_at_chunk_ends_and_backslashes() {
        assert_eq!(cases("{\"a\": \"\\\\\"}\n{}").len(), 2);
        assert_eq!(cases("{\"a\": \"\\\\\\\"{\"}\n{}").len(), 2);
    }

    #[test]
    fn broken_cases_end_early_rather_than_swallow_the_input() {
        // A line ending inside a string ends the case.
        assert_eq!(cases("{\"a\": \"x\n{}\n"), [(1, "{\"a\": \"x\n".into()), (2, "{}\n".into())]);
        // Closers without openers.
        assert_eq!(cases("}\n]}\n{}\n").len(), 3);
        // An open case at the end of the input is returned as it is.
        assert_eq!(cases("{}\n{\"a\": [\n1,\n"), [(1, "{}\n".into()), (2, "{\"a\": [\n1,\n".into())]);
    }

    #[test]
    fn counts_lines() {
        let mut reader = CaseReader::new("\n{}\n\n".as_bytes());
        assert_eq!(reader.next_case().unwrap().map(|c| c.first_line), Some(2));
        assert_eq!(reader.next_case().unwrap(), None);
        assert_eq!(reader.lines_read(), 3);
    }
}
