//! tier-state's batch calls at 4,096 keys (issue #28: ≤ 20 ns a key, table
//! lookup included), each timed alone inside a cycle that brings the tier
//! back to where it started (`iter_custom`: the set-up and tear-down calls
//! are not timed).
//!
//! The tier holds 100,000 other resident keys, so its table and state do
//! not sit in L1 as a tier of 4,096 keys would (the `tier_speed` example
//! measures both). Keys are 64 rows × 64 chunk hashes, as a controller's
//! request; `tier_state/<call>/4096` takes them as a slice of keys,
//! `tier_state_grid/<call>/64x64` as `GridKeys` (hashes × rows) answered in
//! a `Grid`. The tier has 64 rows, so each chunk's rows share a block of
//! slots (one table probe a chunk for a grid request, one a key for a
//! slice), and the other keys are whole chunks too; `tier_state_any_row`
//! is the slice on a tier of any row (a block a key: the layout of an
//! LMCache-shaped tier). Throughput is in keys, so criterion prints keys a
//! second; its time per iteration / 4,096 is ns a key.
//!
//! Every call's answer is checked (all keys succeed) before it is timed.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use bitplan_benches::sizes::configure;
use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use tier_state::{Answer, Batch, Flags, GridBatch, GridKeys, Keys, Tier, TierConfig, TierKey};

const CHUNKS: usize = 64;
const ROWS: usize = 64;
const KEYS: usize = CHUNKS * ROWS;
const OTHERS: usize = 100_000;

fn mix(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let hashes: Vec<u64> = (0..CHUNKS as u64).map(|i| mix((1 << 40) + i)).collect();
    let rows: Vec<u32> = (0..ROWS as u32).collect();
    let flat: Vec<TierKey> = rows.iter().flat_map(|&r| hashes.iter().map(move |&h| TierKey::new(h, r))).collect();

    let mut group = c.benchmark_group("tier_state");
    configure(&mut group, 0);
    group.throughput(Throughput::Elements(KEYS as u64));
    bench_calls(&mut group, &flat[..], &KEYS.to_string(), Batch::default(), Some(ROWS as u32));
    group.finish();

    let mut group = c.benchmark_group("tier_state_any_row");
    configure(&mut group, 0);
    group.throughput(Throughput::Elements(KEYS as u64));
    bench_calls(&mut group, &flat[..], &KEYS.to_string(), Batch::default(), None);
    group.finish();

    let mut group = c.benchmark_group("tier_state_grid");
    configure(&mut group, 0);
    group.throughput(Throughput::Elements(KEYS as u64));
    bench_calls(
        &mut group,
        &GridKeys::new(&hashes, &rows),
        &format!("{ROWS}x{CHUNKS}"),
        GridBatch::default(),
        Some(ROWS as u32),
    );
    group.finish();
    c.final_summary();
}

/// A tier of `rows` rows (`None`: any row) holding `OTHERS` resident keys
/// besides the request's, whole chunks of 64 rows.
fn tier(rows: Option<u32>) -> Tier {
    let mut config = TierConfig::new(OTHERS + 2 * KEYS);
    if let Some(rows) = rows {
        config = config.with_rows(rows);
    }
    let mut tier = Tier::new(config).expect("a possible capacity");
    let others: Vec<TierKey> = (0..OTHERS as u64).map(|i| TierKey::new(mix(i / 64), (i % 64) as u32)).collect();
    let mut answer = Batch::default();
    tier.reserve_write(&others[..], Flags::All(false), 0, &mut answer).expect("valid keys");
    tier.finish_write(&others[..], 0, &mut answer).expect("valid keys");
    assert_eq!(tier.num_resident(), OTHERS);
    tier
}

type Call<K, A> = fn(&mut Tier, &K, &mut A);

/// One benchmark: `before` and `after` (untimed) around `call` (timed),
/// which must succeed for every key.
struct Cycle<'c, K: ?Sized, A> {
    name: &'static str,
    before: &'c [Call<K, A>],
    call: Call<K, A>,
    after: &'c [Call<K, A>],
}

fn cycle<K: Keys + ?Sized>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    value: &str,
    keys: &K,
    answer: &mut K::Answer,
    rows: Option<u32>,
    Cycle { name, before, call, after }: Cycle<'_, K, K::Answer>,
) {
    let mut tier = tier(rows);
    let run = |tier: &mut Tier, answer: &mut K::Answer| -> Duration {
        for step in before {
            step(tier, keys, answer);
        }
        let start = Instant::now();
        call(tier, keys, answer);
        let elapsed = start.elapsed();
        assert_eq!(answer.num_ok(), KEYS, "{name}: every key succeeds");
        for step in after {
            step(tier, keys, answer);
        }
        elapsed
    };
    run(&mut tier, answer);
    assert_eq!(tier.num_keys(), OTHERS, "{name}: the cycle leaves the tier as it was");
    group.bench_function(criterion::BenchmarkId::new(name, value), |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(&mut tier, answer)).sum())
    });
}

fn bench_calls<K: Keys + ?Sized>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    keys: &K,
    value: &str,
    mut answer: K::Answer,
    rows: Option<u32>,
) {
    let reserve_write: Call<K, K::Answer> = |t, k, a| t.reserve_write(k, Flags::All(false), 1, a).unwrap();
    let reserve_write_temporary: Call<K, K::Answer> = |t, k, a| t.reserve_write(k, Flags::All(true), 1, a).unwrap();
    let finish_write: Call<K, K::Answer> = |t, k, a| t.finish_write(k, 1, a).unwrap();
    let reserve_read: Call<K, K::Answer> = |t, k, a| t.reserve_read(k, 1, a).unwrap();
    let unsafe_read: Call<K, K::Answer> = |t, k, a| t.unsafe_read(k, a).unwrap();
    let finish_read: Call<K, K::Answer> = |t, k, a| t.finish_read(k, 1, a).unwrap();
    let touch: Call<K, K::Answer> = |t, k, a| t.touch(k, a).unwrap();
    let delete: Call<K, K::Answer> = |t, k, a| t.delete(k, false, a).unwrap();
    let finish_write_and_reserve_read: Call<K, K::Answer> =
        |t, k, a| t.finish_write_and_reserve_read(k, 1, 1, a).unwrap();
    let finish_write_and_delete: Call<K, K::Answer> = |t, k, a| t.finish_write_and_delete(k, 1, a).unwrap();

    let cycles = [
        Cycle { name: "reserve_write", before: &[], call: reserve_write, after: &[finish_write_and_delete] },
        Cycle { name: "finish_write", before: &[reserve_write], call: finish_write, after: &[delete] },
        Cycle {
            name: "reserve_read",
            before: &[reserve_write, finish_write],
            call: reserve_read,
            after: &[finish_read, delete],
        },
        Cycle {
            name: "unsafe_read",
            before: &[reserve_write, finish_write, reserve_read],
            call: unsafe_read,
            after: &[finish_read, delete],
        },
        Cycle {
            name: "finish_read",
            before: &[reserve_write, finish_write, reserve_read],
            call: finish_read,
            after: &[delete],
        },
        Cycle {
            name: "finish_read_temporary",
            before: &[reserve_write_temporary, finish_write, reserve_read],
            call: finish_read,
            after: &[],
        },
        Cycle { name: "touch", before: &[reserve_write, finish_write], call: touch, after: &[delete] },
        Cycle { name: "delete", before: &[reserve_write, finish_write], call: delete, after: &[] },
        Cycle {
            name: "finish_write_and_reserve_read",
            before: &[reserve_write],
            call: finish_write_and_reserve_read,
            after: &[finish_read, delete],
        },
        Cycle { name: "finish_write_and_delete", before: &[reserve_write], call: finish_write_and_delete, after: &[] },
    ];
    for c in cycles {
        cycle(group, value, keys, &mut answer, rows, c);
    }
}
