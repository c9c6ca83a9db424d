//! [`ObjectKey`], LMCache's identifier of one stored KV-cache object.

use crate::error::{KeyError, KeyField};

/// The identifier of one object in the distributed KV cache, as LMCache's
/// `ObjectKey`: a chunk's content hash, the model, the KV slice (`kv_rank`),
/// the object group and a per-user isolation salt.
///
/// The fields are validated once, at construction, so every `ObjectKey` in
/// existence is valid (the fields are private for that reason):
///
/// - `model_name` contains no `@`: L2 adapters join key fields with `@`
///   in serialized keys and file names, and parse them back by splitting.
/// - `cache_salt` contains no `@` (same reason), no `/` or `\` (the file
///   system adapter embeds the salt in file names), no NUL (the C++
///   connector takes C strings), and is at most
///   [`CACHE_SALT_MAX_LEN`](ObjectKey::CACHE_SALT_MAX_LEN) bytes, to stay
///   within `NAME_MAX` once model, rank, hash and extension are added.
///
/// Policies see keys through [`Keys`](crate::Keys), which can also stand
/// for a bare count when no policy needs the contents.
///
/// ```
/// use prefetch_policy::{KeyError, KeyField, ObjectKey};
///
/// let key = ObjectKey::new(*b"\x12\x34", "meta-llama/Llama-3.1-8B", 7)?
///     .with_object_group_id(1)
///     .with_cache_salt("tenant-42")?;
/// assert_eq!(key.chunk_hash(), b"\x12\x34");
/// assert_eq!(key.model_name(), "meta-llama/Llama-3.1-8B");
/// assert_eq!((key.kv_rank(), key.object_group_id(), key.cache_salt()), (7, 1, "tenant-42"));
///
/// let error = key.with_cache_salt("a/b").unwrap_err();
/// assert_eq!(error.field(), KeyField::CacheSalt);
/// # Ok::<(), KeyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    chunk_hash: Vec<u8>,
    model_name: String,
    kv_rank: u32,
    object_group_id: u32,
    cache_salt: String,
}

impl ObjectKey {
    /// The longest allowed `cache_salt`, in bytes.
    pub const CACHE_SALT_MAX_LEN: usize = 128;

    /// The characters `model_name` must not contain.
    pub const MODEL_NAME_FORBIDDEN: &'static [char] = &['@'];

    /// The characters `cache_salt` must not contain.
    pub const CACHE_SALT_FORBIDDEN: &'static [char] = &['@', '/', '\\', '\0'];

    /// A key with `object_group_id` 0 and an empty `cache_salt` (LMCache's
    /// defaults).
    ///
    /// # Errors
    ///
    /// [`KeyError::ForbiddenCharacter`] naming [`KeyField::ModelName`] if
    /// `model_name` contains `@`.
    pub fn new(
        chunk_hash: impl Into<Vec<u8>>,
        model_name: impl Into<String>,
        kv_rank: u32,
    ) -> Result<ObjectKey, KeyError> {
        ObjectKey::from_parts(chunk_hash, model_name, kv_rank, 0, String::new())
    }

    /// A key from all five fields.
    ///
    /// # Errors
    ///
    /// A [`KeyError`] naming the first field (in declaration order) that
    /// breaks its rules.
    ///
    /// ```
    /// use prefetch_policy::{KeyError, KeyField, ObjectKey};
    /// let salt = "s".repeat(129);
    /// let error = ObjectKey::from_parts(vec![1], "m", 0, 0, salt).unwrap_err();
    /// assert_eq!(error, KeyError::TooLong { field: KeyField::CacheSalt, len: 129, max: 128 });
    /// ```
    pub fn from_parts(
        chunk_hash: impl Into<Vec<u8>>,
        model_name: impl Into<String>,
        kv_rank: u32,
        object_group_id: u32,
        cache_salt: impl Into<String>,
    ) -> Result<ObjectKey, KeyError> {
        let model_name = model_name.into();
        check_field(KeyField::ModelName, &model_name, ObjectKey::MODEL_NAME_FORBIDDEN, usize::MAX)?;
        let cache_salt = cache_salt.into();
        check_field(KeyField::CacheSalt, &cache_salt, ObjectKey::CACHE_SALT_FORBIDDEN, ObjectKey::CACHE_SALT_MAX_LEN)?;
        Ok(ObjectKey { chunk_hash: chunk_hash.into(), model_name, kv_rank, object_group_id, cache_salt })
    }

    /// This key with another `object_group_id` (it has no rules).
    #[must_use]
    pub fn with_object_group_id(mut self, object_group_id: u32) -> ObjectKey {
        self.object_group_id = object_group_id;
        self
    }

    /// This key with another `cache_salt`.
    ///
    /// # Errors
    ///
    /// [`KeyError::ForbiddenCharacter`] or [`KeyError::TooLong`] naming
    /// [`KeyField::CacheSalt`].
    pub fn with_cache_salt(mut self, cache_salt: impl Into<String>) -> Result<ObjectKey, KeyError> {
        let cache_salt = cache_salt.into();
        check_field(KeyField::CacheSalt, &cache_salt, ObjectKey::CACHE_SALT_FORBIDDEN, ObjectKey::CACHE_SALT_MAX_LEN)?;
        self.cache_salt = cache_salt;
        Ok(self)
    }

    /// The chunk's content hash.
    pub fn chunk_hash(&self) -> &[u8] {
        &self.chunk_hash
    }

    /// The model's name.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// The KV slice this object holds (see [`ObjectKey::compute_kv_rank`]).
    pub fn kv_rank(&self) -> u32 {
        self.kv_rank
    }

    /// The object group.
    pub fn object_group_id(&self) -> u32 {
        self.object_group_id
    }

    /// The per-user isolation salt; empty by default.
    pub fn cache_salt(&self) -> &str {
        &self.cache_salt
    }

    /// LMCache's packing of a worker's position into a `kv_rank`: one byte
    /// each of world size, global rank, local world size and local rank,
    /// most significant first.
    ///
    /// ```
    /// use prefetch_policy::ObjectKey;
    /// // TP=4, PP=2: TP worker 1 on node 1.
    /// assert_eq!(ObjectKey::compute_kv_rank(8, 5, 4, 1), 0x0805_0401);
    /// ```
    pub const fn compute_kv_rank(world_size: u8, global_rank: u8, local_world_size: u8, local_rank: u8) -> u32 {
        u32::from_be_bytes([world_size, global_rank, local_world_size, local_rank])
    }
}

fn check_field(field: KeyField, value: &str, forbidden: &[char], max_len: usize) -> Result<(), KeyError> {
    if let Some(character) = value.chars().find(|c| forbidden.contains(c)) {
        return Err(KeyError::ForbiddenCharacter { field, character, value: value.to_owned() });
    }
    if value.len() > max_len {
        return Err(KeyError::TooLong { field, len: value.len(), max: max_len });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(field: KeyField, character: char, value: &str) -> KeyError {
        KeyError::ForbiddenCharacter { field, character, value: value.to_owned() }
    }

    #[test]
    fn defaults_match_lmcache() {
        let key = ObjectKey::new(vec![0xab; 32], "model", 3).unwrap();
        assert_eq!(key.object_group_id(), 0);
        assert_eq!(key.cache_salt(), "");
        assert_eq!(key.chunk_hash(), &[0xab; 32][..]);
    }

    #[test]
    fn model_name_rejects_at_sign() {
        assert_eq!(ObjectKey::new(vec![], "a@b", 0), Err(forbidden(KeyField::ModelName, '@', "a@b")));
        // Everything else in HuggingFace ids is fine, including '/'.
        assert!(ObjectKey::new(vec![], "org/model-1.5_x", 0).is_ok());
    }

    #[test]
    fn cache_salt_rejects_each_forbidden_character() {
        for character in ['@', '/', '\\', '\0'] {
            let salt = format!("ab{character}cd");
            let key = ObjectKey::new(vec![], "m", 0).unwrap();
            assert_eq!(key.with_cache_salt(salt.clone()), Err(forbidden(KeyField::CacheSalt, character, &salt)));
            assert_eq!(
                ObjectKey::from_parts(vec![], "m", 0, 0, salt.clone()),
                Err(forbidden(KeyField::CacheSalt, character, &salt))
            );
        }
    }

    #[test]
    fn cache_salt_length_is_counted_in_bytes() {
        let key = ObjectKey::new(vec![], "m", 0).unwrap();
        assert!(key.clone().with_cache_salt("s".repeat(128)).is_ok());
        assert_eq!(
            key.clone().with_cache_salt("s".repeat(129)),
            Err(KeyError::TooLong { field: KeyField::CacheSalt, len: 129, max: 128 })
        );
        // 43 three-byte characters: 43 characters but 129 bytes.
        assert_eq!(
            key.with_cache_salt("€".repeat(43)),
            Err(KeyError::TooLong { field: KeyField::CacheSalt, len: 129, max: 128 })
        );
    }

    #[test]
    fn first_bad_field_is_reported() {
        let error = ObjectKey::from_parts(vec![], "a@b", 0, 0, "c@d").unwrap_err();
        assert_eq!(error.field(), KeyField::ModelName);
    }

    #[test]
    fn object_group_id_has_no_rules() {
        let key = ObjectKey::new(vec![1], "m", 0).unwrap().with_object_group_id(u32::MAX);
        assert_eq!(key.object_group_id(), u32::MAX);
    }
}
