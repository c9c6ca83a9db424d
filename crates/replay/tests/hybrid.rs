//! Hybrid (cell) replays: one full-attention cell a chunk is the flat
//! replay exactly; sliding windows and adapters on small traces with hand-
//! computed answers.

use kv_replay::hybrid::{CellModel, replay_hybrid};
use kv_replay::synthetic::{SyntheticOptions, generate};
use kv_replay::{Eviction, ReplayConfig, Replayer, Trace};

fn trace(requests: &[&[u64]]) -> Trace {
    let mut trace = Trace::new(512);
    for keys in requests {
        trace.push(keys, keys.len() as u64 * 512);
    }
    trace
}

#[test]
fn one_full_attention_cell_a_chunk_is_the_flat_replay() {
    let trace = generate(&SyntheticOptions::default().with_size(800, 12).with_seed(5));
    let model = CellModel { windows: vec![-1], ranks: 1 };
    for (l1, l2, eviction) in [
        (Some(300), vec![Some(1_000), None], Eviction::Lru),
        (Some(0), vec![Some(200)], Eviction::Fifo),
        (None, vec![], Eviction::Lru),
    ] {
        let mut config = ReplayConfig::new(l1, &l2);
        config.eviction = eviction;
        let flat = Replayer::new(&config).unwrap().replay(&trace).unwrap();
        let cells = replay_hybrid(&trace, &config, &model).unwrap();
        assert_eq!(
            (cells.hit_blocks, cells.hit_tokens, cells.hit_ratio),
            (flat.hit_blocks, flat.hit_tokens, flat.hit_ratio)
        );
        let counts = |t: &kv_replay::TierReport| (t.hit_blocks, t.evictions, t.entries);
        assert_eq!(counts(&cells.l1), counts(&flat.l1), "{config:?}");
        assert_eq!(cells.l2.iter().map(counts).collect::<Vec<_>>(), flat.l2.iter().map(counts).collect::<Vec<_>>());
        assert_eq!(cells.cells_dropped_by_retain, 0);
        assert_eq!(cells.capacity_saving, l1.map_or(Some(0.0), |_| None));
    }
}

#[test]
fn sliding_windows_drop_the_cells_no_later_hit_needs() {
    // A full-attention group and a window-2 group, 2 ranks: 4 cells a chunk.
    let model = CellModel { windows: vec![-1, 2], ranks: 2 };
    let report = replay_hybrid(
        &trace(&[&[1, 2, 3, 4], &[1, 2, 3, 4, 5], &[1, 2, 3, 4, 5]]),
        &ReplayConfig::new(None, &[]),
        &model,
    )
    .unwrap();
    // 1: a miss, all 16 cells written. 2: chunk 5 is nowhere, hit 4; the
    // window rows need chunks 3, 4 only: 8 + 4 retained cells, 4 dropped,
    // and chunk 5's 4 cells computed. 3: hit 5; 10 + 4 retained, 6 dropped.
    assert_eq!(report.hit_blocks, 4 + 5);
    // Dropped: the window rows of chunks 1, 2 in request 2 (4 cells), and of
    // chunk 3 in request 3 (2; chunks 1, 2 were gone already).
    assert_eq!((report.cells_touched, report.cells_dropped_by_retain), (16 + 12 + 4 + 14, 4 + 2));
    assert_eq!(report.cells_per_chunk, 4);
    // L1 ends with every full-attention cell (5 chunks × 2 ranks) and the
    // window rows of chunks 4 and 5 (2 × 2): the 6 others were dropped.
    assert_eq!((report.l1.entries, report.cells_all), (10 + 4, 20));
    assert_eq!(report.capacity_saving, Some(1.0 - 14.0 / 20.0));
}

#[test]
fn an_adapter_serves_only_the_needed_cells() {
    // Full attention and Mamba; L1 holds nothing, the adapter everything.
    let model = CellModel { windows: vec![-1, 1], ranks: 1 };
    let report = replay_hybrid(&trace(&[&[1, 2], &[1, 2]]), &ReplayConfig::new(Some(0), &[None]), &model).unwrap();
    // Request 2: the full row's 2 cells and the Mamba row's last one.
    assert_eq!((report.hit_blocks, report.l2[0].hit_blocks, report.l1.hit_blocks), (2, 3, 0));
    assert_eq!(report.l1.evictions, 4 + 3);
}

#[test]
fn a_model_without_rows_is_refused() {
    let config = ReplayConfig::new(None, &[]);
    assert!(replay_hybrid(&trace(&[&[1]]), &config, &CellModel { windows: vec![], ranks: 1 }).is_err());
    assert!(replay_hybrid(&trace(&[&[1]]), &config, &CellModel { windows: vec![-1], ranks: 0 }).is_err());
}
