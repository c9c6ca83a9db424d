//! bitmap-core (work in progress)
pub mod kernel;
