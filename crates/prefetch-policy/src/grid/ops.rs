//! The grid operations: union, intersection and and-not, each one kernel
//! call over the grid's whole buffer (the rows' words are contiguous and
//! their tails clear on both sides, so the rows need no loop of their own), as named in-place methods with `try_` forms and
//! as the operators `|`, `&`, `-` for every owned/borrowed combination with
//! their assign forms.
//!
//! As for `Bitmap`, a shape mismatch is a caller bug for the operators and
//! the named methods (they panic naming both shapes), and an error for the
//! `try_` forms, which leave the grid unchanged.

use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Sub, SubAssign};

use bitmap_core::{Bitmap, kernel};

use crate::error::GridError;
use crate::grid::Grid;

impl Grid {
    /// `Ok` if `other` has this grid's shape.
    ///
    /// # Errors
    ///
    /// [`GridError::ShapeMismatch`] (`left` is this grid's shape).
    #[inline]
    pub fn check_same_shape(&self, other: &Grid) -> Result<(), GridError> {
        if self.shape() == other.shape() {
            Ok(())
        } else {
            Err(GridError::ShapeMismatch { left: self.shape(), right: other.shape() })
        }
    }

    #[inline]
    #[track_caller]
    fn assert_same_shape(&self, other: &Grid) {
        if let Err(error) = self.check_same_shape(other) {
            panic!("prefetch-policy: {error}");
        }
    }

    /// `op` of the two buffers into a new grid of this shape; shapes
    /// already checked. bitmap-core's operators into a new bitmap write it
    /// in one kernel pass: at 64 × 4,096 cells a clone and an in-place pass
    /// read and wrote the result twice.
    #[inline]
    fn combined(&self, other: &Grid, op: fn(&Bitmap, &Bitmap) -> Bitmap) -> Grid {
        Grid::from_words(op(&self.words, &other.words), self.num_rows(), self.num_cols())
    }

    /// Applies the kernel `op` to the two buffers; shapes already checked.
    #[inline]
    fn zip_words(&mut self, other: &Grid, op: fn(&mut [u64], &[u64])) {
        op(self.words_mut(), other.as_words());
    }
}

/// Declares a named in-place method and its `try_` form.
macro_rules! in_place {
    ($(
        $(#[$doc:meta])*
        fn $name:ident / $try_name:ident => $row_op:path;
    )*) => {
        /// # Grid operations
        ///
        /// ```
        /// use prefetch_policy::Grid;
        /// let a = Grid::from_fn(2, 4, |r, c| c < 2 + r);
        /// let b = Grid::from_fn(2, 4, |_, c| c % 2 == 1);
        /// assert_eq!((&a | &b).to_string(), "[1101, 1111]");
        /// assert_eq!((&a & &b).to_string(), "[0100, 0100]");
        /// assert_eq!((&a - &b).to_string(), "[1000, 1010]");
        ///
        /// let mut c = a.clone();
        /// c.union_with(&b); // same as `c |= &b`
        /// assert_eq!(c, &a | &b);
        /// assert!(c.try_union_with(&Grid::zeros(2, 5)).is_err());
        /// ```
        impl Grid {
            $(
                $(#[$doc])*
                ///
                /// # Panics
                ///
                /// If the shapes differ; the `try_` form returns an error
                /// instead.
                #[inline]
                #[track_caller]
                pub fn $name(&mut self, other: &Grid) {
                    self.assert_same_shape(other);
                    self.zip_words(other, $row_op);
                }

                $(#[$doc])*
                ///
                /// # Errors
                ///
                /// [`GridError::ShapeMismatch`] if the shapes differ; the
                /// grid is unchanged.
                #[inline]
                pub fn $try_name(&mut self, other: &Grid) -> Result<(), GridError> {
                    self.check_same_shape(other)?;
                    self.zip_words(other, $row_op);
                    Ok(())
                }
            )*
        }
    };
}

in_place! {
    /// Adds the cells set in `other` (`self |= other`; LMCache's `+=`).
    fn union_with / try_union_with => kernel::or_assign;
    /// Keeps only the cells also set in `other` (`self &= other`).
    fn intersect_with / try_intersect_with => kernel::and_assign;
    /// Removes the cells set in `other` (`self -= other`, `self &= !other`).
    fn difference_with / try_difference_with => kernel::and_not_assign;
}

/// One operator for the four owned/borrowed combinations and its assign
/// form for owned and borrowed right-hand sides. `$into_rhs` computes
/// `lhs OP rhs` into `rhs`'s row, for `&a OP b`.
macro_rules! operator {
    ($Op:ident::$op:ident, $OpAssign:ident::$op_assign:ident, $in_place:ident, $into_rhs:expr, $word:expr) => {
        impl $Op<&Grid> for &Grid {
            type Output = Grid;

            /// Into a new buffer in one pass (a clone and an in-place pass
            /// would be two).
            ///
            /// # Panics
            ///
            /// If the shapes differ.
            #[inline]
            #[track_caller]
            fn $op(self, rhs: &Grid) -> Grid {
                self.assert_same_shape(rhs);
                self.combined(rhs, $word)
            }
        }

        impl $Op<&Grid> for Grid {
            type Output = Grid;

            /// Reuses `self`'s rows.
            ///
            /// # Panics
            ///
            /// If the shapes differ.
            #[inline]
            #[track_caller]
            fn $op(mut self, rhs: &Grid) -> Grid {
                self.$in_place(rhs);
                self
            }
        }

        impl $Op<Grid> for &Grid {
            type Output = Grid;

            /// Reuses `rhs`'s rows.
            ///
            /// # Panics
            ///
            /// If the shapes differ.
            #[inline]
            #[track_caller]
            fn $op(self, mut rhs: Grid) -> Grid {
                self.assert_same_shape(&rhs);
                let into_rhs: fn(&[u64], &mut [u64]) = $into_rhs;
                into_rhs(self.as_words(), rhs.words_mut());
                rhs
            }
        }

        impl $Op<Grid> for Grid {
            type Output = Grid;

            /// Reuses `self`'s rows.
            ///
            /// # Panics
            ///
            /// If the shapes differ.
            #[inline]
            #[track_caller]
            fn $op(mut self, rhs: Grid) -> Grid {
                self.$in_place(&rhs);
                self
            }
        }

        impl $OpAssign<&Grid> for Grid {
            /// # Panics
            ///
            /// If the shapes differ.
            #[inline]
            #[track_caller]
            fn $op_assign(&mut self, rhs: &Grid) {
                self.$in_place(rhs);
            }
        }

        impl $OpAssign<Grid> for Grid {
            /// # Panics
            ///
            /// If the shapes differ.
            #[inline]
            #[track_caller]
            fn $op_assign(&mut self, rhs: Grid) {
                self.$in_place(&rhs);
            }
        }
    };
}

operator!(BitOr::bitor, BitOrAssign::bitor_assign, union_with, |lhs, rhs| kernel::or_assign(rhs, lhs), |a, b| a | b);
operator!(
    BitAnd::bitand,
    BitAndAssign::bitand_assign,
    intersect_with,
    |lhs, rhs| kernel::and_assign(rhs, lhs),
    |a, b| a & b
);
// `lhs - rhs` into `rhs`'s buffer: `!rhs & lhs`. The NOT sets the rows'
// tail bits, and the AND with `lhs`, whose tails are clear, clears them.
operator!(
    Sub::sub,
    SubAssign::sub_assign,
    difference_with,
    |lhs, rhs| {
        kernel::not_assign(rhs);
        kernel::and_assign(rhs, lhs);
    },
    |a, b| a & !b
);

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: &[&str]) -> Grid {
        Grid::from_rows(rows.iter().map(|row| row.parse().unwrap()).collect()).unwrap()
    }

    #[test]
    fn every_operator_form_agrees_with_the_named_method() {
        let a = grid(&["1100", "0110", "1111"]);
        let b = grid(&["1010", "0011", "0000"]);
        let or = grid(&["1110", "0111", "1111"]);
        let and = grid(&["1000", "0010", "0000"]);
        let sub = grid(&["0100", "0100", "1111"]);
        assert_eq!(&a | &b, or);
        assert_eq!(a.clone() | &b, or);
        assert_eq!(&a | b.clone(), or);
        assert_eq!(a.clone() | b.clone(), or);
        assert_eq!(&a & &b, and);
        assert_eq!(a.clone() & &b, and);
        assert_eq!(&a & b.clone(), and);
        assert_eq!(a.clone() & b.clone(), and);
        assert_eq!(&a - &b, sub);
        assert_eq!(a.clone() - &b, sub);
        assert_eq!(&a - b.clone(), sub);
        assert_eq!(a.clone() - b.clone(), sub);
        let mut c = a.clone();
        c |= &b;
        assert_eq!(c, or);
        let mut c = a.clone();
        c |= b.clone();
        assert_eq!(c, or);
        let mut c = a.clone();
        c &= b.clone();
        assert_eq!(c, and);
        let mut c = a.clone();
        c &= &b;
        assert_eq!(c, and);
        let mut c = a.clone();
        c -= &b;
        assert_eq!(c, sub);
        let mut c = a.clone();
        c -= b.clone();
        assert_eq!(c, sub);
    }

    #[test]
    fn try_forms_refuse_other_shapes_and_change_nothing() {
        let mut a = grid(&["11", "01"]);
        let before = a.clone();
        for other in [Grid::zeros(3, 2), Grid::zeros(2, 3), Grid::empty()] {
            let expected = GridError::ShapeMismatch { left: (2, 2), right: other.shape() };
            assert_eq!(a.try_union_with(&other), Err(expected.clone()));
            assert_eq!(a.try_intersect_with(&other), Err(expected.clone()));
            assert_eq!(a.try_difference_with(&other), Err(expected));
        }
        assert_eq!(a, before);
        a.try_difference_with(&grid(&["10", "00"])).unwrap();
        assert_eq!(a.to_string(), "[01, 01]");
    }

    #[test]
    #[should_panic(expected = "grid shape mismatch: left is 1 x 2, right is 1 x 3")]
    fn operators_panic_on_a_shape_mismatch() {
        let _ = &Grid::zeros(1, 2) | &Grid::zeros(1, 3);
    }
}
