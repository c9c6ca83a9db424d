//! A grid request in column form, for the word-at-a-time calls.
//!
//! A tier of at most 64 rows files a chunk's rows as one block of slots,
//! one word of each state bitmap (see [`KeyTable`]). When a request's rows
//! are its chunks' block rows in order (row `r` of the request is row `r`
//! of every block: a controller asking about all of a chunk's groups and
//! ranks), a call can work a chunk at a time: the chunk's asked rows are
//! one word, its state is one word of each bitmap, and the outcome of the
//! call for the chunk is a few word operations, with per-key work only
//! where a key has its own numbers (a read lock's count and expiry, a
//! staging object's tag). The answers (success, each failure, each policy
//! event) come out as column words and go back to the request's row-major
//! order through 64×64 bit transposes ([`Grid::assign_columns`]).
//!
//! This module holds the request's column form and turns the column
//! answers back into request order; `word_calls` has the calls.
//! The per-key calls stay the reference: the grid property tests run both
//! forms against each other, so the word path must give the same outcomes,
//! slots, events (in request order) and state.

use bitmap_core::Bitmap;
use prefetch_policy::Grid;

use crate::answer::GridBatch;
use crate::outcome::Outcome;
use crate::request::GridKeys;
use crate::table::KeyTable;

/// A column whose chunk has no block filed (or that the call does not ask
/// about).
pub(crate) const NO_BASE: u32 = u32::MAX;

/// The word mask of `rows` low bits.
#[inline]
pub(crate) const fn low_bits(rows: usize) -> u64 {
    if rows >= 64 { !0 } else { (1u64 << rows) - 1 }
}

/// Calls `f` with the slot offset of each set bit of `word`, lowest first.
#[inline]
pub(crate) fn for_each_bit(mut word: u64, mut f: impl FnMut(usize)) {
    while word != 0 {
        f(word.trailing_zeros() as usize);
        word &= word - 1;
    }
}

/// The scratch of the word-at-a-time calls, kept by the tier so that a
/// warmed-up tier allocates nothing. Every vector is one word (or slot) per
/// column of the request.
#[derive(Debug, Default)]
pub(crate) struct Words {
    /// The rows each column is asked about.
    pub(crate) mask: Vec<u64>,
    /// Each column's block's first slot, or [`NO_BASE`].
    pub(crate) base: Vec<u32>,
    /// The keys that succeeded.
    pub(crate) ok: Vec<u64>,
    /// The keys that failed, by the call's first and second outcome.
    pub(crate) fail: [Vec<u64>; 2],
    /// The keys of the call's policy events, first and second list.
    pub(crate) event: [Vec<u64>; 2],
    /// `reserve_write`'s temporary flags.
    pub(crate) flags: Vec<u64>,
    /// Columns in the order their blocks are filed.
    pub(crate) order: Vec<u32>,
    /// Which block ids this request names (to find a chunk asked twice).
    seen: Bitmap,
    /// Transposed answers.
    rows_a: Grid,
    rows_b: Grid,
}

/// The shape of a request the word path takes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WordShape {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// The row block of every row.
    pub(crate) row_hi: u32,
}

impl Words {
    /// The request in column form, if the word path can take it: a grid of
    /// 1 to 64 rows whose row `r` is row `r` of one row block of the table,
    /// and at least one chunk. Fills [`mask`](Words::mask) and clears the
    /// answers; bases are left to the lookup.
    pub(crate) fn prepare(&mut self, grid: &GridKeys<'_>, table: &KeyTable) -> Option<WordShape> {
        let (rows, cols) = (grid.rows.len(), grid.hashes.len());
        let width = table.width();
        if rows == 0 || cols == 0 || rows > width as usize {
            return None;
        }
        let shift = width.trailing_zeros();
        let row_hi = grid.rows[0] >> shift;
        let in_order =
            grid.rows.iter().enumerate().all(|(r, &row)| row >> shift == row_hi && (row & (width - 1)) as usize == r);
        if !in_order {
            return None;
        }
        match grid.cells() {
            // Checked to have the request's shape, and at most 64 rows.
            Some(cells) => cells.columns_into(&mut self.mask).ok()?,
            None => {
                self.mask.clear();
                self.mask.resize(cols, low_bits(rows));
            }
        }
        let [fail_a, fail_b] = &mut self.fail;
        let [event_a, event_b] = &mut self.event;
        for words in [&mut self.ok, fail_a, fail_b, event_a, event_b] {
            words.clear();
            words.resize(cols, 0);
        }
        Some(WordShape { rows, cols, row_hi })
    }

    /// Looks each asked column's chunk up (one probe a chunk) into
    /// [`base`](Words::base).
    pub(crate) fn look_up(&mut self, grid: &GridKeys<'_>, table: &KeyTable, shape: WordShape) {
        self.base.clear();
        self.base.resize(shape.cols, NO_BASE);
        for c in 0..shape.cols {
            if self.mask[c] != 0
                && let Some(block) = table.block(grid.hashes[c], shape.row_hi)
            {
                self.base[c] = table.slot(block, 0);
            }
        }
    }

    /// Column `c`'s asked rows and its block's first slot, if it asks
    /// about any row and its chunk has a block; a chunk without one fails
    /// whole, as the first outcome (`KEY_NOT_EXIST` for every call that
    /// looks keys up).
    #[inline]
    pub(crate) fn column(&mut self, c: usize) -> Option<(u64, u32)> {
        let (m, base) = (self.mask[c], self.base[c]);
        if m == 0 {
            return None;
        }
        if base == NO_BASE {
            self.fail[0][c] = m;
            return None;
        }
        Some((m, base))
    }

    /// Whether no two columns share a block (found or filed): a chunk asked
    /// twice has outcomes that depend on the order of its keys, which the
    /// per-key path keeps.
    pub(crate) fn distinct(&mut self, table: &KeyTable) -> bool {
        let shift = table.width().trailing_zeros();
        if self.seen.len() < table.block_count() {
            self.seen.resize(table.block_count());
        }
        let mut distinct = true;
        for &base in &self.base {
            if base != NO_BASE {
                let block = (base >> shift) as usize;
                if self.seen.test(block) {
                    distinct = false;
                }
                self.seen.set(block);
            }
        }
        for &base in &self.base {
            if base != NO_BASE {
                self.seen.clear((base >> shift) as usize);
            }
        }
        distinct
    }

    /// The columns in the order the per-key path files their blocks: by
    /// each column's first asked row, then by column (row-major order of
    /// first visits).
    pub(crate) fn filing_order(&mut self, shape: WordShape) {
        self.order.clear();
        let mut starts = [0u32; 65];
        for &m in &self.mask {
            if m != 0 {
                starts[m.trailing_zeros() as usize + 1] += 1;
            }
        }
        for r in 0..64 {
            starts[r + 1] += starts[r];
        }
        self.order.resize(starts[64] as usize, 0);
        for c in 0..shape.cols {
            let m = self.mask[c];
            if m != 0 {
                let at = &mut starts[m.trailing_zeros() as usize];
                self.order[*at as usize] = c as u32;
                *at += 1;
            }
        }
    }

    /// Writes the call's answer: the success mask, the failures in request
    /// order (`fail[0]` with `first`, `fail[1]` with `second`), and, when
    /// the call hands them out, the slots of the keys that succeeded.
    pub(crate) fn answer(
        &mut self,
        shape: WordShape,
        cells: Option<&Grid>,
        first: Outcome,
        second: Outcome,
        out: &mut GridBatch,
    ) {
        // The shape is at most 64 rows: the transposes cannot fail.
        let _ = out.ok_mut().assign_columns(shape.rows, &self.ok);
        let (ok, slots) = out.ok_and_slots_mut();
        if !slots.is_empty() {
            let base = &self.base;
            for_each_cell(shape, cells, ok, None, |index, r, c, _| {
                slots[index as usize] = base[c] + r as u32;
            });
        }
        if out.is_mask_only() {
            return;
        }
        let (a, b) = (any(&self.fail[0]), any(&self.fail[1]));
        if !a && !b {
            return;
        }
        let _ = self.rows_a.assign_columns(shape.rows, &self.fail[0]);
        let second_rows = if b {
            let _ = self.rows_b.assign_columns(shape.rows, &self.fail[1]);
            Some(&self.rows_b)
        } else {
            None
        };
        for_each_cell(shape, cells, &self.rows_a, second_rows, |index, _, _, in_first| {
            out.push_failed(index, if in_first { first } else { second });
        });
    }

    /// Appends the slots of `event[list]`'s keys to `events`, in request
    /// order.
    pub(crate) fn events(&mut self, shape: WordShape, list: usize, events: &mut Vec<u32>) {
        if !any(&self.event[list]) {
            return;
        }
        let _ = self.rows_a.assign_columns(shape.rows, &self.event[list]);
        let base = &self.base;
        for_each_cell(shape, None, &self.rows_a, None, |_, r, c, _| events.push(base[c] + r as u32));
    }
}

fn any(words: &[u64]) -> bool {
    words.iter().any(|&w| w != 0)
}

/// Calls `f(index, row, col, in_a)` for every cell set in `a` (or in `b`,
/// with `in_a` false) in row-major order, `index` being the cell's request
/// position: `row × cols + col`, or its rank among `cells`' set cells.
fn for_each_cell(
    shape: WordShape,
    cells: Option<&Grid>,
    a: &Grid,
    b: Option<&Grid>,
    mut f: impl FnMut(u32, usize, usize, bool),
) {
    let stride = a.words_per_row();
    let mut rank = 0u32;
    for r in 0..shape.rows {
        let (wa, wb) = (a.row_words(r), b.map(|b| b.row_words(r)));
        let asked = cells.map(|cells| cells.row_words(r));
        for w in 0..stride {
            let first = wa[w];
            let mut bits = first | wb.map_or(0, |wb| wb[w]);
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                let c = w * 64 + bit;
                let index = match asked {
                    None => (r * shape.cols + c) as u32,
                    Some(asked) => rank + (asked[w] & ((1u64 << bit) - 1)).count_ones(),
                };
                f(index, r, c, first >> bit & 1 == 1);
                bits &= bits - 1;
            }
            if let Some(asked) = asked {
                rank += asked[w].count_ones();
            }
        }
    }
}
