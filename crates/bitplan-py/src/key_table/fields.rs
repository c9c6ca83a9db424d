//! Keys hashed and compared without running their Python code, where that
//! gives exactly what their Python code gives.
//!
//! A key table looks a new key object up as a `dict` does: one `__hash__`,
//! then one `__eq__` with the held key of that hash. For LMCache's
//! `ObjectKey`, a frozen dataclass, those are Python functions that
//! dataclasses wrote: `__hash__` hashes the tuple of the fields,
//! `__eq__` checks that both keys are of the same class and compares the
//! fields in order. They cost about 300 ns each here (CPython 3.11), most
//! of a face's time a key. Read natively as those methods read them, the
//! same fields give the same hash through CPython's tuple hash (the same
//! algorithm since 3.8), and the same equality through each field's own
//! comparison, in a fraction of the time.
//!
//! Only where that is exact: the key's class is a frozen dataclass whose
//! `__eq__` and `__hash__` dataclasses generated (not written in the
//! class), every field takes part in both, and the values read are exact
//! `bytes`, `str` or `int` objects (whose hash and equality are CPython's
//! own C code). Any other key, or field value, goes through its Python
//! `__hash__` and `__eq__` as before.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString, PyType};

/// The most fields a field-keyed class may have (`ObjectKey` has five).
const MAX_FIELDS: usize = 8;

/// The most classes remembered; keys of other classes go through their
/// Python code (a table's keys are of one class or a few).
const MAX_CLASSES: usize = 16;

/// A key's fields, read as its generated methods read them, and its
/// Python hash computed from them.
pub(crate) struct KeyFields<'py> {
    /// Where its class is in [`FieldClasses`]'s list (which only grows).
    seen: usize,
    values: [Option<Bound<'py, PyAny>>; MAX_FIELDS],
    len: usize,
    /// `hash(key)`, as the class's generated `__hash__` gives it.
    pub(crate) hash: isize,
}

/// A class of keys seen.
#[derive(Debug)]
struct SeenClass {
    /// Its address.
    address: usize,
    /// The class, held so that the address stays its own.
    _class: Py<PyType>,
    /// Its field names if its keys are hashed and compared by their
    /// fields, else `None`.
    fields: Option<Box<[Py<PyString>]>>,
}

/// What a table knows of the classes of its keys (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct FieldClasses {
    classes: Vec<SeenClass>,
}

impl FieldClasses {
    /// The fields of `key` and its hash, if its class is field-keyed and
    /// every field holds an exact `bytes`, `str` or `int`.
    pub(crate) fn read<'py>(&mut self, key: &Bound<'py, PyAny>) -> PyResult<Option<KeyFields<'py>>> {
        let class = key.get_type();
        let address = class.as_ptr() as usize;
        let seen = match self.classes.iter().position(|seen| seen.address == address) {
            Some(at) => at,
            None => {
                if self.classes.len() == MAX_CLASSES {
                    return Ok(None);
                }
                let fields = field_names(&class)?;
                self.classes.push(SeenClass { address, _class: class.clone().unbind(), fields });
                self.classes.len() - 1
            }
        };
        let Some(names) = self.classes[seen].fields.as_deref() else {
            return Ok(None);
        };
        let Some(values) = read_fields(key, names)? else {
            return Ok(None);
        };
        let mut hash = TupleHash::new();
        for value in values.iter().take(names.len()).flatten() {
            hash.add(value.hash()?);
        }
        Ok(Some(KeyFields { seen, values, len: names.len(), hash: hash.finish(names.len()) }))
    }

    /// The value of the field `name` among `fields`, if the key's class
    /// has one of that name.
    pub(crate) fn value<'f, 'py>(
        &self,
        fields: &'f KeyFields<'py>,
        name: &Bound<'py, PyString>,
    ) -> Option<&'f Bound<'py, PyAny>> {
        let names = self.classes[fields.seen].fields.as_deref()?;
        let at = names.iter().position(|known| known.as_ptr() == name.as_ptr())?;
        fields.values[at].as_ref()
    }

    /// Whether `held` equals the key whose fields are `fields`, as `held ==
    /// key` would say; `None` where only the keys' Python code can tell
    /// (another class, a field that is not an exact `bytes`, `str` or
    /// `int`).
    pub(crate) fn equal(&self, held: &Bound<'_, PyAny>, fields: &KeyFields<'_>) -> PyResult<Option<bool>> {
        let seen = &self.classes[fields.seen];
        if held.get_type().as_ptr() as usize != seen.address {
            return Ok(None);
        }
        let Some(names) = seen.fields.as_deref() else {
            return Ok(None);
        };
        let Some(held_values) = read_fields(held, names)? else {
            return Ok(None);
        };
        for (ours, theirs) in fields.values[..fields.len].iter().zip(&held_values[..fields.len]) {
            let (Some(ours), Some(theirs)) = (ours, theirs) else {
                return Ok(None);
            };
            if ours.is(theirs) {
                continue;
            }
            // Exact builtins of different types are never equal; of the
            // same type, their C comparison runs no Python code.
            if !ours.get_type().is(theirs.get_type()) || !theirs.eq(ours)? {
                return Ok(Some(false));
            }
        }
        Ok(Some(true))
    }
}

/// The field names of `class` if its keys can be hashed and compared by
/// their fields (see the module docs), else `None`.
fn field_names(class: &Bound<'_, PyType>) -> PyResult<Option<Box<[Py<PyString>]>>> {
    let py = class.py();
    if !cfg!(target_pointer_width = "64") {
        // (`TupleHash` is the 64-bit algorithm.)
        return Ok(None);
    }
    let Some(params) = class.getattr_opt(intern!(py, "__dataclass_params__"))? else {
        return Ok(None);
    };
    if !params.getattr(intern!(py, "eq"))?.is_truthy()? || !params.getattr(intern!(py, "frozen"))?.is_truthy()? {
        return Ok(None);
    }
    // Written by dataclasses (compiled from a string), on this class itself.
    let own = class.getattr(intern!(py, "__dict__"))?;
    for method in [intern!(py, "__eq__"), intern!(py, "__hash__")] {
        let Ok(function) = own.get_item(method) else {
            return Ok(None);
        };
        let Some(code) = function.getattr_opt(intern!(py, "__code__"))? else {
            return Ok(None);
        };
        if code.getattr(intern!(py, "co_filename"))?.extract::<String>().ok().as_deref() != Some("<string>") {
            return Ok(None);
        }
    }
    let fields = py.import(intern!(py, "dataclasses"))?.call_method1(intern!(py, "fields"), (class,))?;
    let mut names = Vec::new();
    for field in fields.try_iter()? {
        let field = field?;
        let hash = field.getattr(intern!(py, "hash"))?;
        if !field.getattr(intern!(py, "compare"))?.is_truthy()? || !(hash.is_none() || hash.is_truthy()?) {
            return Ok(None);
        }
        let name = field.getattr(intern!(py, "name"))?.cast_into::<PyString>()?;
        // Interned: the attribute lookups then compare names by address.
        names.push(PyString::intern(py, name.to_str()?).unbind());
    }
    if names.len() > MAX_FIELDS {
        return Ok(None);
    }
    Ok(Some(names.into_boxed_slice()))
}

/// The values of `key`'s attributes `names`, if each is an exact `bytes`,
/// `str` or `int`: read as the generated methods read them (`self.name`),
/// so a descriptor or a `__getattr__` gives what it gives them. (Not from
/// the instance's `__dict__`: CPython 3.11 and later keep a new object's
/// attributes without one, and asking for it builds one.)
fn read_fields<'py>(
    key: &Bound<'py, PyAny>,
    names: &[Py<PyString>],
) -> PyResult<Option<[Option<Bound<'py, PyAny>>; MAX_FIELDS]>> {
    let py = key.py();
    let mut values: [Option<Bound<'py, PyAny>>; MAX_FIELDS] = Default::default();
    for (value, name) in values.iter_mut().zip(names) {
        let Some(found) = key.getattr_opt(name.bind(py))? else {
            return Ok(None);
        };
        if !(found.is_exact_instance_of::<PyBytes>()
            || found.is_exact_instance_of::<PyString>()
            || found.is_exact_instance_of::<PyInt>())
        {
            return Ok(None);
        }
        *value = Some(found);
    }
    Ok(Some(values))
}

/// CPython's hash of a tuple (`tuplehash`, xxHash-based, 64-bit, since
/// 3.8), from its items' hashes.
struct TupleHash(u64);

impl TupleHash {
    const PRIME_1: u64 = 11_400_714_785_074_694_791;
    const PRIME_2: u64 = 14_029_467_366_897_019_727;
    const PRIME_5: u64 = 2_870_177_450_012_600_261;

    fn new() -> TupleHash {
        TupleHash(Self::PRIME_5)
    }

    fn add(&mut self, item: isize) {
        self.0 =
            self.0.wrapping_add((item as u64).wrapping_mul(Self::PRIME_2)).rotate_left(31).wrapping_mul(Self::PRIME_1);
    }

    fn finish(self, len: usize) -> isize {
        let hash = self.0.wrapping_add(len as u64 ^ (Self::PRIME_5 ^ 3_527_539));
        // (-1 is CPython's error value: it stands in another.)
        if hash == u64::MAX { 1_546_275_796 } else { hash as isize }
    }
}
