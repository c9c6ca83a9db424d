//! A case — one planning request as JSON — parsed and checked into
//! [`prefetch_policy`] values: [`parse_case`].
//!
//! # Format
//!
//! ```json
//! {"num_keys": 5, "adapters": [0, 1, {"index": 2, "name": "s3", "weight": 2.0}],
//!  "lookup": {"0": [0, 3], "1": "01110", "2": [4, 2, 3]}, "policy": "default"}
//! ```
//!
//! | field | value |
//! |---|---|
//! | `num_keys` | the number of keys in the batch: an integer from 0 |
//! | `adapters` | the adapter descriptors, in any order: each an index (an integer from 0) or an object `{"index": 0, "name": "ssd0", "weight": 2.0}` (`name` and `weight` optional; `weight`, the adapter's relative load bandwidth for the `balanced` policy, is a finite number greater than 0, default 1) |
//! | `lookup` | adapter index (as a JSON string of decimal digits) → the keys it holds: an array of key indices below `num_keys` (any order, repeats allowed) or a string of `num_keys` `0`/`1` characters, bit 0 first |
//! | `policy` | optional: a registered policy's name; absent or `null` leaves the choice to the caller |
//!
//! Lookup entries of adapters that are not listed are accepted: the
//! policies ignore them, as LMCache's do.
//!
//! # What is rejected
//!
//! Anything that is not exactly that: malformed JSON, a missing or mistyped
//! field, a key index at or past `num_keys`, a bit string of the wrong
//! length or with another character, an adapter listed twice, two lookup
//! entries for one adapter, an unknown policy, lookups whose bitmaps would
//! exceed the [`CaseLimits`]. The [`CaseError`] names the field by its JSON
//! path and the line of the case's text it is on.
//!
//! **Unknown fields are errors**, in the case and in an adapter object. A
//! misspelt field (`"polcy": "retain"`, `"lookups"`) silently ignored would
//! give an answer that looks right and is not; and a field this version
//! does not know (a setting for a future policy) cannot be honoured, so it
//! must not be dropped either. When a field is added, it
//! is added to the list of known ones (for an adapter object: one field of
//! `AdapterObject` and one line of its `into_descriptor`).
//!
//! # Cost
//!
//! The case is scanned once into raw JSON values, then each value is parsed
//! straight into its final form: key lists set bits as the numbers are read
//! (no `Vec` of indices), bit strings are read from the input text in place
//! (no copy unless they contain escapes). A lookup bitmap is allocated only
//! after the [`CaseLimits`] check, so a short line cannot ask for
//! gigabytes.
//!
//! ```
//! use prefetch_plan::case::parse_case;
//!
//! let case = parse_case(r#"{"num_keys": 4, "adapters": [1, {"index": 0, "name": "dram"}],
//!                           "lookup": {"0": [3, 0], "1": "0110"}}"#)?;
//! assert_eq!(case.num_keys, 4);
//! assert_eq!(case.adapters.iter().map(|a| (a.index, a.name.as_str())).collect::<Vec<_>>(), [(1, "adapter-1"), (0, "dram")]);
//! assert_eq!(format!("{:?}", case.lookup), "{0: 1001, 1: 0110}");
//! assert_eq!(case.policy, None);
//! # Ok::<(), prefetch_plan::case::CaseError>(())
//! ```

use std::fmt;

use bitmap_core::{Bitmap, BitmapError};
use prefetch_policy::{AdapterDescriptor, LookupResults, global_registry};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

pub use crate::error::{CaseError, CaseErrorKind};

/// One planning request, checked: every lookup bitmap has `num_keys` bits,
/// adapter indices are distinct, the policy (if named) is registered.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Case {
    /// The number of keys in the batch.
    pub num_keys: usize,
    /// The adapter descriptors, in the order given.
    pub adapters: Vec<AdapterDescriptor>,
    /// What each adapter that answered holds.
    pub lookup: LookupResults,
    /// The policy the case asks for, if it names one.
    pub policy: Option<String>,
}

/// Limits on what a case may make the parser allocate.
///
/// A key list is short text for a big bitmap: `{"num_keys": 1e12, …,
/// "lookup": {"0": [0]}}` would ask for 125 GB. The parser adds up the
/// bytes of the lookup bitmaps, entry by entry, before allocating each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CaseLimits {
    /// The most bytes all of a case's lookup bitmaps may take together
    /// (`num_keys / 8` each, rounded up to whole 8-byte words). Planning
    /// takes about as much again for the plan.
    pub max_lookup_bytes: usize,
}

impl CaseLimits {
    /// The default [`max_lookup_bytes`](CaseLimits::max_lookup_bytes):
    /// 1 GiB, a thousand times the lookups of a 4-million-key batch on two
    /// adapters.
    pub const DEFAULT_MAX_LOOKUP_BYTES: usize = 1 << 30;

    /// Limits with the given [`max_lookup_bytes`](CaseLimits::max_lookup_bytes).
    pub const fn with_max_lookup_bytes(max_lookup_bytes: usize) -> CaseLimits {
        CaseLimits { max_lookup_bytes }
    }
}

impl Default for CaseLimits {
    fn default() -> CaseLimits {
        CaseLimits::with_max_lookup_bytes(CaseLimits::DEFAULT_MAX_LOOKUP_BYTES)
    }
}

/// Parses and checks one case (see the [module docs](self) for the format)
/// with the default [`CaseLimits`]. `text` is one JSON object, on one line
/// or several.
///
/// # Errors
///
/// A [`CaseError`] for the first problem found, checking `num_keys`,
/// `adapters`, `policy` and `lookup` in that order.
pub fn parse_case(text: &str) -> Result<Case, CaseError> {
    parse_case_with(text, &CaseLimits::default())
}

/// [`parse_case`] with the given limits.
///
/// # Errors
///
/// As [`parse_case`].
///
/// ```
/// use prefetch_plan::case::{parse_case_with, CaseErrorKind, CaseLimits};
///
/// let limits = CaseLimits::with_max_lookup_bytes(1024);
/// let error = parse_case_with(r#"{"num_keys": 100000, "adapters": [0], "lookup": {"0": []}}"#, &limits).unwrap_err();
/// assert_eq!(error.kind(), &CaseErrorKind::TooLarge { needed: 12504, limit: 1024 });
/// ```
pub fn parse_case_with(text: &str, limits: &CaseLimits) -> Result<Case, CaseError> {
    let source = Source { text };
    let raw = source.raw_case()?;
    let num_keys = source.num_keys(raw.num_keys)?;
    let adapters = source.adapters(raw.adapters)?;
    let policy = raw.policy.map(|policy| source.policy(policy)).transpose()?;
    let lookup = source.lookup(raw.lookup, num_keys, limits)?;
    Ok(Case { num_keys, adapters, lookup, policy })
}

/// The case's fields as raw JSON, to be parsed once `num_keys` is known
/// (JSON objects have no order, so `lookup` may come first).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a case: a JSON object with num_keys, adapters and lookup")]
// (`expecting` is also EXPECTED_CASE; an attribute cannot name a const.)
struct RawCase<'a> {
    #[serde(borrow)]
    num_keys: &'a RawValue,
    #[serde(borrow)]
    adapters: &'a RawValue,
    #[serde(borrow)]
    lookup: &'a RawValue,
    #[serde(borrow, default)]
    policy: Option<&'a RawValue>,
}

/// An adapter given as an object. A new descriptor field is one field here
/// and one line in [`into_descriptor`](AdapterObject::into_descriptor).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an adapter object such as {\"index\": 0, \"name\": \"ssd0\"}")]
struct AdapterObject<'a> {
    #[serde(borrow)]
    index: &'a RawValue,
    #[serde(default)]
    name: Option<String>,
    #[serde(borrow, default)]
    weight: Option<&'a RawValue>,
}

impl<'a> AdapterObject<'a> {
    /// The descriptor, or the raw `weight` if it is not a valid weight.
    fn into_descriptor(self, index: usize) -> Result<AdapterDescriptor, &'a RawValue> {
        let descriptor = AdapterDescriptor::new(index, self.name.unwrap_or_else(|| default_name(index)));
        let Some(raw) = self.weight else { return Ok(descriptor) };
        let weight = serde_json::from_str::<f64>(raw.get()).map_err(|_| raw)?;
        descriptor.with_weight(weight).map_err(|_| raw)
    }
}

/// The name of an adapter given without one (names only appear in logs).
fn default_name(index: usize) -> String {
    format!("adapter-{index}")
}

const EXPECTED_CASE: &str = "a case: a JSON object with num_keys, adapters and lookup";
const EXPECTED_NUM_KEYS: &str = "a number of keys (an integer from 0)";
const EXPECTED_ADAPTERS: &str = "an array of adapters";
const EXPECTED_ADAPTER: &str =
    "an adapter: an index (an integer from 0) or an object such as {\"index\": 0, \"name\": \"ssd0\"}";
const EXPECTED_INDEX: &str = "an adapter index (an integer from 0)";
const EXPECTED_WEIGHT: &str = "an adapter weight (a finite number greater than 0)";
const EXPECTED_POLICY: &str = "a policy name (a string)";
const EXPECTED_LOOKUP: &str = "an object from adapter index to the keys it holds";
const EXPECTED_HELD: &str = "the keys the adapter holds: an array of key indices or a string of 0/1 characters";

/// The text of the case being parsed, to locate errors in it.
pub(crate) struct Source<'t> {
    pub(crate) text: &'t str,
}

impl<'t> Source<'t> {
    /// The case's fields as raw JSON.
    fn raw_case(&self) -> Result<RawCase<'t>, CaseError> {
        self.check_object(EXPECTED_CASE)?;
        serde_json::from_str(self.text).map_err(|error| parser_error(&error))
    }

    /// `Ok` if the text is (the start of) a JSON object, or empty (for the
    /// parser to report): serde's derived structs also accept an array of
    /// the fields in order, and a case is an object only.
    pub(crate) fn check_object(&self, expected: &'static str) -> Result<(), CaseError> {
        let start = self.text.len() - self.text.trim_start().len();
        let rest = &self.text[start..];
        if !rest.is_empty() && !rest.starts_with('{') {
            let before = &self.text[..start];
            let line = 1 + before.matches('\n').count();
            let column = 1 + before.len() - before.rfind('\n').map_or(0, |newline| newline + 1);
            let kind = CaseErrorKind::WrongType { expected, found: excerpt(rest) };
            return Err(CaseError::new(line, Some(column), None, kind));
        }
        Ok(())
    }

    /// The line (from 1) of the case's text where `raw` starts. Every raw
    /// value is borrowed from the text, so its address is inside it.
    pub(crate) fn line_of(&self, raw: &RawValue) -> usize {
        let offset = (raw.get().as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        let before = self.text.as_bytes().get(..offset).unwrap_or_default();
        1 + before.iter().filter(|&&byte| byte == b'\n').count()
    }

    pub(crate) fn error(&self, raw: &RawValue, field: String, kind: CaseErrorKind) -> CaseError {
        CaseError::new(self.line_of(raw), None, Some(field), kind)
    }

    pub(crate) fn wrong_type(&self, raw: &RawValue, field: String, expected: &'static str) -> CaseError {
        self.error(raw, field, CaseErrorKind::WrongType { expected, found: excerpt(raw.get()) })
    }

    fn num_keys(&self, raw: &RawValue) -> Result<usize, CaseError> {
        unsigned(raw).ok_or_else(|| self.wrong_type(raw, "num_keys".into(), EXPECTED_NUM_KEYS))
    }

    fn adapters(&self, raw: &RawValue) -> Result<Vec<AdapterDescriptor>, CaseError> {
        let items: Vec<&RawValue> =
            serde_json::from_str(raw.get()).map_err(|_| self.wrong_type(raw, "adapters".into(), EXPECTED_ADAPTERS))?;
        let adapters: Vec<AdapterDescriptor> =
            items.iter().enumerate().map(|(position, item)| self.adapter(item, position)).collect::<Result<_, _>>()?;
        if let Some((position, first)) = first_repeat(adapters.iter().map(|adapter| adapter.index)) {
            let kind = CaseErrorKind::DuplicateAdapter { index: adapters[position].index, first };
            return Err(self.error(items[position], format!("adapters[{position}]"), kind));
        }
        Ok(adapters)
    }

    fn adapter(&self, item: &RawValue, position: usize) -> Result<AdapterDescriptor, CaseError> {
        if !item.get().starts_with('{') {
            return unsigned(item)
                .map(|index| AdapterDescriptor::new(index, default_name(index)))
                .ok_or_else(|| self.wrong_type(item, format!("adapters[{position}]"), EXPECTED_ADAPTER));
        }
        let object: AdapterObject<'_> = serde_json::from_str(item.get()).map_err(|error| {
            self.error(item, format!("adapters[{position}]"), CaseErrorKind::Json { message: message_of(&error) })
        })?;
        let index = unsigned(object.index)
            .ok_or_else(|| self.wrong_type(object.index, format!("adapters[{position}].index"), EXPECTED_INDEX))?;
        object
            .into_descriptor(index)
            .map_err(|weight| self.wrong_type(weight, format!("adapters[{position}].weight"), EXPECTED_WEIGHT))
    }

    fn policy(&self, raw: &RawValue) -> Result<String, CaseError> {
        let name: String =
            serde_json::from_str(raw.get()).map_err(|_| self.wrong_type(raw, "policy".into(), EXPECTED_POLICY))?;
        if !global_registry().contains(&name) {
            // The registry's own error, which lists the known names.
            if let Err(error) = global_registry().create(&name) {
                return Err(self.error(raw, "policy".into(), error.into()));
            }
        }
        Ok(name)
    }

    fn lookup(&self, raw: &RawValue, num_keys: usize, limits: &CaseLimits) -> Result<LookupResults, CaseError> {
        let RawEntries(entries) =
            serde_json::from_str(raw.get()).map_err(|_| self.wrong_type(raw, "lookup".into(), EXPECTED_LOOKUP))?;
        let adapters: Vec<usize> = entries
            .iter()
            .map(|(key, value)| {
                adapter_key(key).ok_or_else(|| {
                    self.error(value, lookup_field(key), CaseErrorKind::InvalidAdapterKey { key: key.clone() })
                })
            })
            .collect::<Result<_, _>>()?;
        if let Some((position, _)) = first_repeat(adapters.iter().copied()) {
            let (key, value) = &entries[position];
            let kind = CaseErrorKind::DuplicateLookup { index: adapters[position] };
            return Err(self.error(value, lookup_field(key), kind));
        }
        let bytes_per_entry = (num_keys.div_ceil(64) as u64).saturating_mul(8);
        let mut bitmaps = Vec::with_capacity(entries.len());
        for ((count, (key, value)), adapter) in (1u64..).zip(&entries).zip(adapters) {
            let needed = bytes_per_entry.saturating_mul(count);
            if needed > limits.max_lookup_bytes as u64 {
                let kind = CaseErrorKind::TooLarge { needed, limit: limits.max_lookup_bytes };
                return Err(self.error(value, lookup_field(key), kind));
            }
            bitmaps.push((adapter, self.held_keys(value, num_keys, key)?));
        }
        Ok(bitmaps.into_iter().collect())
    }

    /// One lookup entry's value, under `key`: a key list or a bit string.
    fn held_keys(&self, raw: &RawValue, num_keys: usize, key: &str) -> Result<Bitmap, CaseError> {
        self.bits(raw, Bound::keys(num_keys), &|| lookup_field(key), EXPECTED_HELD)
    }

    /// A bitmap of `bound.len` bits given as an array of indices (any
    /// order, repeats allowed) or a string of `bound.len` `0`/`1`
    /// characters; `field` names it in an error.
    pub(crate) fn bits(
        &self,
        raw: &RawValue,
        bound: Bound,
        field: &dyn Fn() -> String,
        expected: &'static str,
    ) -> Result<Bitmap, CaseError> {
        match raw.get().as_bytes().first() {
            Some(b'[') => self.key_list(raw, bound, field),
            Some(b'"') => self.bit_string(raw, bound, field),
            _ => Err(self.wrong_type(raw, field(), expected)),
        }
    }

    fn key_list(&self, raw: &RawValue, bound: Bound, field: &dyn Fn() -> String) -> Result<Bitmap, CaseError> {
        let mut bitmap = Bitmap::new(bound.len);
        let mut failure = None;
        let mut deserializer = serde_json::Deserializer::from_str(raw.get());
        let parsed = KeyList { bitmap: &mut bitmap, failure: &mut failure }
            .deserialize(&mut deserializer)
            .and_then(|()| deserializer.end());
        match (parsed, failure) {
            (Ok(()), _) => Ok(bitmap),
            (Err(_), Some(KeyListFailure::OutOfRange { at, key: index })) => {
                Err(self.error(raw, format!("{}[{at}]", field()), bound.out_of_range(index)))
            }
            (Err(error), Some(KeyListFailure::NotAKey { at })) => {
                let kind = CaseErrorKind::Json { message: message_of(&error) };
                Err(self.error(raw, format!("{}[{at}]", field()), kind))
            }
            (Err(error), None) => Err(self.error(raw, field(), CaseErrorKind::Json { message: message_of(&error) })),
        }
    }

    fn bit_string(&self, raw: &RawValue, bound: Bound, field: &dyn Fn() -> String) -> Result<Bitmap, CaseError> {
        let quoted = raw.get();
        // A bit string has no escapes: read it in place. With escapes
        // (legal JSON, if odd), let serde_json decode it.
        let decoded;
        let bits = match quoted.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) {
            Some(inner) if !inner.contains('\\') => inner,
            _ => {
                decoded = serde_json::from_str::<String>(quoted)
                    .map_err(|error| self.error(raw, field(), CaseErrorKind::Json { message: message_of(&error) }))?;
                &decoded
            }
        };
        let bitmap = bits.parse::<Bitmap>().map_err(|error| {
            let kind = match error {
                BitmapError::InvalidChar { position, found } => CaseErrorKind::BitStringChar { position, found },
                other => CaseErrorKind::Json { message: other.to_string() },
            };
            self.error(raw, field(), kind)
        })?;
        if bitmap.len() != bound.len {
            return Err(self.error(raw, field(), bound.wrong_length(bitmap.len())));
        }
        Ok(bitmap)
    }
}

/// How many bits a bitmap in a case has, and the name of that number in
/// messages: `num_keys` for a lookup, `num_chunks` for a grid row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bound {
    pub(crate) len: usize,
    /// `None` for a lookup (`num_keys`, the original messages).
    pub(crate) name: Option<&'static str>,
}

impl Bound {
    pub(crate) const fn keys(num_keys: usize) -> Bound {
        Bound { len: num_keys, name: None }
    }

    pub(crate) const fn named(len: usize, name: &'static str) -> Bound {
        Bound { len, name: Some(name) }
    }

    fn out_of_range(self, index: u64) -> CaseErrorKind {
        match self.name {
            None => CaseErrorKind::KeyOutOfRange { key: index, num_keys: self.len },
            Some(name) => CaseErrorKind::IndexOutOfRange { index, len: self.len, name },
        }
    }

    fn wrong_length(self, len: usize) -> CaseErrorKind {
        match self.name {
            None => CaseErrorKind::BitStringLength { len, num_keys: self.len },
            Some(name) => CaseErrorKind::BitsLength { len, expected: self.len, name },
        }
    }
}

/// The value as a `usize`, if it is a JSON integer from 0 that fits.
pub(crate) fn unsigned(raw: &RawValue) -> Option<usize> {
    serde_json::from_str::<u64>(raw.get()).ok().and_then(|value| usize::try_from(value).ok())
}

/// A lookup key as an adapter index: decimal digits only (no sign, no
/// spaces), fitting a `usize`.
pub(crate) fn adapter_key(key: &str) -> Option<usize> {
    if key.is_empty() || !key.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    key.parse().ok()
}

/// The path of the lookup entry under `key`, such as `lookup."1"` (built
/// only for an error).
fn lookup_field(key: &str) -> String {
    let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"));
    format!("lookup.{quoted}")
}

/// The first element of `values` that repeats an earlier one, as its
/// position and the position of the earlier one. Sorts rather than hashes:
/// the lists are short, and this runs for every case.
pub(crate) fn first_repeat(values: impl ExactSizeIterator<Item = usize>) -> Option<(usize, usize)> {
    if values.len() < 2 {
        return None;
    }
    let mut sorted: Vec<(usize, usize)> = values.zip(0..).collect();
    sorted.sort_unstable();
    // Within a run of equal values, positions ascend: the repeat that comes
    // first is a run's second element, paired with the run's first.
    sorted.windows(2).filter(|pair| pair[0].0 == pair[1].0).map(|pair| (pair[1].1, pair[0].1)).min()
}

/// The start of a value's JSON text, on one line, for a message.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    let text = text.trim_end();
    let mut excerpt: String =
        text.chars().take(MAX_CHARS).map(|c| if c.is_ascii_whitespace() { ' ' } else { c }).collect();
    if text.chars().nth(MAX_CHARS).is_some() {
        excerpt.push('…');
    }
    format!("`{excerpt}`")
}

/// A [`CaseError`] from serde_json's error for the whole case, with its
/// position.
pub(crate) fn parser_error(error: &serde_json::Error) -> CaseError {
    // Line 0 means the error has no position (not one serde_json returns
    // for text it parsed, but it is part of the contract).
    let (line, column) = match (error.line(), error.column()) {
        (0, _) => (1, None),
        // Column 0: at the end of the text, just past a line end. The case
        // ends on the line before.
        (line, 0) => (line.saturating_sub(1).max(1), None),
        (line, column) => (line, Some(column)),
    };
    CaseError::new(line, column, None, CaseErrorKind::Json { message: message_of(error) })
}

/// serde_json's message without the " at line L column C" it appends: the
/// position is reported separately, relative to the input rather than to
/// the value that was being parsed.
pub(crate) fn message_of(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(stripped) => stripped.to_owned(),
        None => message,
    }
}

/// A JSON object's entries as raw values, in order, repeats kept (a map
/// would silently keep one of them).
pub(crate) struct RawEntries<'a>(pub(crate) Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for RawEntries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;

        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = RawEntries<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED_LOOKUP)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    entries.push(entry);
                }
                Ok(RawEntries(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// Sets the bit of each key index of a JSON array as it is read; on error,
/// records which element was at fault in `failure`.
struct KeyList<'b> {
    bitmap: &'b mut Bitmap,
    failure: &'b mut Option<KeyListFailure>,
}

/// Which element of a key list was rejected, and why.
enum KeyListFailure {
    /// Not an integer from 0 (serde_json's error says what it is).
    NotAKey { at: usize },
    /// At or past `num_keys`.
    OutOfRange { at: usize, key: u64 },
}

impl<'de> DeserializeSeed<'de> for KeyList<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for KeyList<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of key indices")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let num_keys = self.bitmap.len();
        for at in 0.. {
            match seq.next_element::<KeyIndex>() {
                Ok(Some(KeyIndex(key))) => match usize::try_from(key) {
                    Ok(index) if index < num_keys => self.bitmap.set(index),
                    _ => {
                        *self.failure = Some(KeyListFailure::OutOfRange { at, key });
                        return Err(de::Error::custom("key index out of range"));
                    }
                },
                Ok(None) => return Ok(()),
                Err(error) => {
                    *self.failure = Some(KeyListFailure::NotAKey { at });
                    return Err(error);
                }
            }
        }
        unreachable!("an array has fewer than usize::MAX elements")
    }
}

/// One element of a key list: an integer from 0.
struct KeyIndex(u64);

impl<'de> Deserialize<'de> for KeyIndex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyIndexVisitor;

        impl Visitor<'_> for KeyIndexVisitor {
            type Value = KeyIndex;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key index (an integer from 0)")
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<KeyIndex, E> {
                Ok(KeyIndex(value))
            }
        }

        deserializer.deserialize_u64(KeyIndexVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> CaseError {
        parse_case(text).expect_err(text)
    }

    fn lists(case: &Case) -> Vec<(usize, Vec<usize>)> {
        case.lookup.iter().map(|(adapter, bits)| (adapter, bits.to_indices())).collect()
    }

    #[test]
    fn both_encodings_and_any_field_order() {
        let case =
            parse_case(r#"{"lookup": {"2": "10001", "0": [4, 0, 4]}, "adapters": [2, 0], "num_keys": 5}"#).unwrap();
        assert_eq!(lists(&case), [(0, vec![0, 4]), (2, vec![0, 4])]);
        assert_eq!(case.adapters, [AdapterDescriptor::new(2, "adapter-2"), AdapterDescriptor::new(0, "adapter-0")]);
    }

    #[test]
    fn escaped_bit_strings_are_decoded() {
        let case = parse_case(r#"{"num_keys": 3, "adapters": [0], "lookup": {"0": "\u0031\u00301"}}"#).unwrap();
        assert_eq!(lists(&case), [(0, vec![0, 2])]);
    }

    #[test]
    fn adapter_objects() {
        let case =
            parse_case(r#"{"num_keys": 0, "adapters": [{"name": "s3", "index": 4}, {"index": 1}], "lookup": {}}"#)
                .unwrap();
        assert_eq!(case.adapters, [AdapterDescriptor::new(4, "s3"), AdapterDescriptor::new(1, "adapter-1")]);
        let e = error(r#"{"num_keys": 0, "adapters": [0, {"index": 1, "speed": 2.0}], "lookup": {}}"#);
        assert_eq!(e.field(), Some("adapters[1]"));
        assert_eq!(e.to_string(), "adapters[1]: unknown field `speed`, expected one of `index`, `name`, `weight`");
        let e = error(r#"{"num_keys": 0, "adapters": [{"name": "x"}], "lookup": {}}"#);
        assert_eq!(e.to_string(), "adapters[0]: missing field `index`");
        let e = error(r#"{"num_keys": 0, "adapters": [{"index": -1}], "lookup": {}}"#);
        assert_eq!(e.to_string(), "adapters[0].index: expected an adapter index (an integer from 0), found `-1`");
    }

    #[test]
    fn adapter_weights() {
        let case = parse_case(
            r#"{"num_keys": 0, "adapters": [{"index": 0, "weight": 2.5}, {"weight": 1e-3, "index": 1, "name": "hdd"},
                                           {"index": 2}, 3], "lookup": {}}"#,
        )
        .unwrap();
        let weights: Vec<f64> = case.adapters.iter().map(|a| a.weight.get()).collect();
        assert_eq!(weights, [2.5, 1e-3, 1.0, 1.0]);
        assert_eq!(case.adapters[1].name, "hdd");
        // `null`, like an absent weight, is the default (as for `name`).
        let case = parse_case(r#"{"num_keys": 0, "adapters": [{"index": 0, "weight": null}], "lookup": {}}"#).unwrap();
        assert_eq!(case.adapters[0].weight.get(), 1.0);
        for (weight, shown) in [("0", "`0`"), ("-1.5", "`-1.5`"), ("\"2\"", "`\"2\"`"), ("1e999", "`1e999`")] {
            let e = error(&format!(
                r#"{{"num_keys": 0, "adapters": [0, {{"index": 7, "weight": {weight}}}], "lookup": {{}}}}"#
            ));
            assert_eq!(e.field(), Some("adapters[1].weight"), "{weight}");
            assert_eq!(
                e.to_string(),
                format!(
                    "adapters[1].weight: expected an adapter weight (a finite number greater than 0), found {shown}"
                )
            );
        }
    }

    #[test]
    fn lookup_keys_must_be_distinct_decimal_indices() {
        for key in ["", "x", "-1", "+1", " 1", "1.0", "99999999999999999999999"] {
            let e = error(&format!(r#"{{"num_keys": 1, "adapters": [], "lookup": {{"{key}": []}}}}"#));
            assert_eq!(e.kind(), &CaseErrorKind::InvalidAdapterKey { key: key.to_owned() });
        }
        let e = error(r#"{"num_keys": 1, "adapters": [], "lookup": {"1": [], "01": "1"}}"#);
        assert_eq!(e.to_string(), r#"lookup."01": adapter 1 has more than one lookup entry"#);
    }

    #[test]
    fn key_list_errors_name_the_element() {
        let e = error(r#"{"num_keys": 5, "adapters": [1], "lookup": {"1": [1, 2, 5]}}"#);
        assert_eq!(e.to_string(), r#"lookup."1"[2]: key index 5 is out of range for num_keys 5"#);
        let e = error(r#"{"num_keys": 5, "adapters": [1], "lookup": {"1": [1, "2"]}}"#);
        assert_eq!(
            e.to_string(),
            r#"lookup."1"[1]: invalid type: string "2", expected a key index (an integer from 0)"#
        );
        let e = error(r#"{"num_keys": 5, "adapters": [1], "lookup": {"1": [-3]}}"#);
        assert_eq!(
            e.to_string(),
            r#"lookup."1"[0]: invalid type: integer `-3`, expected a key index (an integer from 0)"#
        );
        let e = error(r#"{"num_keys": 5, "adapters": [1], "lookup": {"1": [1.5]}}"#);
        assert_eq!(e.field(), Some(r#"lookup."1"[0]"#));
        let e = error(r#"{"num_keys": 5, "adapters": [1], "lookup": {"1": [18446744073709551616]}}"#);
        assert_eq!(e.field(), Some(r#"lookup."1"[0]"#));
    }

    #[test]
    fn bit_string_errors() {
        let e = error(r#"{"num_keys": 5, "adapters": [0], "lookup": {"0": "0101"}}"#);
        assert_eq!(e.kind(), &CaseErrorKind::BitStringLength { len: 4, num_keys: 5 });
        assert_eq!(e.to_string(), r#"lookup."0": the bit string has 4 characters, but num_keys is 5"#);
        let e = error(r#"{"num_keys": 5, "adapters": [0], "lookup": {"0": "01é01"}}"#);
        assert_eq!(e.kind(), &CaseErrorKind::BitStringChar { position: 2, found: 'é' });
        let e = error(r#"{"num_keys": 2, "adapters": [0], "lookup": {"0": "1 "}}"#);
        assert_eq!(e.kind(), &CaseErrorKind::BitStringChar { position: 1, found: ' ' });
    }

    #[test]
    fn wrong_types_quote_the_value() {
        let e = error(r#"{"num_keys": "5", "adapters": [], "lookup": {}}"#);
        assert_eq!(e.to_string(), r#"num_keys: expected a number of keys (an integer from 0), found `"5"`"#);
        let e = error(r#"{"num_keys": 5, "adapters": {"0": 1}, "lookup": {}}"#);
        assert_eq!(e.to_string(), r#"adapters: expected an array of adapters, found `{"0": 1}`"#);
        let e = error(r#"{"num_keys": 5, "adapters": [], "lookup": []}"#);
        assert_eq!(e.field(), Some("lookup"));
        let e = error(r#"{"num_keys": 5, "adapters": [], "lookup": {"0": 7}}"#);
        assert_eq!(e.field(), Some(r#"lookup."0""#));
        let e = error(r#"{"num_keys": 5, "adapters": [], "lookup": {}, "policy": 3}"#);
        assert_eq!(e.to_string(), "policy: expected a policy name (a string), found `3`");
        let long = format!(r#"{{"num_keys": [{}1], "adapters": [], "lookup": {{}}}}"#, "1, ".repeat(30));
        assert!(error(&long).to_string().ends_with(&format!("found `[{}…`", "1, ".repeat(13))), "{}", error(&long));
    }

    #[test]
    fn whole_case_errors_come_from_the_parser_with_a_position() {
        let e = error(r#"{"num_keys": 1, "adapters": [], "lookup": {}, "polcy": "retain"}"#);
        assert_eq!(e.field(), None);
        assert!(e.to_string().starts_with("unknown field `polcy`, expected one of"), "{e}");
        assert_eq!((e.line(), e.column()), (1, Some(53)));
        let e = error(r#"{"num_keys": 1, "adapters": []}"#);
        assert_eq!(e.to_string(), "missing field `lookup`");
        let e = error(r#"{"num_keys": 1, "num_keys": 1, "adapters": [], "lookup": {}}"#);
        assert_eq!(e.to_string(), "duplicate field `num_keys`");
        let e = error("{\n  \"num_keys\": 1,\n  \"adapters\": [,]\n}");
        assert_eq!((e.line(), e.column()), (3, Some(16)));
        assert_eq!(e.to_string(), "expected value");
        // Not even positionally: serde's derived structs would take an array.
        let e = error("\n  [5, [0], {}]");
        assert_eq!(
            e.to_string(),
            "expected a case: a JSON object with num_keys, adapters and lookup, found `[5, [0], {}]`"
        );
        assert_eq!((e.line(), e.column()), (2, Some(3)));
        let e = error(r#"{"num_keys": 1, "adapters": [[0, "x"]], "lookup": {}}"#);
        assert_eq!(e.field(), Some("adapters[0]"));
        assert_eq!(error("").to_string(), "EOF while parsing a value");
        let e = error("{\"num_keys\": 1,\n\"adapters\": [0],\n");
        assert_eq!((e.line(), e.column()), (2, None));
        assert_eq!(error(r#"{"num_keys": 0, "adapters": [], "lookup": {}} {}"#).to_string(), "trailing characters");
    }

    #[test]
    fn errors_in_multi_line_cases_give_the_value_line() {
        let text = "{\n  \"num_keys\": 2,\n  \"adapters\": [0],\n  \"lookup\": {\n    \"0\": [0, 2]\n  }\n}";
        let e = error(text);
        assert_eq!(e.line(), 5);
        assert_eq!(e.column(), None);
        assert_eq!(e.field(), Some(r#"lookup."0"[1]"#));
    }

    #[test]
    fn duplicate_adapters_and_unknown_policies() {
        let e = error(r#"{"num_keys": 1, "adapters": [3, 1, {"index": 3}], "lookup": {}}"#);
        assert_eq!(e.to_string(), "adapters[2]: adapter index 3 is listed more than once (first at adapters[0])");
        let e = error(r#"{"num_keys": 1, "adapters": [], "lookup": {}, "policy": "fastest"}"#);
        assert_eq!(e.field(), Some("policy"));
        assert!(e.to_string().starts_with(r#"policy: unknown prefetch policy "fastest"; known: "#), "{e}");
        assert!(e.to_string().contains("default") && e.to_string().contains("retain"));
        let case = parse_case(r#"{"num_keys": 1, "adapters": [], "lookup": {}, "policy": null}"#).unwrap();
        assert_eq!(case.policy, None);
    }

    #[test]
    fn first_repeat_finds_the_earliest_repeat() {
        let repeat = |values: &[usize]| first_repeat(values.iter().copied());
        assert_eq!(repeat(&[]), None);
        assert_eq!(repeat(&[4]), None);
        assert_eq!(repeat(&[3, 1, 2]), None);
        assert_eq!(repeat(&[5, 5]), Some((1, 0)));
        assert_eq!(repeat(&[7, 1, 7, 1, 7]), Some((2, 0)));
        assert_eq!(repeat(&[9, 2, 3, 2, 9]), Some((3, 1)));
    }

    #[test]
    fn the_limit_applies_before_allocating() {
        let limits = CaseLimits::with_max_lookup_bytes(16);
        let two_words = r#"{"num_keys": 128, "adapters": [], "lookup": {"0": [127]}}"#;
        assert!(parse_case_with(two_words, &limits).is_ok());
        let e =
            parse_case_with(r#"{"num_keys": 128, "adapters": [], "lookup": {"0": [], "1": []}}"#, &limits).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"lookup."1": the lookup bitmaps would take 32 bytes, more than the limit of 16 bytes"#
        );
        let huge = r#"{"num_keys": 18446744073709551615, "adapters": [0], "lookup": {"0": [0]}}"#;
        assert!(matches!(parse_case(huge).unwrap_err().kind(), CaseErrorKind::TooLarge { .. }));
        // No lookup entries: nothing to allocate, any count is fine.
        assert!(parse_case(r#"{"num_keys": 18446744073709551615, "adapters": [0], "lookup": {}}"#).is_ok());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for text in [
            deep.clone(),
            format!(r#"{{"num_keys": 1, "adapters": {deep}, "lookup": {{}}}}"#),
            format!(r#"{{"num_keys": 1, "adapters": [{deep}], "lookup": {{}}}}"#),
            format!(r#"{{"num_keys": 1, "adapters": [{{"index": {deep}}}], "lookup": {{}}}}"#),
            format!(r#"{{"num_keys": 1, "adapters": [{{"index": 0, "name": {deep}}}], "lookup": {{}}}}"#),
            format!(r#"{{"num_keys": 1, "adapters": [], "lookup": {{"0": {deep}}}}}"#),
            format!(r#"{{"num_keys": 1, "adapters": [], "lookup": {{"0": [{deep}]}}}}"#),
            format!(r#"{{"num_keys": 1, "adapters": [], "lookup": {{}}, "policy": {deep}}}"#),
        ] {
            error(&text);
        }
    }
}
