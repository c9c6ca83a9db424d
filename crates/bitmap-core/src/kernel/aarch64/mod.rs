//! aarch64 kernels. An SVE kernel would be one more module here.

pub(crate) mod neon;
