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

mod kernels;
mod reads;

use core::ops::Bound;

use arbitrary::Arbitrary;
use bitmap_core::kernel::{Kernel, MAX_CLASS_INPUTS};
use bitmap_core::{Bitmap, BitmapError};

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
}

/// LMCache's byte layout of `bits`, computed bit by bit.
fn bytes_of(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|chunk| chunk.iter().enumerate().fold(0, |byte, (bit, &set)| byte | u8::from(set) << bit))
        .collect()
}
