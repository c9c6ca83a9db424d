//! The crate's error types: one per concern, each naming the values that
//! make it an error.

use core::fmt;

/// A field of an [`ObjectKey`](crate::ObjectKey) that has rules.
///
/// Its `Display` is the field's name as LMCache spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyField {
    /// `model_name`: no `@`.
    ModelName,
    /// `cache_salt`: no `@`, `/`, `\` or NUL, at most 128 bytes.
    CacheSalt,
}

impl KeyField {
    /// The field's name, as LMCache spells it.
    pub const fn name(self) -> &'static str {
        match self {
            KeyField::ModelName => "model_name",
            KeyField::CacheSalt => "cache_salt",
        }
    }
}

impl fmt::Display for KeyField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an [`ObjectKey`](crate::ObjectKey) could not be built: the value of a
/// field breaks one of LMCache's rules for it.
///
/// ```
/// use prefetch_policy::{KeyError, KeyField, ObjectKey};
///
/// let error = ObjectKey::new(*b"hash", "org@model", 0).unwrap_err();
/// assert_eq!(error.field(), KeyField::ModelName);
/// assert_eq!(error.to_string(), r#"model_name must not contain '@' (got "org@model")"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The field holds a character it must not hold.
    #[error("{field} must not contain {character:?} (got {value:?})")]
    ForbiddenCharacter {
        /// The field.
        field: KeyField,
        /// The first forbidden character found.
        character: char,
        /// The rejected value.
        value: String,
    },
    /// The field is longer than its maximum, in bytes.
    #[error("{field} must be at most {max} bytes long (got {len} bytes)")]
    TooLong {
        /// The field.
        field: KeyField,
        /// The value's length in bytes.
        len: usize,
        /// The maximum length in bytes.
        max: usize,
    },
}

impl KeyError {
    /// The field whose value was rejected.
    pub fn field(&self) -> KeyField {
        match *self {
            KeyError::ForbiddenCharacter { field, .. } | KeyError::TooLong { field, .. } => field,
        }
    }
}

/// Why a policy could not plan, or a plan helper could not run: the inputs
/// disagree with each other. Never a panic, never a wrong plan.
///
/// ```
/// use bitmap_core::Bitmap;
/// use prefetch_policy::{AdapterDescriptor, DefaultPolicy, Keys, LookupResults, PlanError, PrefetchPolicy};
///
/// let lookup: LookupResults = [(0, Bitmap::new(3))].into_iter().collect();
/// let adapters = [AdapterDescriptor::new(0, "dram")];
/// let error = DefaultPolicy::new().select_load_plan(Keys::count(4), &lookup, &adapters).unwrap_err();
/// assert_eq!(error, PlanError::LookupLengthMismatch { adapter: 0, expected: 4, actual: 3 });
/// assert_eq!(error.to_string(), "the lookup bitmap of adapter 0 has 3 bits, but there are 4 keys");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A lookup bitmap's length differs from the number of keys.
    #[error("the lookup bitmap of adapter {adapter} has {actual} bits, but there are {expected} keys")]
    LookupLengthMismatch {
        /// The adapter index of the lookup entry.
        adapter: usize,
        /// The number of keys.
        expected: usize,
        /// The lookup bitmap's length.
        actual: usize,
    },
    /// Two adapter descriptors have the same index (the smallest such index
    /// is reported).
    #[error("adapter index {index} is listed more than once")]
    DuplicateAdapterIndex {
        /// The repeated index.
        index: usize,
    },
    /// A bitmap given to a [`LoadPlan`](crate::LoadPlan) has a length other
    /// than the plan's number of keys.
    #[error("the bitmap for adapter {adapter} has {actual} bits, but the plan covers {expected} keys")]
    PlanLengthMismatch {
        /// The adapter index the bitmap was given for.
        adapter: usize,
        /// The plan's number of keys.
        expected: usize,
        /// The bitmap's length.
        actual: usize,
    },
    /// A slice of keys (or other per-key items) has a length other than the
    /// plan's number of keys.
    #[error("the plan covers {expected} keys, but {actual} items were given")]
    KeyCountMismatch {
        /// The plan's number of keys.
        expected: usize,
        /// The slice's length.
        actual: usize,
    },
}

/// How a [`LoadPlan`](crate::LoadPlan) breaks the contract it was checked
/// against (see [`PlanContract`](crate::PlanContract)), found by
/// [`LoadPlan::validate`](crate::LoadPlan::validate) and
/// [`LoadPlan::validate_with`](crate::LoadPlan::validate_with).
///
/// Every variant names the first offending key (lowest key index) and the
/// adapters involved.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum PlanViolation {
    /// The inputs the plan is checked against are themselves invalid.
    #[error(transparent)]
    Input(#[from] PlanError),
    /// A plan bitmap's length differs from the plan's number of keys.
    #[error("the plan bitmap of adapter {adapter} has {actual} bits, but the plan covers {expected} keys")]
    BitmapLength {
        /// The adapter.
        adapter: usize,
        /// The plan's number of keys.
        expected: usize,
        /// The bitmap's length.
        actual: usize,
    },
    /// The plan has an entry for an adapter that is not in the adapter list.
    #[error("the plan loads from adapter {adapter}, which is not in the adapter list")]
    UnlistedAdapter {
        /// The adapter.
        adapter: usize,
    },
    /// The plan lists an adapter with nothing to load; such adapters must
    /// be left out.
    #[error("the plan lists adapter {adapter} with nothing to load")]
    EmptyEntry {
        /// The adapter.
        adapter: usize,
    },
    /// A key is planned on two adapters.
    #[error("key {key} is planned on both adapter {first} and adapter {second}")]
    Overlap {
        /// The key index.
        key: usize,
        /// The lower adapter index.
        first: usize,
        /// The higher adapter index.
        second: usize,
    },
    /// A key is planned on an adapter whose lookup does not hold it.
    #[error("key {key} is planned on adapter {adapter}, whose lookup does not hold it")]
    NotHeld {
        /// The key index.
        key: usize,
        /// The adapter.
        adapter: usize,
    },
    /// A key that a listed adapter holds is planned nowhere.
    #[error("key {key} is held by adapter {holder} but planned nowhere")]
    Missed {
        /// The key index.
        key: usize,
        /// The lowest-indexed listed adapter that holds it.
        holder: usize,
    },
    /// A key is planned on an adapter other than the lowest-indexed listed
    /// adapter that holds it.
    #[error("key {key} is planned on adapter {planned}, but adapter {first} holds it and comes first")]
    NotFirstHolder {
        /// The key index.
        key: usize,
        /// The adapter the plan loads it from.
        planned: usize,
        /// The lowest-indexed listed adapter that holds it.
        first: usize,
    },
}

/// An adapter weight that is not a finite number greater than 0, from
/// [`AdapterDescriptor::with_weight`](crate::AdapterDescriptor::with_weight).
///
/// ```
/// use prefetch_policy::AdapterDescriptor;
///
/// let error = AdapterDescriptor::new(1, "disk").with_weight(-2.0).unwrap_err();
/// assert_eq!((error.adapter, error.weight), (1, -2.0));
/// assert_eq!(error.to_string(), r#"adapter 1 ("disk"): weight -2 is not a finite number greater than 0"#);
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("adapter {adapter} ({name:?}): weight {weight} is not a finite number greater than 0")]
#[non_exhaustive]
pub struct WeightError {
    /// The adapter's index.
    pub adapter: usize,
    /// The adapter's name.
    pub name: String,
    /// The rejected weight.
    pub weight: f64,
}

/// Why the [`PolicyRegistry`](crate::PolicyRegistry) refused a request.
///
/// ```
/// use prefetch_policy::{PolicyRegistry, RegistryError};
///
/// let registry = PolicyRegistry::with_builtin();
/// let error = registry.create("fastest").unwrap_err();
/// assert_eq!(error.to_string(), r#"unknown prefetch policy "fastest"; known: balanced, default, retain"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A policy is already registered under that name.
    #[error("prefetch policy already registered: {name:?}")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// No policy is registered under that name.
    #[error("unknown prefetch policy {name:?}; known: {}", known_list(known))]
    Unknown {
        /// The name that was asked for.
        name: String,
        /// The registered names, sorted.
        known: Vec<String>,
    },
}

/// Why a [`Grid`](crate::Grid) or [`GridMap`](crate::GridMap) operation
/// was refused: the operands' shapes disagree. Shapes are `(rows, cols)`.
///
/// ```
/// use prefetch_policy::{Grid, GridError};
///
/// let mut a = Grid::zeros(2, 8);
/// let error = a.try_union_with(&Grid::zeros(3, 8)).unwrap_err();
/// assert_eq!(error, GridError::ShapeMismatch { left: (2, 8), right: (3, 8) });
/// assert_eq!(error.to_string(), "grid shape mismatch: left is 2 x 8, right is 3 x 8");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// Two grids (or a grid and a map's shared shape) differ in shape.
    #[error("grid shape mismatch: left is {} x {}, right is {} x {}", left.0, left.1, right.0, right.1)]
    ShapeMismatch {
        /// The shape of the grid operated on (or the map's shape).
        left: (usize, usize),
        /// The shape of the other operand.
        right: (usize, usize),
    },
    /// The rows given for a grid differ in length.
    #[error("row {row} has {len} bits, but row 0 has {expected}")]
    RaggedRows {
        /// The first row whose length differs from row 0's.
        row: usize,
        /// Its length.
        len: usize,
        /// Row 0's length.
        expected: usize,
    },
    /// A per-row operation named a row the grid does not have.
    #[error("row {row} is out of range for a grid of {rows} rows")]
    RowOutOfRange {
        /// The row asked for.
        row: usize,
        /// The grid's number of rows.
        rows: usize,
    },
    /// A grid has more rows than a one-word-per-column form holds.
    #[error("a grid of {rows} rows has too many rows to hold as column words (at most {max})")]
    TooManyRows {
        /// The grid's rows.
        rows: usize,
        /// The most rows allowed.
        max: usize,
    },
    /// A flat bitmap does not split into the rows asked for.
    #[error("a flat bitmap of {len} bits does not split into {rows} rows of equal length")]
    FlatLength {
        /// The flat bitmap's length.
        len: usize,
        /// The rows asked for.
        rows: usize,
    },
    /// A flat order other than `"chunk"` or `"row"`.
    #[error("unknown flat order {name:?}: expected \"chunk\" or \"row\"")]
    UnknownFlatOrder {
        /// The name given.
        name: String,
    },
    /// A list of per-row items (keys to gather) has a length other than the
    /// grid's: rows × columns.
    #[error("expected {expected} items, got {actual}")]
    ItemCountMismatch {
        /// What the grid needs.
        expected: usize,
        /// What was given.
        actual: usize,
    },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() { "(none)".to_owned() } else { known.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_their_values() {
        let e = KeyError::TooLong { field: KeyField::CacheSalt, len: 129, max: 128 };
        assert_eq!(e.to_string(), "cache_salt must be at most 128 bytes long (got 129 bytes)");
        assert_eq!(e.field(), KeyField::CacheSalt);
        let e = PlanError::DuplicateAdapterIndex { index: 2 };
        assert_eq!(e.to_string(), "adapter index 2 is listed more than once");
        let e = PlanError::PlanLengthMismatch { adapter: 1, expected: 8, actual: 9 };
        assert_eq!(e.to_string(), "the bitmap for adapter 1 has 9 bits, but the plan covers 8 keys");
        let e = PlanError::KeyCountMismatch { expected: 8, actual: 2 };
        assert_eq!(e.to_string(), "the plan covers 8 keys, but 2 items were given");
        let e = PlanViolation::from(PlanError::DuplicateAdapterIndex { index: 0 });
        assert_eq!(e.to_string(), "adapter index 0 is listed more than once");
        let e = PlanViolation::NotFirstHolder { key: 3, planned: 2, first: 0 };
        assert_eq!(e.to_string(), "key 3 is planned on adapter 2, but adapter 0 holds it and comes first");
        let e = RegistryError::Unknown { name: "x".into(), known: vec![] };
        assert_eq!(e.to_string(), r#"unknown prefetch policy "x"; known: (none)"#);
        let e = RegistryError::Duplicate { name: "default".into() };
        assert_eq!(e.to_string(), r#"prefetch policy already registered: "default""#);
    }
}
