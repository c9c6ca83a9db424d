//! The fast path of trace parsing: a line that is a flat JSON object whose
//! values are all non-negative integers or arrays of them — every line of
//! Mooncake's traces — is read here directly from its bytes, into a reused
//! key buffer, without serde or an allocation per line.
//!
//! Anything else (a float, a string, a negative number, an escape, a
//! nested object, a repeated field, bad syntax) makes [`read`] return
//! `None`, and the caller parses the line with serde_json, which accepts
//! what is valid and names what is not. So this path decides nothing on
//! its own: it only takes the common case faster.

/// What the fast path read from a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FastLine {
    /// Where the keys came from: `hash_ids` or `keys`.
    pub(crate) keys_field: Option<&'static str>,
    /// `input_length` or `tokens`, and which.
    pub(crate) tokens: Option<(&'static str, u64)>,
    /// `timestamp`, in milliseconds.
    pub(crate) timestamp: Option<u64>,
}

/// Reads `line`; the keys (of `hash_ids` or `keys`) replace the contents of
/// `keys`. `None`: not the simple shape, or two key fields or two token
/// fields (left for the slow path to report).
pub(crate) fn read(line: &[u8], keys: &mut Vec<u64>) -> Option<FastLine> {
    keys.clear();
    let mut cursor = Cursor { bytes: line, at: 0 };
    let mut out = FastLine::default();
    cursor.expect(b'{')?;
    if cursor.peek()? == b'}' {
        cursor.at += 1;
        return cursor.end().then_some(out);
    }
    loop {
        let name = cursor.name()?;
        cursor.expect(b':')?;
        let keys_field = match name {
            b"hash_ids" => Some("hash_ids"),
            b"keys" => Some("keys"),
            _ => None,
        };
        if cursor.peek()? == b'[' {
            if let Some(field) = keys_field {
                if out.keys_field.replace(field).is_some() {
                    return None;
                }
                cursor.integers(Some(keys))?;
            } else if name == b"timestamp" {
                return None; // `"timestamp": [..]`: the slow path says what is wrong
            } else {
                cursor.integers(None)?;
            }
        } else {
            let value = cursor.integer()?;
            let tokens_field = match name {
                b"input_length" => Some("input_length"),
                b"tokens" => Some("tokens"),
                _ => None,
            };
            if keys_field.is_some() {
                return None; // `"keys": 7`: the slow path says what is wrong
            }
            if let Some(field) = tokens_field
                && out.tokens.replace((field, value)).is_some()
            {
                return None;
            }
            if name == b"timestamp" && out.timestamp.replace(value).is_some() {
                return None;
            }
        }
        match cursor.next()? {
            b',' => {}
            b'}' => return cursor.end().then_some(out),
            _ => return None,
        }
    }
}

struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Cursor<'b> {
    fn skip_space(&mut self) {
        while self.bytes.get(self.at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// Nothing but white space left.
    fn end(&mut self) -> bool {
        self.skip_space();
        self.at == self.bytes.len()
    }

    /// A field name without escapes.
    fn name(&mut self) -> Option<&'b [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        let length = self.bytes[start..].iter().position(|&b| b == b'"')?;
        let bytes: &'b [u8] = self.bytes;
        let name = &bytes[start..start + length];
        if name.contains(&b'\\') {
            return None;
        }
        self.at = start + length + 1;
        Some(name)
    }

    /// A non-negative integer below 2^64, in JSON's syntax (no leading
    /// zeros, no fraction or exponent).
    fn integer(&mut self) -> Option<u64> {
        self.skip_space();
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(&digit) = self.bytes.get(self.at).filter(|b| b.is_ascii_digit()) {
            value = value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
            self.at += 1;
        }
        let digits = self.at - start;
        let leading_zero = digits > 1 && self.bytes[start] == b'0';
        let fraction = self.bytes.get(self.at).is_some_and(|b| matches!(b, b'.' | b'e' | b'E'));
        (digits > 0 && !leading_zero && !fraction).then_some(value)
    }

    /// An array of integers, appended to `out` if given.
    fn integers(&mut self, mut out: Option<&mut Vec<u64>>) -> Option<()> {
        self.expect(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            let value = self.integer()?;
            if let Some(out) = out.as_deref_mut() {
                out.push(value);
            }
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(line: &str) -> Option<(FastLine, Vec<u64>)> {
        let mut keys = vec![99];
        read(line.as_bytes(), &mut keys).map(|out| (out, keys))
    }

    #[test]
    fn mooncake_and_plain_lines() {
        let (line, keys) =
            fast(r#"{"timestamp": 27, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 0]}"#).unwrap();
        assert_eq!(
            (line.keys_field, line.tokens, line.timestamp, keys),
            (Some("hash_ids"), Some(("input_length", 6955)), Some(27), vec![46, 47, 0])
        );
        let (line, keys) = fast(" {\"keys\":[ 18446744073709551615 ] ,\"other\": [1,2]} ").unwrap();
        assert_eq!((line.keys_field, line.tokens, line.timestamp, keys), (Some("keys"), None, None, vec![u64::MAX]));
        assert_eq!(fast("{}").map(|(line, keys)| (line.keys_field, keys)), Some((None, vec![])));
        assert_eq!(fast(r#"{"hash_ids": []}"#).map(|(_, keys)| keys), Some(vec![]));
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        for line in [
            r#"{"hash_ids": [1, 2.5]}"#,
            r#"{"hash_ids": [1, -2]}"#,
            r#"{"hash_ids": [1, "2"]}"#,
            r#"{"hash_ids": [01]}"#,
            r#"{"hash_ids": [18446744073709551616]}"#,
            r#"{"hash_ids": [1e3]}"#,
            r#"{"hash_ids": 5}"#,
            r#"{"input_length": -1, "hash_ids": [1]}"#,
            r#"{"timestamp": 1.5, "hash_ids": [1]}"#,
            r#"{"hash_ids": [1], "hash_ids": [2]}"#,
            r#"{"timestamp": 1, "timestamp": 2, "hash_ids": [1]}"#,
            r#"{"timestamp": [1], "hash_ids": [1]}"#,
            r#"{"hash_ids": [1], "keys": [2]}"#,
            r#"{"tokens": 1, "input_length": 2, "keys": [1]}"#,
            r#"{"meta": {"a": 1}, "keys": [1]}"#,
            r#"{"k\"eys": [1]}"#,
            r#"{"hash_ids": [1]"#,
            r#"{"hash_ids": [1]} x"#,
            r#"{"hash_ids": [1],}"#,
            "[1, 2]",
            "",
        ] {
            assert_eq!(fast(line), None, "{line}");
        }
    }
}
