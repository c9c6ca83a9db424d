//! `bitmap_ops`: a random sequence of operations applied to a [`Bitmap`] and
//! to a naive `Vec<bool>` model, compared after every step, on every kernel.
//!
//! # What is checked
//!
//! - After every step: the length, the words equal the model's bit by bit,
//!   and every bit past the length is clear (the tail invariant).
//! - Each operation's own results: counts, searches, iterators (both ends,
//!   mixed, `size_hint` bounds), errors of the `try_` forms (and that they
//!   leave the bitmap unchanged), text, bytes, words and serde round trips.
//! - Every word-level operation a step performs is also run **directly on
//!   every kernel this CPU has** ([`Kernel::available`]: scalar, portable,
//!   AVX2 and AVX-512 or NEON) over copies of the operands' words, and compared with a
//!   per-word reference. The bitmap's own operations run on the *active*
//!   kernel, chosen once per process, so this is what reaches the others
//!   within one run. The copies are placed in buffers of their own at a word
//!   offset that changes every step, ending where the allocation ends: each
//!   kernel meets every alignment of its vectors, and AddressSanitizer sees
//!   any read or write past either end.
//!
//! Lengths go up to [`MAX_BITS`], past two 64-word blocks of the AVX2
//! Harley–Seal popcount, so every loop of every kernel runs (the dispatched
//! functions run inputs of at most 4 words inline on the scalar loop).

use core::ops::Bound;
use std::iter;

use arbitrary::Arbitrary;
use bitmap_core::kernel::{self, Kernel, MAX_CLASS_INPUTS};
use bitmap_core::{Bitmap, BitmapError, SplitWriter};

use crate::fill::{Fill, Length, text_of, words_of};

/// The longest bitmap a step builds: 157 words, two blocks of the AVX2
/// popcount's 64-word main loop plus a tail.
pub const MAX_BITS: usize = 10_000;

/// The most operations one input runs, which bounds one execution's time.
pub const MAX_OPS: usize = 64;

/// The most sources of a many-way union or first-wins split: past the 16
/// that `Bitmap::union_of` keeps on the stack.
pub const MAX_SOURCES: usize = 20;

/// The most bits one `Extend` step appends.
const MAX_EXTEND: usize = 1024;

/// Fills the words before a kernel's operand copy: a kernel that writes
/// before its slice changes them.
const SENTINEL: u64 = 0xA5A5_5A5A_C3C3_3C3C;

/// One fuzz input: how to build the bitmap, then what to do with it.
#[derive(Arbitrary, Debug)]
pub struct Input {
    start: Construct,
    /// The word offset of the kernels' operand copies (plus the step number,
    /// modulo 4).
    align: u8,
    ops: Vec<Op>,
}

/// A constructor, with a length (at most `MAX_BITS`) and the pattern the
/// constructor is given.
#[derive(Arbitrary, Debug)]
enum Construct {
    Default,
    New(Length),
    WithPrefix(Length, u16),
    /// Indices as given: out-of-range ones must make it fail.
    FromIndices(Length, Vec<u16>),
    FromBools(Length, Fill),
    Collect(Length, Fill),
    Parse(Length, Fill),
    FromBytes(Length, Fill),
    FromWords(Length, Fill),
    Pushed(Length, Fill),
    ExtendedByRef(Length, Fill),
    WithCapacity(Length, Length, Fill),
}

#[derive(Arbitrary, Debug)]
enum Op {
    // Single bits: indices modulo the length for the panicking forms, as
    // given (possibly out of range) for the fallible ones.
    Set(u16),
    Clear(u16),
    Toggle(u16),
    Assign(u16, bool),
    TrySet(u16),
    TryClear(u16),
    Get(u16),
    SetIndices(Vec<u16>),
    // Ranges, clamped to the length.
    SetRange(RangeSpec),
    ClearRange(RangeSpec),
    CountRange(RangeSpec),
    SetAll,
    ClearAll,
    // Two bitmaps.
    Binary(BinaryOp, Form, Fill),
    Mismatched(BinaryOp, Length),
    Fused(BinaryOp, Fill),
    Relations(Fill),
    UnionOf(Vec<Fill>),
    UnionManyInto(Vec<Fill>),
    FirstWins(Vec<Fill>),
    /// `class_counts` and `split_by_tables` of the first
    /// `MAX_CLASS_INPUTS` operands, with these tables (each cut to its
    /// entries).
    Classes(Vec<Fill>, [u8; MAX_CLASS_INPUTS]),
    // One bitmap.
    Not {
        owned: bool,
    },
    Invert,
    Aggregates,
    Ones(Vec<bool>),
    Bits(Vec<bool>),
    Gather,
    RoundTrip,
    // Length and buffer changes.
    Push(bool),
    Extend {
        count: u16,
        fill: Fill,
        by_ref: bool,
    },
    Reset(Length),
    CopyFrom(Length, Fill),
    CloneFrom(Length, Fill),
    Rebuild(Construct),
    WriteWord(u16, u64),
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum BinaryOp {
    And,
    Or,
    Xor,
    AndNot,
}

impl BinaryOp {
    fn word(self, a: u64, b: u64) -> u64 {
        match self {
            BinaryOp::And => a & b,
            BinaryOp::Or => a | b,
            BinaryOp::Xor => a ^ b,
            BinaryOp::AndNot => a & !b,
        }
    }

    fn bit(self, a: bool, b: bool) -> bool {
        match self {
            BinaryOp::And => a & b,
            BinaryOp::Or => a | b,
            BinaryOp::Xor => a ^ b,
            BinaryOp::AndNot => a & !b,
        }
    }
}

/// Every way the crate offers to apply a binary operation.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Form {
    /// `a.intersect_with(&b)`, …
    Named,
    /// `a.try_intersect_with(&b)`, …
    Try,
    /// `&a & &b`
    RefRef,
    /// `a & &b` (reuses `a`'s buffer)
    OwnedRef,
    /// `&a & b` (reuses `b`'s buffer: `-` inverts `b` in place first)
    RefOwned,
    /// `a & b`
    OwnedOwned,
    /// `a &= &b`
    AssignRef,
    /// `a &= b`
    AssignOwned,
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Endpoint {
    Included(u16),
    Excluded(u16),
    IncludedMax,
    ExcludedMax,
    Unbounded,
}

impl Endpoint {
    fn bound(self) -> Bound<usize> {
        match self {
            Endpoint::Included(i) => Bound::Included(usize::from(i)),
            Endpoint::Excluded(i) => Bound::Excluded(usize::from(i)),
            Endpoint::IncludedMax => Bound::Included(usize::MAX),
            Endpoint::ExcludedMax => Bound::Excluded(usize::MAX),
            Endpoint::Unbounded => Bound::Unbounded,
        }
    }
}

#[derive(Arbitrary, Clone, Copy, Debug)]
struct RangeSpec {
    start: Endpoint,
    end: Endpoint,
}

impl RangeSpec {
    fn bounds(self) -> (Bound<usize>, Bound<usize>) {
        (self.start.bound(), self.end.bound())
    }

    /// The documented meaning, computed without overflow: half-open,
    /// clamped to `len`, empty unless start < end.
    fn clamped(self, len: usize) -> core::ops::Range<usize> {
        let start = match self.start.bound() {
            Bound::Included(s) => s as u128,
            Bound::Excluded(s) => s as u128 + 1,
            Bound::Unbounded => 0,
        };
        let end = match self.end.bound() {
            Bound::Included(e) => e as u128 + 1,
            Bound::Excluded(e) => e as u128,
            Bound::Unbounded => len as u128,
        }
        .min(len as u128);
        if start < end { start as usize..end as usize } else { 0..0 }
    }
}

fn clamp_len(length: Length) -> usize {
    length.bits(MAX_BITS)
}

/// Runs one input.
///
/// # Panics
///
/// On any difference between the bitmap, the model and the kernels.
pub fn check(input: Input) {
    let (bitmap, model) = input.start.build(None);
    let mut state = State { bitmap, model, kernels: Kernel::available(), align: usize::from(input.align), step: 0 };
    state.check_invariants("construction");
    for op in input.ops.iter().take(MAX_OPS) {
        state.step += 1;
        state.apply(op);
        state.check_invariants(op.name());
    }
}

impl Construct {
    /// The bitmap and its model; `base` is what `Fill::Base` refers to.
    fn build(&self, base: Option<&[bool]>) -> (Bitmap, Vec<bool>) {
        let pattern = |len: Length, fill: &Fill| fill.bits(clamp_len(len), base);
        match self {
            Construct::Default => (Bitmap::default(), Vec::new()),
            Construct::New(len) => (Bitmap::new(clamp_len(*len)), vec![false; clamp_len(*len)]),
            Construct::WithPrefix(len, n) => {
                let len = clamp_len(*len);
                let n = usize::from(*n);
                let model = (0..len).map(|i| i < n).collect();
                (Bitmap::with_prefix(len, n), model)
            }
            Construct::FromIndices(len, indices) => {
                let len = clamp_len(*len);
                let indices: Vec<usize> = indices.iter().map(|&i| usize::from(i)).collect();
                let result = Bitmap::from_indices(len, indices.iter().copied());
                match indices.iter().find(|&&i| i >= len) {
                    Some(&index) => {
                        assert_eq!(result, Err(BitmapError::IndexOutOfRange { index, len }), "from_indices");
                        (Bitmap::new(len), vec![false; len])
                    }
                    None => {
                        let mut model = vec![false; len];
                        indices.iter().for_each(|&i| model[i] = true);
                        (result.expect("from_indices with indices in range"), model)
                    }
                }
            }
            Construct::FromBools(len, fill) => {
                let model = pattern(*len, fill);
                (Bitmap::from_bools(&model), model)
            }
            Construct::Collect(len, fill) => {
                let model = pattern(*len, fill);
                (model.iter().copied().collect(), model)
            }
            Construct::Parse(len, fill) => {
                let model = pattern(*len, fill);
                (text_of(&model).parse().expect("a 0/1 string parses"), model)
            }
            Construct::FromBytes(len, fill) => {
                let model = pattern(*len, fill);
                (Bitmap::from_bytes(model.len(), &bytes_of(&model)).expect("from_bytes of valid bytes"), model)
            }
            Construct::FromWords(len, fill) => {
                let model = pattern(*len, fill);
                (Bitmap::from_words(model.len(), words_of(&model)).expect("from_words of valid words"), model)
            }
            Construct::Pushed(len, fill) => {
                let model = pattern(*len, fill);
                let mut bitmap = Bitmap::new(0);
                model.iter().for_each(|&bit| bitmap.push(bit));
                (bitmap, model)
            }
            Construct::ExtendedByRef(len, fill) => {
                let model = pattern(*len, fill);
                let mut bitmap = Bitmap::default();
                bitmap.extend(&model);
                (bitmap, model)
            }
            Construct::WithCapacity(capacity, len, fill) => {
                let capacity = clamp_len(*capacity);
                let model = pattern(*len, fill);
                let mut bitmap = Bitmap::with_capacity_bits(capacity);
                assert_eq!(bitmap.len(), 0, "with_capacity_bits is empty");
                assert!(bitmap.capacity_bits() >= capacity, "with_capacity_bits({capacity})");
                bitmap.extend(model.iter().copied());
                (bitmap, model)
            }
        }
    }
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Set(_) => "set",
            Op::Clear(_) => "clear",
            Op::Toggle(_) => "toggle",
            Op::Assign(..) => "assign",
            Op::TrySet(_) => "try_set",
            Op::TryClear(_) => "try_clear",
            Op::Get(_) => "get",
            Op::SetIndices(_) => "set_indices",
            Op::SetRange(_) => "set_range",
            Op::ClearRange(_) => "clear_range",
            Op::CountRange(_) => "count_range",
            Op::SetAll => "set_all",
            Op::ClearAll => "clear_all",
            Op::Binary(..) => "binary operation",
            Op::Mismatched(..) => "operations on mismatched lengths",
            Op::Fused(..) => "fused count",
            Op::Relations(_) => "is_subset / is_disjoint",
            Op::UnionOf(_) => "union_of",
            Op::UnionManyInto(_) => "union_many_into",
            Op::FirstWins(_) => "first_wins",
            Op::Classes(..) => "class_counts / split_by_tables",
            Op::Not { .. } => "!",
            Op::Invert => "invert",
            Op::Aggregates => "aggregates",
            Op::Ones(_) => "ones",
            Op::Bits(_) => "iter",
            Op::Gather => "gather",
            Op::RoundTrip => "round trips",
            Op::Push(_) => "push",
            Op::Extend { .. } => "extend",
            Op::Reset(_) => "reset",
            Op::CopyFrom(..) => "copy_from",
            Op::CloneFrom(..) => "clone_from",
            Op::Rebuild(_) => "rebuild",
            Op::WriteWord(..) => "words_mut",
        }
    }
}

/// The bitmap under test, its model, and the kernels to cross-check.
struct State {
    bitmap: Bitmap,
    model: Vec<bool>,
    kernels: Vec<Kernel>,
    align: usize,
    step: usize,
}

impl State {
    fn len(&self) -> usize {
        self.model.len()
    }

    /// A second operand of the current length, and its model.
    fn operand(&self, fill: &Fill) -> (Bitmap, Vec<bool>) {
        let bits = fill.bits(self.len(), Some(&self.model));
        (Bitmap::from_bools(&bits), bits)
    }

    /// Up to `MAX_SOURCES` operands of the current length.
    fn operands(&self, fills: &[Fill]) -> (Vec<Bitmap>, Vec<Vec<bool>>) {
        fills.iter().take(MAX_SOURCES).map(|fill| self.operand(fill)).unzip()
    }

    /// The word offset of this step's kernel operand copies: 0 to 7, every
    /// word alignment of a 64-byte AVX-512 vector (and so of the 32-byte
    /// AVX2 and 16-byte NEON ones).
    fn pad(&self) -> usize {
        (self.align + self.step) % 8
    }

    fn check_invariants(&self, after: &str) {
        let step = self.step;
        let len = self.len();
        assert_eq!(self.bitmap.len(), len, "step {step} ({after}): length");
        assert_eq!(self.bitmap.is_empty(), len == 0, "step {step} ({after}): is_empty");
        let words = self.bitmap.as_words();
        assert_eq!(words.len(), len.div_ceil(64), "step {step} ({after}): word count of {len} bits");
        assert_eq!(self.bitmap.num_words(), words.len(), "step {step} ({after}): num_words");
        assert!(self.bitmap.capacity_bits() >= len, "step {step} ({after}): capacity below length");
        if let (Some(&last), used @ 1..) = (words.last(), len % 64) {
            assert_eq!(last >> used, 0, "step {step} ({after}): bits past the length {len} are set");
        }
        assert_eq!(words, words_of(&self.model), "step {step} ({after}): words differ from the model");
    }

    fn apply(&mut self, op: &Op) {
        let len = self.len();
        let step = self.step;
        match op {
            &Op::Set(i) | &Op::Clear(i) | &Op::Toggle(i) | &Op::Assign(i, _) if len > 0 => {
                let i = usize::from(i) % len;
                match *op {
                    Op::Set(_) => {
                        self.bitmap.set(i);
                        self.model[i] = true;
                    }
                    Op::Clear(_) => {
                        self.bitmap.clear(i);
                        self.model[i] = false;
                    }
                    Op::Toggle(_) => {
                        self.bitmap.toggle(i);
                        self.model[i] = !self.model[i];
                    }
                    Op::Assign(_, value) => {
                        self.bitmap.assign(i, value);
                        self.model[i] = value;
                    }
                    _ => unreachable!(),
                }
                assert_eq!(self.bitmap.test(i), self.model[i], "step {step}: test({i})");
            }
            Op::Set(_) | Op::Clear(_) | Op::Toggle(_) | Op::Assign(..) => {}
            &Op::TrySet(i) | &Op::TryClear(i) => {
                let i = usize::from(i);
                let value = matches!(op, Op::TrySet(_));
                let result = if value { self.bitmap.try_set(i) } else { self.bitmap.try_clear(i) };
                if i < len {
                    assert_eq!(result, Ok(()), "step {step}: try_set/try_clear({i}) on {len} bits");
                    self.model[i] = value;
                } else {
                    assert_eq!(result, Err(BitmapError::IndexOutOfRange { index: i, len }), "step {step}");
                }
            }
            &Op::Get(i) => {
                let i = usize::from(i);
                assert_eq!(self.bitmap.get(i), self.model.get(i).copied(), "step {step}: get({i})");
            }
            Op::SetIndices(indices) => {
                let indices: Vec<usize> = indices.iter().map(|&i| usize::from(i)).collect();
                let result = self.bitmap.set_indices(indices.iter().copied());
                // The indices before the first bad one stay set.
                let mut expected = Ok(());
                for &index in &indices {
                    if index >= len {
                        expected = Err(BitmapError::IndexOutOfRange { index, len });
                        break;
                    }
                    self.model[index] = true;
                }
                assert_eq!(result, expected, "step {step}: set_indices");
            }
            Op::SetRange(range) | Op::ClearRange(range) => {
                let value = matches!(op, Op::SetRange(_));
                if value {
                    self.bitmap.set_range(range.bounds())
                } else {
                    self.bitmap.clear_range(range.bounds())
                }
                self.model[range.clamped(len)].fill(value);
            }
            Op::CountRange(range) => {
                let expected = self.model[range.clamped(len)].iter().filter(|&&b| b).count();
                assert_eq!(self.bitmap.count_range(range.bounds()), expected, "step {step}: count_range({range:?})");
            }
            Op::SetAll => {
                self.bitmap.set_all();
                self.model.fill(true);
            }
            Op::ClearAll => {
                self.bitmap.clear_all();
                self.model.fill(false);
            }
            Op::Binary(binary, form, fill) => self.binary(*binary, *form, fill),
            &Op::Mismatched(binary, other_len) => self.mismatched(binary, clamp_len(other_len)),
            Op::Fused(binary, fill) => {
                let (other, bits) = self.operand(fill);
                let expected = self.model.iter().zip(&bits).filter(|&(&a, &b)| binary.bit(a, b)).count();
                let (count, try_count) = match binary {
                    BinaryOp::And => (self.bitmap.and_popcount(&other), self.bitmap.try_and_popcount(&other)),
                    BinaryOp::Or => (self.bitmap.or_popcount(&other), self.bitmap.try_or_popcount(&other)),
                    BinaryOp::Xor => (self.bitmap.xor_popcount(&other), self.bitmap.try_xor_popcount(&other)),
                    BinaryOp::AndNot => {
                        (self.bitmap.and_not_popcount(&other), self.bitmap.try_and_not_popcount(&other))
                    }
                };
                assert_eq!(count, expected, "step {step}: {binary:?} popcount");
                assert_eq!(try_count, Ok(expected), "step {step}: try {binary:?} popcount");
                self.check_kernels_binary(*binary, &words_of(&self.model), &words_of(&bits));
            }
            Op::Relations(fill) => {
                let (other, bits) = self.operand(fill);
                let subset = self.model.iter().zip(&bits).all(|(&a, &b)| !a || b);
                let superset = self.model.iter().zip(&bits).all(|(&a, &b)| a || !b);
                let disjoint = self.model.iter().zip(&bits).all(|(&a, &b)| !(a && b));
                assert_eq!(self.bitmap.is_subset(&other), subset, "step {step}: is_subset");
                assert_eq!(other.is_subset(&self.bitmap), superset, "step {step}: is_subset, reversed");
                assert_eq!(self.bitmap.is_disjoint(&other), disjoint, "step {step}: is_disjoint");
                assert_eq!(other.is_disjoint(&self.bitmap), disjoint, "step {step}: is_disjoint, reversed");
                assert_eq!(self.bitmap == other, self.model == bits, "step {step}: ==");
            }
            Op::UnionOf(fills) | Op::UnionManyInto(fills) => {
                let (sources, models) = self.operands(fills);
                let refs: Vec<&Bitmap> = sources.iter().collect();
                let union: Vec<bool> = (0..len).map(|i| models.iter().any(|bits| bits[i])).collect();
                if matches!(op, Op::UnionOf(_)) {
                    self.bitmap = Bitmap::union_of(len, &refs).expect("union_of sources of equal length");
                } else {
                    // Overwrites: the bitmap's previous bits are not included.
                    self.bitmap.union_many_into(&refs).expect("union_many_into sources of equal length");
                }
                self.model = union;
                let words: Vec<Vec<u64>> = models.iter().map(|bits| words_of(bits)).collect();
                self.check_kernels_union(&words);
            }
            Op::FirstWins(fills) => {
                let (sources, models) = self.operands(fills);
                let words: Vec<Vec<u64>> = models.iter().map(|bits| words_of(bits)).collect();
                self.check_first_wins(&words);
                self.check_first_wins_split(&sources, &models);
            }
            Op::Classes(fills, tables) => {
                let (_, models) = self.operands(&fills[..fills.len().min(MAX_CLASS_INPUTS)]);
                let words: Vec<Vec<u64>> = models.iter().map(|bits| words_of(bits)).collect();
                let entries = 1u32 << words.len().saturating_sub(1);
                let tables: Vec<u8> =
                    tables[..words.len()].iter().map(|&t| (u32::from(t) & ((1 << entries) - 1)) as u8).collect();
                self.check_classes(&words, &tables);
            }
            &Op::Not { owned } => {
                let before = words_of(&self.model);
                self.bitmap = if owned { !std::mem::take(&mut self.bitmap) } else { !&self.bitmap };
                self.model.iter_mut().for_each(|bit| *bit = !*bit);
                self.check_kernels_unary(&before);
            }
            Op::Invert => {
                let before = words_of(&self.model);
                self.bitmap.invert();
                self.model.iter_mut().for_each(|bit| *bit = !*bit);
                self.check_kernels_unary(&before);
            }
            Op::Aggregates => self.aggregates(),
            Op::Ones(picks) => self.ones(picks),
            Op::Bits(picks) => self.bits(picks),
            Op::Gather => self.gather(),
            Op::RoundTrip => self.round_trips(),
            &Op::Push(bit) => {
                self.bitmap.push(bit);
                self.model.push(bit);
            }
            Op::Extend { count, fill, by_ref } => {
                let bits = fill.bits(usize::from(*count) % (MAX_EXTEND + 1), Some(&self.model));
                if *by_ref {
                    self.bitmap.extend(&bits)
                } else {
                    self.bitmap.extend(bits.iter().copied())
                }
                self.model.extend(bits);
            }
            &Op::Reset(new_len) => {
                let new_len = clamp_len(new_len);
                let capacity = self.bitmap.capacity_bits();
                self.bitmap.reset(new_len);
                if new_len <= capacity {
                    assert_eq!(self.bitmap.capacity_bits(), capacity, "step {step}: reset within capacity reallocated");
                }
                self.model = vec![false; new_len];
            }
            Op::CopyFrom(other_len, fill) | Op::CloneFrom(other_len, fill) => {
                let bits = fill.bits(clamp_len(*other_len), Some(&self.model));
                let other = Bitmap::from_bools(&bits);
                let capacity = self.bitmap.capacity_bits();
                if matches!(op, Op::CopyFrom(..)) {
                    self.bitmap.copy_from(&other)
                } else {
                    self.bitmap.clone_from(&other)
                }
                if bits.len() <= capacity {
                    assert_eq!(self.bitmap.capacity_bits(), capacity, "step {step}: copy within capacity reallocated");
                }
                self.model = bits;
            }
            Op::Rebuild(construct) => (self.bitmap, self.model) = construct.build(Some(&self.model)),
            &Op::WriteWord(index, word) => {
                let num_words = self.bitmap.num_words();
                if num_words > 0 {
                    let w = usize::from(index) % num_words;
                    // The guard clears the bits past the length when dropped.
                    self.bitmap.words_mut()[w] = word;
                    for bit in 0..64 {
                        if let Some(slot) = self.model.get_mut(w * 64 + bit) {
                            *slot = word >> bit & 1 == 1;
                        }
                    }
                }
            }
        }
    }

    fn binary(&mut self, binary: BinaryOp, form: Form, fill: &Fill) {
        let (other, bits) = self.operand(fill);
        let before = words_of(&self.model);
        let a = std::mem::take(&mut self.bitmap);

        macro_rules! forms {
            ($op:tt, $op_assign:tt, $named:ident, $try_named:ident) => {
                match form {
                    Form::Named => {
                        let mut a = a;
                        a.$named(&other);
                        a
                    }
                    Form::Try => {
                        let mut a = a;
                        a.$try_named(&other).expect("equal lengths");
                        a
                    }
                    Form::RefRef => &a $op &other,
                    Form::OwnedRef => a $op &other,
                    Form::RefOwned => &a $op other,
                    Form::OwnedOwned => a $op other,
                    Form::AssignRef => {
                        let mut a = a;
                        a $op_assign &other;
                        a
                    }
                    Form::AssignOwned => {
                        let mut a = a;
                        a $op_assign other;
                        a
                    }
                }
            };
        }

        self.bitmap = match binary {
            BinaryOp::And => forms!(&, &=, intersect_with, try_intersect_with),
            BinaryOp::Or => forms!(|, |=, union_with, try_union_with),
            BinaryOp::Xor => forms!(^, ^=, symmetric_difference_with, try_symmetric_difference_with),
            BinaryOp::AndNot => forms!(-, -=, difference_with, try_difference_with),
        };
        for (a, b) in self.model.iter_mut().zip(&bits) {
            *a = binary.bit(*a, *b);
        }
        self.check_kernels_binary(binary, &before, &words_of(&bits));
    }

    /// Every fallible two-bitmap operation with an operand of another length
    /// fails with both lengths and leaves the bitmap unchanged.
    fn mismatched(&mut self, binary: BinaryOp, other_len: usize) {
        let len = self.len();
        let other_len = if other_len == len { len + 1 } else { other_len };
        let other = Bitmap::with_prefix(other_len, other_len);
        let expected = BitmapError::LengthMismatch { left: len, right: other_len };
        let step = self.step;
        let result = match binary {
            BinaryOp::And => self.bitmap.try_intersect_with(&other),
            BinaryOp::Or => self.bitmap.try_union_with(&other),
            BinaryOp::Xor => self.bitmap.try_symmetric_difference_with(&other),
            BinaryOp::AndNot => self.bitmap.try_difference_with(&other),
        };
        assert_eq!(result, Err(expected.clone()), "step {step}: try {binary:?} of {len} and {other_len} bits");
        let count = match binary {
            BinaryOp::And => self.bitmap.try_and_popcount(&other),
            BinaryOp::Or => self.bitmap.try_or_popcount(&other),
            BinaryOp::Xor => self.bitmap.try_xor_popcount(&other),
            BinaryOp::AndNot => self.bitmap.try_and_not_popcount(&other),
        };
        assert_eq!(count, Err(expected.clone()), "step {step}: try {binary:?} popcount");
        let copy = self.bitmap.clone();
        assert_eq!(Bitmap::union_of(len, &[&copy, &other]), Err(expected.clone()), "step {step}: union_of");
        assert_eq!(self.bitmap.union_many_into(&[&copy, &other]), Err(expected), "step {step}: union_many_into");
    }

    fn aggregates(&self) {
        let step = self.step;
        let ones = self.model.iter().filter(|&&b| b).count();
        let first_set = self.model.iter().position(|&b| b);
        let leading_ones = self.model.iter().position(|&b| !b).unwrap_or(self.len());
        assert_eq!(self.bitmap.popcount(), ones, "step {step}: popcount");
        assert_eq!(self.bitmap.count_range(..), ones, "step {step}: count_range(..)");
        assert_eq!(self.bitmap.first_set(), first_set, "step {step}: first_set");
        assert_eq!(self.bitmap.last_set(), self.model.iter().rposition(|&b| b), "step {step}: last_set");
        assert_eq!(self.bitmap.count_leading_zeros(), first_set.unwrap_or(self.len()), "step {step}: leading zeros");
        assert_eq!(self.bitmap.count_leading_ones(), leading_ones, "step {step}: leading ones");
        assert_eq!(self.bitmap.any(), ones > 0, "step {step}: any");
        assert_eq!(self.bitmap.none(), ones == 0, "step {step}: none");
        assert_eq!(self.bitmap.all(), ones == self.len(), "step {step}: all");
        self.check_kernels_unary(&words_of(&self.model));
    }

    /// `ones()` taken from both ends as `picks` says (`true`: from the back),
    /// then the rest; with `size_hint` bounds checked at every step.
    fn ones(&self, picks: &[bool]) {
        let step = self.step;
        let expected: Vec<usize> = (0..self.len()).filter(|&i| self.model[i]).collect();
        assert_eq!(self.bitmap.to_indices(), expected, "step {step}: to_indices");
        assert_eq!((&self.bitmap).into_iter().collect::<Vec<_>>(), expected, "step {step}: &Bitmap iteration");
        assert!(self.bitmap.ones().rev().eq(expected.iter().rev().copied()), "step {step}: ones().rev()");
        assert_eq!(self.bitmap.ones().count(), expected.len(), "step {step}: ones().count()");
        let mut iter = self.bitmap.ones();
        let (mut front, mut back) = (0, expected.len());
        for (pick, &from_back) in picks.iter().enumerate() {
            let (lower, upper) = iter.size_hint();
            let left = back - front;
            assert!(lower <= left && upper.is_none_or(|u| u >= left), "step {step}: ones size_hint at pick {pick}");
            if from_back {
                let want = (front < back).then(|| {
                    back -= 1;
                    expected[back]
                });
                assert_eq!(iter.next_back(), want, "step {step}: ones next_back at pick {pick}");
            } else {
                let want = (front < back).then(|| {
                    front += 1;
                    expected[front - 1]
                });
                assert_eq!(iter.next(), want, "step {step}: ones next at pick {pick}");
            }
        }
        assert_eq!(iter.clone().count(), back - front, "step {step}: count of the rest of ones");
        assert_eq!(iter.by_ref().collect::<Vec<_>>(), expected[front..back], "step {step}: rest of ones");
        assert_eq!((iter.next(), iter.next_back()), (None, None), "step {step}: ones is fused");
    }

    /// `iter()` taken from both ends as `picks` says, `len()` exact throughout.
    fn bits(&self, picks: &[bool]) {
        let step = self.step;
        assert!(self.bitmap.iter().eq(self.model.iter().copied()), "step {step}: iter()");
        assert!(self.bitmap.iter().rev().eq(self.model.iter().rev().copied()), "step {step}: iter().rev()");
        let mut iter = self.bitmap.iter();
        let (mut front, mut back) = (0, self.len());
        for (pick, &from_back) in picks.iter().enumerate() {
            assert_eq!(iter.len(), back - front, "step {step}: iter len at pick {pick}");
            assert_eq!(iter.size_hint(), (back - front, Some(back - front)), "step {step}: iter size_hint");
            if from_back {
                let want = (front < back).then(|| {
                    back -= 1;
                    self.model[back]
                });
                assert_eq!(iter.next_back(), want, "step {step}: iter next_back at pick {pick}");
            } else {
                let want = (front < back).then(|| {
                    front += 1;
                    self.model[front - 1]
                });
                assert_eq!(iter.next(), want, "step {step}: iter next at pick {pick}");
            }
        }
        assert_eq!(iter.by_ref().collect::<Vec<_>>(), self.model[front..back], "step {step}: rest of iter");
        assert_eq!((iter.next(), iter.next_back()), (None, None), "step {step}: iter is fused");
    }

    fn gather(&self) {
        let step = self.step;
        let len = self.len();
        let items: Vec<usize> = (0..=len).collect();
        let expected: Vec<usize> = (0..len).filter(|&i| self.model[i]).collect();
        assert!(self.bitmap.gather(&items[..len]).copied().eq(expected.iter().copied()), "step {step}: gather");
        assert!(
            self.bitmap.gather(&items[..len]).rev().copied().eq(expected.iter().rev().copied()),
            "step {step}: gather().rev()"
        );
        let too_long = self.bitmap.try_gather(&items).map(|_| ()).unwrap_err();
        assert_eq!(too_long, BitmapError::LengthMismatch { left: len, right: len + 1 }, "step {step}: try_gather");
        if len > 0 {
            let too_short = self.bitmap.try_gather(&items[..len - 1]).map(|_| ()).unwrap_err();
            assert_eq!(too_short, BitmapError::LengthMismatch { left: len, right: len - 1 }, "step {step}");
        }
    }

    fn round_trips(&self) {
        let step = self.step;
        let len = self.len();
        let bitmap = &self.bitmap;
        let bytes = bytes_of(&self.model);
        assert_eq!(bitmap.as_bytes(), bytes, "step {step}: as_bytes");
        assert_eq!(Bitmap::from_bytes(len, &bytes).as_ref(), Ok(bitmap), "step {step}: from_bytes(as_bytes)");
        let words = words_of(&self.model);
        assert_eq!(Bitmap::from_words(len, words.clone()).as_ref(), Ok(bitmap), "step {step}: from_words");
        assert_eq!(Bitmap::from_word_slice(len, &words).as_ref(), Ok(bitmap), "step {step}: from_word_slice");
        assert_eq!(bitmap.clone().into_words(), words, "step {step}: into_words");
        let text = text_of(&self.model);
        assert_eq!(bitmap.to_string(), text, "step {step}: Display");
        assert_eq!(text.parse::<Bitmap>().as_ref(), Ok(bitmap), "step {step}: FromStr");
        let json = format!(r#"{{"len":{len},"bits":"{text}"}}"#);
        assert_eq!(serde_json::to_string(bitmap).expect("serializes"), json, "step {step}: serde");
        assert_eq!(&serde_json::from_str::<Bitmap>(&json).expect("deserializes"), bitmap, "step {step}: serde");
        let ones = self.model.iter().filter(|&&b| b).count();
        let shown = &text[..len.min(64)];
        let more = if len > 64 { "…" } else { "" };
        let debug = format!("Bitmap {{ len: {len}, ones: {ones}, bits: \"{shown}{more}\" }}");
        assert_eq!(format!("{bitmap:?}"), debug, "step {step}: Debug");
    }

    // -- Every kernel, directly ------------------------------------------

    fn check_kernels_binary(&self, binary: BinaryOp, a: &[u64], b: &[u64]) {
        let step = self.step;
        let expected: Vec<u64> = a.iter().zip(b).map(|(&x, &y)| binary.word(x, y)).collect();
        let expected_count: u64 = expected.iter().map(|w| u64::from(w.count_ones())).sum();
        let (pad_a, pad_b) = (self.pad(), (self.pad() + 1) % 8);
        for &kernel in &self.kernels {
            let (mut dst, src) = (placed(a, pad_a), placed(b, pad_b));
            let (x, y) = (&dst[pad_a..], &src[pad_b..]);
            let count = match binary {
                BinaryOp::And => kernel.and_popcount(x, y),
                BinaryOp::Or => kernel.or_popcount(x, y),
                BinaryOp::Xor => kernel.xor_popcount(x, y),
                BinaryOp::AndNot => kernel.and_not_popcount(x, y),
            };
            assert_eq!(count, expected_count, "step {step}: {kernel} {binary:?} popcount of {} words", a.len());
            let (out, y) = (&mut dst[pad_a..], &src[pad_b..]);
            match binary {
                BinaryOp::And => kernel.and_assign(out, y),
                BinaryOp::Or => kernel.or_assign(out, y),
                BinaryOp::Xor => kernel.xor_assign(out, y),
                BinaryOp::AndNot => kernel.and_not_assign(out, y),
            }
            assert_eq!(out, expected, "step {step}: {kernel} {binary:?} assign of {} words", a.len());
            check_sentinels(&dst, pad_a, step, kernel, "binary assign");
        }
    }

    fn check_kernels_unary(&self, words: &[u64]) {
        let step = self.step;
        let n = words.len();
        let count: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
        let nonzero = words.iter().position(|&w| w != 0);
        let not_all_ones = words.iter().position(|&w| w != u64::MAX);
        let inverted: Vec<u64> = words.iter().map(|w| !w).collect();
        let pad = self.pad();
        for &kernel in &self.kernels {
            let mut buffer = placed(words, pad);
            let slice = &buffer[pad..];
            assert_eq!(kernel.popcount(slice), count, "step {step}: {kernel} popcount of {n} words");
            assert_eq!(kernel.position_nonzero(slice), nonzero, "step {step}: {kernel} position_nonzero");
            assert_eq!(kernel.position_not_all_ones(slice), not_all_ones, "step {step}: {kernel} not_all_ones");
            kernel.not_assign(&mut buffer[pad..]);
            assert_eq!(buffer[pad..], inverted, "step {step}: {kernel} not_assign of {n} words");
            check_sentinels(&buffer, pad, step, kernel, "not_assign");
        }
        // The dispatched forms, for the active kernel at this size.
        assert_eq!(kernel::popcount(words), count, "step {step}: dispatched popcount");
        assert_eq!(kernel::position_nonzero(words), nonzero, "step {step}: dispatched position_nonzero");
        assert_eq!(kernel::position_not_all_ones(words), not_all_ones, "step {step}: dispatched not_all_ones");
    }

    fn check_kernels_union(&self, sources: &[Vec<u64>]) {
        let step = self.step;
        let n = self.bitmap.num_words();
        let expected: Vec<u64> = (0..n).map(|w| sources.iter().fold(0, |acc, s| acc | s[w])).collect();
        let pad = self.pad();
        for &kernel in &self.kernels {
            let placed_sources: Vec<Vec<u64>> =
                sources.iter().enumerate().map(|(i, s)| placed(s, (pad + i) % 8)).collect();
            let refs: Vec<&[u64]> = placed_sources.iter().enumerate().map(|(i, s)| &s[(pad + i) % 8..]).collect();
            // The destination starts as garbage: union_many overwrites it.
            let mut dst = placed(&vec![SENTINEL; n], pad);
            kernel.union_many(&mut dst[pad..], &refs);
            assert_eq!(dst[pad..], expected, "step {step}: {kernel} union_many of {} sources", sources.len());
            check_sentinels(&dst, pad, step, kernel, "union_many");
        }
    }

    /// `Bitmap::first_wins_split` of `sources` into fresh outputs and into
    /// reused ones (copies of the current bitmap, of whatever length and
    /// bits): every output must be exactly its model, with a clear tail.
    fn check_first_wins_split(&self, sources: &[Bitmap], models: &[Vec<bool>]) {
        let step = self.step;
        let refs: Vec<&Bitmap> = sources.iter().collect();
        let mut outputs: Vec<Bitmap> =
            (0..sources.len()).map(|i| if i % 2 == 0 { Bitmap::default() } else { self.bitmap.clone() }).collect();
        Bitmap::first_wins_split(&refs, &mut outputs).expect("first_wins_split sources of equal length");
        let mut claimed = vec![false; self.len()];
        for (i, (output, bits)) in outputs.iter().zip(models).enumerate() {
            let want: Vec<bool> = bits.iter().zip(&claimed).map(|(&bit, &taken)| bit && !taken).collect();
            claimed.iter_mut().zip(bits).for_each(|(taken, &bit)| *taken |= bit);
            assert_eq!(output.len(), want.len(), "step {step}: first_wins_split output {i} length");
            assert_eq!(output.as_words(), words_of(&want), "step {step}: first_wins_split output {i}");
        }
    }

    /// The first-wins split of `inputs` on every kernel and through dispatch,
    /// against the rule applied word by word.
    fn check_first_wins(&self, inputs: &[Vec<u64>]) {
        let step = self.step;
        let n = self.bitmap.num_words();
        let mut expected = vec![vec![0u64; n]; inputs.len()];
        for w in 0..n {
            let mut claimed = 0;
            for (input, out) in inputs.iter().zip(&mut expected) {
                out[w] = input[w] & !claimed;
                claimed |= input[w];
            }
        }
        let pad = self.pad();
        let offset = |i: usize| (pad + i) % 8;
        let input_refs: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
        let mut dispatched: Vec<Vec<u64>> = vec![vec![SENTINEL; n]; inputs.len()];
        let mut dispatched_refs: Vec<&mut [u64]> = dispatched.iter_mut().map(Vec::as_mut_slice).collect();
        kernel::first_wins(&input_refs, &mut dispatched_refs);
        assert_eq!(dispatched, expected, "step {step}: dispatched first_wins of {} inputs", inputs.len());
        for &kernel in &self.kernels {
            let placed_inputs: Vec<Vec<u64>> = inputs.iter().enumerate().map(|(i, s)| placed(s, offset(i))).collect();
            let refs: Vec<&[u64]> = placed_inputs.iter().enumerate().map(|(i, s)| &s[offset(i)..]).collect();
            let mut outputs: Vec<Vec<u64>> =
                (0..inputs.len()).map(|i| placed(&vec![SENTINEL; n], offset(i + 1))).collect();
            let mut output_refs: Vec<&mut [u64]> =
                outputs.iter_mut().enumerate().map(|(i, s)| &mut s[offset(i + 1)..]).collect();
            kernel.first_wins(&refs, &mut output_refs);
            for (i, (output, want)) in outputs.iter().zip(&expected).enumerate() {
                assert_eq!(
                    output[offset(i + 1)..],
                    want[..],
                    "step {step}: {kernel} first_wins output {i} of {n} words"
                );
                check_sentinels(output, offset(i + 1), step, kernel, "first_wins");
            }
        }
    }

    /// The class counts and the table-driven split of `inputs` on every
    /// kernel and through dispatch, against a bit-by-bit reference: each
    /// bit's class is the set of inputs that have it.
    fn check_classes(&self, inputs: &[Vec<u64>], tables: &[u8]) {
        let step = self.step;
        let n = self.bitmap.num_words();
        let mut counts = vec![0u64; 1 << inputs.len()];
        let mut split = vec![vec![0u64; n]; inputs.len()];
        if !inputs.is_empty() {
            for bit in 0..n * 64 {
                let (w, mask) = (bit / 64, 1u64 << (bit % 64));
                let class =
                    inputs.iter().enumerate().filter(|(_, input)| input[w] & mask != 0).fold(0, |c, (p, _)| c | 1 << p);
                counts[class] += 1;
                for (a, output) in split.iter_mut().enumerate() {
                    // The class among the others: input `a`'s bit taken out.
                    let others = (class & ((1 << a) - 1)) | (class >> (a + 1)) << a;
                    if class >> a & 1 == 1 && tables[a] >> others & 1 == 1 {
                        output[w] |= mask;
                    }
                }
            }
        }
        // Through `SplitWriter`, cut at a word that varies with the step.
        let (len, cut) = (self.bitmap.len(), step.wrapping_mul(31) % (n + 1));
        match inputs.len() {
            1 => check_split_writer::<1>(step, len, inputs, tables, &split, cut),
            2 => check_split_writer::<2>(step, len, inputs, tables, &split, cut),
            3 => check_split_writer::<3>(step, len, inputs, tables, &split, cut),
            4 => check_split_writer::<4>(step, len, inputs, tables, &split, cut),
            _ => {}
        }
        let pad = self.pad();
        let offset = |i: usize| (pad + i) % 8;
        let input_refs: Vec<&[u64]> = inputs.iter().map(Vec::as_slice).collect();
        let mut dispatched_counts = vec![u64::MAX; counts.len()];
        kernel::class_counts(&input_refs, &mut dispatched_counts);
        assert_eq!(dispatched_counts, counts, "step {step}: dispatched class_counts of {} inputs", inputs.len());
        let mut dispatched: Vec<Vec<u64>> = vec![vec![SENTINEL; n]; inputs.len()];
        let mut dispatched_refs: Vec<&mut [u64]> = dispatched.iter_mut().map(Vec::as_mut_slice).collect();
        kernel::split_by_tables(&input_refs, tables, &mut dispatched_refs);
        assert_eq!(dispatched, split, "step {step}: dispatched split_by_tables of {} inputs", inputs.len());
        for &kernel in &self.kernels {
            let placed_inputs: Vec<Vec<u64>> = inputs.iter().enumerate().map(|(i, s)| placed(s, offset(i))).collect();
            let refs: Vec<&[u64]> = placed_inputs.iter().enumerate().map(|(i, s)| &s[offset(i)..]).collect();
            let mut got = vec![u64::MAX; counts.len()];
            kernel.class_counts(&refs, &mut got);
            assert_eq!(got, counts, "step {step}: {kernel} class_counts of {} inputs, {n} words", inputs.len());
            let mut outputs: Vec<Vec<u64>> =
                (0..inputs.len()).map(|i| placed(&vec![SENTINEL; n], offset(i + 1))).collect();
            let mut output_refs: Vec<&mut [u64]> =
                outputs.iter_mut().enumerate().map(|(i, s)| &mut s[offset(i + 1)..]).collect();
            kernel.split_by_tables(&refs, tables, &mut output_refs);
            for (i, (output, want)) in outputs.iter().zip(&split).enumerate() {
                assert_eq!(
                    output[offset(i + 1)..],
                    want[..],
                    "step {step}: {kernel} split_by_tables output {i} of {n} words"
                );
                check_sentinels(output, offset(i + 1), step, kernel, "split_by_tables");
            }
        }
    }
}

/// `SplitWriter` over the `N` `inputs` (whole words of `len`-bit bitmaps):
/// the split of the first `cut` words as one run, the next word pushed from
/// the reference `split`, the rest as one run; into fresh outputs and into
/// reused ones holding other words, which must all be replaced.
fn check_split_writer<const N: usize>(
    step: usize,
    len: usize,
    inputs: &[Vec<u64>],
    tables: &[u8],
    split: &[Vec<u64>],
    cut: usize,
) {
    let refs: [&[u64]; N] = core::array::from_fn(|p| inputs[p].as_slice());
    let tables: [u8; N] = core::array::from_fn(|p| tables[p]);
    let n = refs[0].len();
    for fresh in [true, false] {
        let mut outputs: [Bitmap; N] = core::array::from_fn(|p| {
            if fresh {
                Bitmap::empty()
            } else {
                Bitmap::from_words(64 * (p + 3), vec![u64::MAX; p + 3]).expect("whole words")
            }
        });
        let mut writer = SplitWriter::new(len, outputs.each_mut());
        writer.split_by_tables(&refs, &tables, cut);
        if cut < n {
            writer.push(core::array::from_fn(|a| split[a][cut]));
        }
        let rest = n - writer.written_words();
        writer.split_by_tables(&refs, &tables, rest);
        writer.finish();
        for (a, output) in outputs.iter().enumerate() {
            assert_eq!(output.len(), len, "step {step}: SplitWriter output {a} length");
            assert_eq!(
                output.as_words(),
                &split[a][..],
                "step {step}: SplitWriter output {a}, fresh {fresh}, cut {cut}"
            );
        }
    }
}

/// `words` in a buffer of its own, `pad` sentinel words in, ending where the
/// allocation ends.
fn placed(words: &[u64], pad: usize) -> Vec<u64> {
    let mut buffer = Vec::with_capacity(pad + words.len());
    buffer.extend(iter::repeat_n(SENTINEL, pad));
    buffer.extend_from_slice(words);
    buffer
}

fn check_sentinels(buffer: &[u64], pad: usize, step: usize, kernel: Kernel, what: &str) {
    assert!(buffer[..pad].iter().all(|&w| w == SENTINEL), "step {step}: {kernel} {what} wrote before its slice");
}

/// LMCache's byte layout of `bits`, computed bit by bit.
fn bytes_of(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|chunk| chunk.iter().enumerate().fold(0, |byte, (bit, &set)| byte | u8::from(set) << bit))
        .collect()
}
