//! The plain model (filled in next).
