//! [`Keys`], the cheap view of a request's keys that policies receive.

use crate::object_key::ObjectKey;

/// The keys of one prefetch request, as a policy sees them: either the key
/// objects themselves or only how many there are.
///
/// # Why not `&[ObjectKey]`
///
/// Key `i` of a request is bit `i` of every bitmap, and the first-wins
/// policies (`default`, `retain`) decide from the bitmaps alone: they only
/// need the number of keys. A caller that plans 4 million keys (a benchmark,
/// the CLI, a controller that keeps its keys in another form) should not
/// have to build 4 million `ObjectKey`s — each a hash, a model name and a
/// salt on the heap — just to say "4 million". [`Keys::count`] says it for
/// free; [`Keys::objects`] passes the real keys to a policy that reads them
/// (say, one that retains keys of a given model), which gets them through
/// [`as_slice`](Keys::as_slice) or [`get`](Keys::get).
///
/// A generic `&[K]` parameter would also avoid the objects, but it would
/// make [`PrefetchPolicy`](crate::PrefetchPolicy) unusable as a trait
/// object (`dyn PrefetchPolicy`), which the registry needs. `Keys` is a
/// `Copy` value of a few words, so passing it costs nothing.
///
/// ```
/// use prefetch_policy::{Keys, ObjectKey};
///
/// let many = Keys::count(4 << 20);
/// assert_eq!(many.len(), 4 << 20);
/// assert_eq!(many.as_slice(), None); // contents unknown: only a count
///
/// let objects = vec![ObjectKey::new(*b"h0", "m", 0)?, ObjectKey::new(*b"h1", "m", 0)?];
/// let keys = Keys::from(&objects[..]);
/// assert_eq!(keys.len(), 2);
/// assert_eq!(keys.get(1).map(ObjectKey::chunk_hash), Some(&b"h1"[..]));
/// assert_eq!(keys.prefix(1).len(), 1);
/// # Ok::<(), prefetch_policy::KeyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Keys<'a> {
    /// Only the number of keys; their contents are not available.
    Count(usize),
    /// The key objects.
    Objects(&'a [ObjectKey]),
}

impl<'a> Keys<'a> {
    /// `n` keys whose contents are not available.
    #[inline]
    pub const fn count(n: usize) -> Keys<'static> {
        Keys::Count(n)
    }

    /// The given key objects.
    #[inline]
    pub const fn objects(keys: &'a [ObjectKey]) -> Keys<'a> {
        Keys::Objects(keys)
    }

    /// The number of keys.
    #[inline]
    pub const fn len(self) -> usize {
        match self {
            Keys::Count(n) => n,
            Keys::Objects(keys) => keys.len(),
        }
    }

    /// Whether there are no keys.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Key `index`, or `None` if it is out of range or only the count is
    /// known.
    #[inline]
    pub fn get(self, index: usize) -> Option<&'a ObjectKey> {
        self.as_slice()?.get(index)
    }

    /// The key objects, or `None` if only the count is known.
    #[inline]
    pub const fn as_slice(self) -> Option<&'a [ObjectKey]> {
        match self {
            Keys::Count(_) => None,
            Keys::Objects(keys) => Some(keys),
        }
    }

    /// The first `n` keys (all of them if there are fewer): what a
    /// controller writes into L1 after trimming a plan to a prefix.
    #[inline]
    pub fn prefix(self, n: usize) -> Keys<'a> {
        match self {
            Keys::Count(len) => Keys::Count(len.min(n)),
            Keys::Objects(keys) => Keys::Objects(&keys[..keys.len().min(n)]),
        }
    }
}

impl<'a> From<&'a [ObjectKey]> for Keys<'a> {
    fn from(keys: &'a [ObjectKey]) -> Keys<'a> {
        Keys::Objects(keys)
    }
}

impl<'a> From<&'a Vec<ObjectKey>> for Keys<'a> {
    fn from(keys: &'a Vec<ObjectKey>) -> Keys<'a> {
        Keys::Objects(keys)
    }
}

impl<'a, const N: usize> From<&'a [ObjectKey; N]> for Keys<'a> {
    fn from(keys: &'a [ObjectKey; N]) -> Keys<'a> {
        Keys::Objects(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u8) -> ObjectKey {
        ObjectKey::new(vec![i], "m", 0).unwrap()
    }

    #[test]
    fn count_knows_only_the_length() {
        let keys = Keys::count(5);
        assert_eq!(keys.len(), 5);
        assert!(!keys.is_empty());
        assert_eq!(keys.get(0), None);
        assert_eq!(keys.as_slice(), None);
        assert_eq!(keys.prefix(3), Keys::count(3));
        assert_eq!(keys.prefix(10), Keys::count(5));
        assert!(Keys::count(0).is_empty());
    }

    #[test]
    fn objects_expose_the_keys() {
        let objects = [key(0), key(1), key(2)];
        let keys = Keys::from(&objects);
        assert_eq!(keys.len(), 3);
        assert_eq!(keys.get(2), Some(&objects[2]));
        assert_eq!(keys.get(3), None);
        assert_eq!(keys.as_slice(), Some(&objects[..]));
        assert_eq!(keys.prefix(2).as_slice(), Some(&objects[..2]));
        assert_eq!(keys.prefix(9).len(), 3);
        let vec = objects.to_vec();
        assert_eq!(Keys::from(&vec), Keys::objects(&objects));
        assert_eq!(Keys::from(&objects[..1]).len(), 1);
    }

    #[test]
    fn is_small_and_copy() {
        fn assert_copy<T: Copy>() {}
        assert_copy::<Keys<'static>>();
        assert!(size_of::<Keys<'static>>() <= 3 * size_of::<usize>());
    }
}
