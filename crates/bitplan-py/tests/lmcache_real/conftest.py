"""The tests against the real LMCache release (issue #37): they need
``lmcache`` (0.5.6) and ``torch`` importable, as in the venv that CI's
``lmcache`` step makes (``.ci/steps/lmcache.sh``); without them every test
here is skipped with a note."""

import logging
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

try:
    import lmcache  # noqa: F401
    import torch  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the venv
    pytest.skip(f"LMCache is not installed here ({error}); see .ci/steps/lmcache.sh", allow_module_level=True)

# LMCache logs every prefetch at INFO.
logging.getLogger("lmcache").setLevel(logging.WARNING)
