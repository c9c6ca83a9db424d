//! The JSON the tool writes: one value per line, with a space after each
//! `,` and `:` as the issue's examples are written, so a line reads like
//! the documentation and still parses as strict JSON.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// serde_json's compact form plus a space after each `,` and `:`.
#[derive(Clone, Copy, Debug, Default)]
struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }
}

/// Writes `value` as one line of JSON, newline included.
pub(crate) fn write_line<W: Write, T: Serialize + ?Sized>(mut writer: W, value: &T) -> io::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut writer, Spaced))?;
    writer.write_all(b"\n")
}

/// `value` as JSON text, without a newline.
pub(crate) fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut bytes = Vec::new();
    // Writing to a Vec cannot fail, nor can the types of this crate fail to
    // serialize (no maps with non-string keys, no failing `Serialize`).
    let written = value.serialize(&mut serde_json::Serializer::with_formatter(&mut bytes, Spaced));
    debug_assert!(written.is_ok(), "{written:?}");
    String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn spaces_after_commas_and_colons_only() {
        let value = BTreeMap::from([("a", vec![1, 2]), ("b", vec![])]);
        assert_eq!(to_string(&value), r#"{"a": [1, 2], "b": []}"#);
        let mut line = Vec::new();
        write_line(&mut line, &("x, y", [true])).unwrap();
        assert_eq!(line, b"[\"x, y\", [true]]\n");
    }
}
