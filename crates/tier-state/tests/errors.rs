//! Bad input is refused with a clear error, and nothing changes.

use bitmap_core::Bitmap;
use prefetch_policy::Grid;
use tier_state::{
    Batch, Flags, GridBatch, GridKeys, Lru, MAX_CAPACITY, ManualClock, Tier, TierConfig, TierError, TierKey,
};

fn snapshot(t: &Tier) -> (usize, usize, usize, Bitmap, Bitmap) {
    (t.num_objects(), t.num_keys(), t.policy().num_tracked(), t.resident().clone(), t.staged().clone())
}

fn tier() -> Tier {
    let config = TierConfig::new(16).with_rows(4);
    let mut t = Tier::with_parts(config, Box::new(ManualClock::new(0)), Box::new(Lru::new())).unwrap();
    let mut a = Batch::default();
    let keys = [TierKey::new(1, 0), TierKey::new(2, 1)];
    t.reserve_write(&keys[..], Flags::All(false), 0, &mut a).unwrap();
    t.finish_write(&keys[..1], 0, &mut a).unwrap();
    t
}

#[test]
fn keys_and_flags_of_different_lengths_name_both() {
    let mut t = tier();
    let before = snapshot(&t);
    let mut a = Batch::default();
    let keys = [TierKey::new(5, 0), TierKey::new(6, 0), TierKey::new(7, 0)];
    let err = t.reserve_write(&keys[..], Flags::Each(&[true, false]), 0, &mut a).unwrap_err();
    assert_eq!(
        err,
        TierError::LengthMismatch {
            what: "reserve_write",
            left_name: "keys",
            left: 3,
            right_name: "is_temporary",
            right: 2
        }
    );
    assert_eq!(err.to_string(), "reserve_write: keys has 3 entries but is_temporary has 2");
    let bits = Bitmap::new(4);
    assert!(matches!(
        t.reserve_write(&keys[..], Flags::Bits(&bits), 0, &mut a),
        Err(TierError::LengthMismatch { left: 3, right: 4, .. })
    ));
    let mut g = GridBatch::default();
    let cells = Grid::zeros(1, 3);
    let err = t.reserve_write(&GridKeys::new(&[5, 6, 7], &[0, 1]), Flags::Cells(&cells), 0, &mut g).unwrap_err();
    assert_eq!(err.to_string(), "reserve_write: the keys are 2 x 3 but the flags are 1 x 3");
    let err = GridKeys::new(&[5, 6, 7], &[0, 1]).with_cells(&cells).unwrap_err();
    assert_eq!(err.to_string(), "with_cells: the keys are 2 x 3 but the cells are 1 x 3");
    assert_eq!(snapshot(&t), before);
}

#[test]
fn rows_out_of_range_are_refused_before_any_key_is_touched() {
    let mut t = tier();
    let before = snapshot(&t);
    let mut a = Batch::default();
    // The first key is fine and would be staged; the second's row is out of range.
    let keys = [TierKey::new(5, 0), TierKey::new(6, 4)];
    let err = t.reserve_write(&keys[..], Flags::All(false), 0, &mut a).unwrap_err();
    assert_eq!(err, TierError::RowOutOfRange { what: "reserve_write", index: 1, row: 4, rows: 4 });
    assert_eq!(err.to_string(), "reserve_write: row 4 of key 1 is out of range: the tier has 4 rows");
    let mut g = GridBatch::default();
    let err = t.delete(&GridKeys::new(&[1, 2], &[0, 9]), true, &mut g).unwrap_err();
    assert_eq!(err, TierError::RowOutOfRange { what: "delete", index: 2, row: 9, rows: 4 });
    for result in [
        t.reserve_read(&keys[..], 1, &mut a),
        t.unsafe_read(&keys[..], &mut a),
        t.finish_read(&keys[..], 1, &mut a),
        t.finish_write(&keys[..], 0, &mut a),
        t.finish_prefetch(&keys[..], 0, &mut a),
        t.finish_write_and_reserve_read(&keys[..], 1, 0, &mut a),
        t.finish_write_and_delete(&keys[..], 0, &mut a),
        t.delete(&keys[..], true, &mut a),
        t.touch(&keys[..], &mut a),
    ] {
        assert!(matches!(result, Err(TierError::RowOutOfRange { index: 1, row: 4, .. })));
    }
    assert_eq!(snapshot(&t), before);
}

#[test]
fn an_impossible_capacity_is_refused_before_anything_is_allocated() {
    let err = Tier::new(TierConfig::new(MAX_CAPACITY + 1)).unwrap_err();
    assert!(matches!(err, TierError::ImpossibleCapacity { max: MAX_CAPACITY, .. }));
    assert!(err.to_string().starts_with("impossible capacity of "));
    let err = Tier::new(TierConfig::new(usize::MAX)).unwrap_err();
    assert!(matches!(err, TierError::ImpossibleCapacity { .. }));
    // The largest allowed capacity allocates nothing up front.
    let t = Tier::new(TierConfig::new(MAX_CAPACITY)).unwrap();
    assert_eq!(t.memory_bytes(), 0);
}
