//! The Python–Rust boundary that every class module crosses: Python
//! arguments to Rust values, with the messages and exception types a
//! Python caller expects (`args`); the Rust crates' errors as Python
//! exceptions (`errors`); sizes from Python checked before they are
//! allocated (`memory`); a Rust `Bitmap`'s results as Python values, and
//! when to release the GIL (`bits`).
//!
//! A folder of its own because it is the bottom of the crate: these files
//! know no Python class of this crate and import nothing above them, so
//! every other folder can use them without an import circle.

pub(crate) mod args;
pub(crate) mod bits;
pub(crate) mod errors;
pub(crate) mod memory;
