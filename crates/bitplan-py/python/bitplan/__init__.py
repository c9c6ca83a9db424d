"""bitplan: KV-cache prefetch plans and hybrid-model prefix hits at SIMD speed.

The Pythonic API. For LMCache's own names and semantics, import
:mod:`bitplan.lmcache` instead.

>>> from bitplan import Bitmap, create_prefetch_policy, AdapterDescriptor
>>> lookup = {0: Bitmap(8, 3), 1: Bitmap(8, 6)}
>>> plan = create_prefetch_policy("default").select_load_plan(8, lookup, [AdapterDescriptor(0), AdapterDescriptor(1)])
>>> {i: bm.get_indices_list() for i, bm in plan.items()}
{0: [0, 1, 2], 1: [3, 4, 5]}
"""

from bitplan._native import (
    FULL_ATTENTION_WINDOW,
    AdapterDescriptor,
    BalancedPrefetchPolicy,
    Bitmap,
    DefaultGridPolicy,
    DefaultPrefetchPolicy,
    Grid,
    GridPlan,
    GridPolicy,
    LoadPlan,
    PrefetchPolicy,
    RetainGridPolicy,
    RetainPrefetchPolicy,
    __version__,
    active_kernel,
    available_kernels,
    fold,
    fold_grouped,
    fold_unfold,
    fold_unfold_grouped,
    fold_unfold_ranked,
    highest_set_bit,
    merge_bitmaps,
    plan_load,
    replay,
    unfold,
    unfold_grouped,
    unfold_range,
)
from bitplan._registry import (
    create_prefetch_policy,
    get_registered_prefetch_policies,
    register_prefetch_policy,
)
from bitplan._trim import TrimPolicy, select_retained

__all__ = [
    "FULL_ATTENTION_WINDOW",
    "AdapterDescriptor",
    "BalancedPrefetchPolicy",
    "Bitmap",
    "DefaultGridPolicy",
    "DefaultPrefetchPolicy",
    "Grid",
    "GridPlan",
    "GridPolicy",
    "LoadPlan",
    "PrefetchPolicy",
    "RetainGridPolicy",
    "RetainPrefetchPolicy",
    "TrimPolicy",
    "__version__",
    "active_kernel",
    "available_kernels",
    "create_prefetch_policy",
    "fold",
    "fold_grouped",
    "fold_unfold",
    "fold_unfold_grouped",
    "fold_unfold_ranked",
    "get_registered_prefetch_policies",
    "highest_set_bit",
    "merge_bitmaps",
    "plan_load",
    "register_prefetch_policy",
    "replay",
    "select_retained",
    "unfold",
    "unfold_grouped",
    "unfold_range",
]
