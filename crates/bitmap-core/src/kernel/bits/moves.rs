//! [`BitMoves`], the per-word compress and expand the bit-move loops are
//! generic over, and [`Soft`], its portable bit-trick form. (BMI2's
//! `pext`/`pdep` form is `x86_64/bmi2.rs`.)

/// Per-word compress (PEXT: the bits of `x` at the set positions of `mask`,
/// packed to the bottom) and expand (PDEP: the low bits of `x` spread to the
/// set positions of `mask`).
pub(crate) trait BitMoves: Copy {
    /// What [`compress_with`](BitMoves::compress_with) needs to know of a
    /// mask used for many words.
    type Compressor: Copy;
    /// `pext(x, mask)`.
    fn compress(self, x: u64, mask: u64) -> u64;
    /// `pdep(x, mask)`.
    fn expand(self, x: u64, mask: u64) -> u64;
    /// Prepares `mask` for [`compress_with`](BitMoves::compress_with).
    fn compressor(self, mask: u64) -> Self::Compressor;
    /// `pext(x, mask)` for the mask `compressor` was made from.
    fn compress_with(self, compressor: Self::Compressor, x: u64) -> u64;
}

/// Compress and expand by Hacker's Delight's parallel-suffix method (§7-4,
/// §7-5): six rounds of shifts and masks, no loop over the set bits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Soft;

/// The six move masks of Hacker's Delight's compress for `mask`.
#[inline(always)]
fn move_masks(mask: u64) -> [u64; 6] {
    let mut m = mask;
    let mut mk = !m << 1;
    let mut moves = [0; 6];
    for (i, mv_out) in moves.iter_mut().enumerate() {
        let mut mp = mk ^ (mk << 1);
        mp ^= mp << 2;
        mp ^= mp << 4;
        mp ^= mp << 8;
        mp ^= mp << 16;
        mp ^= mp << 32;
        let mv = mp & m;
        *mv_out = mv;
        m = (m ^ mv) | (mv >> (1 << i));
        mk &= !mp;
    }
    moves
}

impl BitMoves for Soft {
    type Compressor = (u64, [u64; 6]);

    #[inline(always)]
    fn compress(self, x: u64, mask: u64) -> u64 {
        self.compress_with(self.compressor(mask), x)
    }

    #[inline(always)]
    fn compressor(self, mask: u64) -> Self::Compressor {
        (mask, move_masks(mask))
    }

    #[inline(always)]
    fn compress_with(self, (mask, moves): Self::Compressor, x: u64) -> u64 {
        let mut x = x & mask;
        for (i, &mv) in moves.iter().enumerate() {
            let t = x & mv;
            x = (x ^ t) | (t >> (1 << i));
        }
        x
    }

    #[inline(always)]
    fn expand(self, x: u64, mask: u64) -> u64 {
        let moves = move_masks(mask);
        let mut x = x;
        for (i, &mv) in moves.iter().enumerate().rev() {
            let t = x << (1 << i);
            x = (x & !mv) | (t & mv);
        }
        x & mask
    }
}
