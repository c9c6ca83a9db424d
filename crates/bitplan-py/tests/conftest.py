"""Shared pytest configuration: a deterministic hypothesis profile.

``derandomize=True`` makes every run draw the same examples, so a failure
is reproducible and CI never flakes; ``deadline=None`` because no test may
depend on the machine's speed (the machine is shared). Set
``HYPOTHESIS_PROFILE=thorough`` for a longer search.
"""

import os
import sys

from hypothesis import HealthCheck, settings

# Make the helper module (_models.py) importable whatever the import mode.
sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile(
    "bitplan",
    derandomize=True,
    max_examples=60,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    derandomize=False,
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "bitplan"))
