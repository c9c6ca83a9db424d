//! The serde format, `{ "len": N, "bits": "0101…" }`: round trips and the
//! validation of everything a deserializer is given.
#![cfg(feature = "serde")]

use bitmap_core::Bitmap;

#[test]
fn round_trips_through_json() {
    for len in [0, 1, 63, 64, 65, 129, 1000] {
        let bits: Bitmap = (0..len).map(|i| i % 3 == 0 || i % 7 == 1).collect();
        let json = serde_json::to_string(&bits).unwrap();
        assert_eq!(json, format!(r#"{{"len":{len},"bits":"{bits}"}}"#));
        assert_eq!(serde_json::from_str::<Bitmap>(&json).unwrap(), bits);
        // Owned input (no borrowing from the source) as well.
        let value = serde_json::to_value(&bits).unwrap();
        assert_eq!(serde_json::from_value::<Bitmap>(value).unwrap(), bits);
    }
}

#[test]
fn accepts_escaped_strings() {
    // An escape makes serde_json hand over an owned string instead of a
    // borrowed one.
    let bits: Bitmap = serde_json::from_str(r#"{"len":3,"bits":"1\u00301"}"#).unwrap();
    assert_eq!(bits.to_string(), "101");
}

#[test]
fn rejects_invalid_input() {
    let cases = [
        (r#"{"len":6,"bits":"01001"}"#, "wrong size: expected 6 bits, got 5"),
        (r#"{"len":4,"bits":"01001"}"#, "wrong size: expected 4 bits, got 5"),
        (r#"{"len":5,"bits":"01021"}"#, "invalid character '2' at position 3"),
        (r#"{"len":5}"#, "missing field `bits`"),
        (r#"{"bits":"01001"}"#, "missing field `len`"),
        (r#"{"len":5,"bits":"01001","extra":1}"#, "unknown field `extra`"),
        (r#"{"len":-1,"bits":""}"#, "invalid value"),
        (r#""01001""#, "invalid type"),
    ];
    for (json, expected) in cases {
        let error = serde_json::from_str::<Bitmap>(json).unwrap_err().to_string();
        assert!(error.contains(expected), "{json}: got {error:?}, expected {expected:?}");
    }
}
