//! [`Pos`]: where a key sits in its request.

/// Where one key sits in its request: its position in request order
/// (`index`, the order of [`Answer::failed`](crate::Answer::failed)), and for a grid request its
/// cell (`row`, `col`); a slice's keys are row 0, column `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// The key's position in request order (row-major for a grid).
    pub index: u32,
    /// The key's row in the request's grid.
    pub row: u32,
    /// The key's column (chunk) in the request's grid.
    pub col: u32,
}
