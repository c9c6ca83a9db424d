"""What the report knows about the criterion suite: the report's markers, the
benchmark package, which implementations are baselines, the order of
kernels, implementations and groups, and each group's note.

Benchmarks are named `op/implementation/size` (criterion's
`group/function/value`); see benches/src/lib.rs.
"""

BEGIN_MARKER = "<!-- bench-report:begin -->"
END_MARKER = "<!-- bench-report:end -->"

BENCH_PACKAGE = "bitplan-benches"

# Implementations that are not ours: the ratio tables compare our headline
# implementation against each of these. Order is the table order.
BASELINES = [
    "scalar_loop",
    "copy",
    "copy_fresh",
    "bitmap_materialized",
    "fixedbitset",
    "bitvec",
    "roaring",
    "seed_literal",
    "seed_literal_fixedbitset",
    "lmcache_loop",
]

# Kernel names in bitmap-core's order (slowest first).
KERNEL_ORDER = ["scalar", "portable", "avx2", "avx512", "neon"]

# Our implementations that are not kernels, in table order. Anything unknown
# sorts after these (and before the baselines).
OURS_ORDER = ["dispatched", "bitmap", "into", "default", "default_into", "auto", "sequential", "parallel"]

# The implementation a group's ratio table is about, first present wins: the
# API users call, else the plan policy, else the dispatched kernel call, else
# the active kernel (filled in at run time).
HEADLINE_ORDER = ["bitmap", "default", "dispatched"]

# Group descriptions, shown above each group's tables. Groups not listed get
# none (the tables still appear).
GROUP_NOTES = {
    "popcount": "Number of set bits. Throughput: bytes of the bitmap.",
    "and_assign": "In-place `a &= b`. Throughput: bytes of one bitmap.",
    "or_assign": "In-place `a |= b`. Throughput: bytes of one bitmap.",
    "xor_assign": "In-place `a ^= b`. Throughput: bytes of one bitmap.",
    "and_not_assign": "In-place `a &= !b` (set difference). Throughput: bytes of one bitmap.",
    "not_assign": "In-place complement. Throughput: bytes of the bitmap.",
    "and_popcount": "`popcount(a & b)` without materialising `a & b`; `bitmap_materialized` is "
    "`(&a & &b).popcount()`. Throughput: bytes of one bitmap.",
    "union_many": "Union of 8 bitmaps into a ninth. Throughput: bytes of the 8 sources.",
    "ones_1pct": "Iterating over the set bits (summing the indices) at 1% density. Throughput: bytes of the bitmap.",
    "ones_50pct": "Iterating over the set bits at 50% density (up to 4 MiB: beyond, iteration is bound by the "
    "per-index work, not memory).",
    "ones_99pct": "Iterating over the set bits at 99% density (up to 4 MiB).",
    "plan": "The `default` policy (`select_load_plan`, allocating; `default_into`: `select_load_plan_into` a "
    "reused plan; `sequential` and `parallel`: the same with that `Parallelism`) against the seed's algorithm "
    "written literally over our `Bitmap` and over `fixedbitset`, `copy` (the lookups copied into as many "
    "reused output buffers) and `copy_fresh` (into newly allocated ones, as an allocating plan returns). Each adapter holds a random 60% of the keys. Throughput: bytes of all lookup bitmaps.",
    "plan_replicated": "As `plan`, with every adapter holding every key (the first adapter gets everything).",
    "plan_kernel": "The plan's core, `Kernel::first_wins` over word slices into reused outputs, per kernel. "
    "Throughput: bytes of all lookup bitmaps.",
    "balanced_kernel/class_counts": "The `balanced` policy's counting pass: `Kernel::class_counts`, the number "
    "of keys each set of adapters holds (every class of 3 lookups) in one pass, per kernel. Throughput: bytes of "
    "all lookup bitmaps.",
    "balanced_kernel/split_by_tables": "The `balanced` policy's routing pass: `Kernel::split_by_tables`, each "
    "adapter's keys chosen by a truth table over the other adapters' bits, per kernel. Throughput: bytes of all "
    "lookup bitmaps.",
    "fold_unfold": "Prefix hit and its key mask over the flat chunk-major layout, `C x R x G` with the "
    "windows named in the value (`full`: all full attention; `mixed`: [-1 ×4, 128, 128, 1, 1] for G = 8, "
    "[-1, -1, 8, 32, 1] for G = 5; `gap0`: a Mamba group misses chunk 0, so no prefix is skipped): "
    "`fold_unfold_ranked` (`bitmap`, allocating), `fold_unfold_ranked_into` (`into`, reused workspace and mask) "
    "against `lmcache_loop`, LMCache's per-bit loop (for each group, for each length, test R bits). "
    "Throughput: bytes of `found`.",
    "fold_unfold_grouped": "As `fold_unfold`, over the same cells as G·R rows paired with windows "
    "(`fold_unfold_grouped`, `fold_unfold_grouped_into`).",
    "layout/split_rows": "`layout::split_rows_into`: a flat interleaved bitmap of 262,144 bits into its rows "
    "(64 rows: 64×64 transposes; 8 rows: strided gather), against `copy` of the same 32 KiB.",
    "layout/join_rows": "`layout::join_rows_into`, the inverse of `layout/split_rows`.",
    "layout/deposit_rows": "`layout::deposit_rows_into`: PDEP of a flat bitmap into the set positions of 64 "
    "mask rows of 4,096 bits (`64x4096`: random, half set; `-prefix`: each row a prefix, as a prefix plan's "
    "cells are), against `copy` of 32 KiB.",
    "layout/extract_rows": "`layout::extract_rows_into`: PEXT of 64 rows at the set positions of their masks.",
    "grid_plan": "The grid plan (`plan_grid_into` a reused `GridPlan`, LMCache's newer `plan_load`) at 4,096 "
    "chunks × 64 rows × 3 tiers (L1 0 and L2 0 a random 60% of the cells each, L2 1 all of them): `prefix` "
    "(all rows full attention), `prefix_windows` (windows `[-1 ×4, 128, 128, 1, 1]` over the rows) and "
    "`full`; against the flat `default` plan of the same bits as 262,144 keys × 3 adapters (`default_into`: "
    "into a reused plan, sequential; `default`: allocating). Throughput: bytes of the three inputs.",
    "cutover/popcount": "Tiny inputs: the dispatched `kernel::popcount` (scalar loop inline up to `SMALL_WORDS` "
    "words, the active kernel above) against each kernel called directly. Size in words.",
    "cutover/or_assign": "Tiny inputs: the dispatched `kernel::or_assign` against each kernel called directly. "
    "Size in words.",
}


# The report's groups in this order; any other group after them, by name.
GROUP_ORDER = [
    "popcount", "and_assign", "or_assign", "xor_assign", "and_not_assign", "not_assign", "and_popcount",
    "union_many", "ones_1pct", "ones_50pct", "ones_99pct", "plan", "plan_replicated", "plan_kernel",
    "balanced_kernel/class_counts", "balanced_kernel/split_by_tables", "fold_unfold", "fold_unfold_grouped",
    "grid_plan", "layout/split_rows", "layout/join_rows", "layout/deposit_rows", "layout/extract_rows",
    "bitmoves/gather_and_r8",
    "bitmoves/gather_stride8", "bitmoves/scatter_stride8", "bitmoves/deposit", "bitmoves/extract",
    "bitmoves/fill_periodic", "bitmoves/and_shifted", "bitmoves/transpose64", "cutover/popcount", "cutover/or_assign",
]
