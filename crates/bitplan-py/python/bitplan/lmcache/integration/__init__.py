"""bitplan under the real LMCache: one switch.

>>> import bitplan.lmcache
>>> bitplan.lmcache.install()        # before or after LMCache is imported
>>> bitplan.lmcache.installed()      # every replaced name: "replaced" or "on import"

:func:`install` puts bitplan's native code under an installed LMCache
(|version|) without editing LMCache's files: the bitmap and its fold kernels
wherever LMCache's modules imported them, ``Bitmap2D`` and ``MapState``,
the prefetch policies in LMCache's registry (``default``, ``retain`` and
bitplan's ``balanced``), the eviction policies behind
``CreateEvictionPolicy`` (and bitplan's ``S3FIFO``), the ``L1Manager``'s
books and the prefetch controller's per-key loops. LMCache's memory
manager, its L2 adapters' I/O and its CUDA kernels are LMCache's own.
The table of every replaced name is ``docs/LMCACHE.md``
(:data:`REPLACEMENTS` here).

Without code changes: ``BITPLAN_LMCACHE=1`` in the environment makes every
Python process of the environment call :func:`install` at start-up (a
``.pth`` file the wheel installs), and ``python -m bitplan.lmcache run --
COMMAND ...`` runs a command with it set.

The switch checks LMCache's version: |version| is supported and tested;
any other raises :class:`LMCacheVersionError` naming both, unless
``install(check_version=False)`` or ``BITPLAN_LMCACHE_ANY_VERSION=1``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os

from bitplan.lmcache.integration import _switch

#: The LMCache release the switch is built and tested against.
SUPPORTED_LMCACHE = "0.5.6"

#: The environment variable that turns the version check off.
ANY_VERSION_ENV = "BITPLAN_LMCACHE_ANY_VERSION"

logger = logging.getLogger(__name__)

__doc__ = (__doc__ or "").replace("|version|", SUPPORTED_LMCACHE)


class LMCacheVersionError(ImportError):
    """The installed LMCache is not the release the switch supports."""


def _lmcache_version() -> str:
    if importlib.util.find_spec("lmcache") is None:
        raise ImportError(
            "bitplan.lmcache.install(): the 'lmcache' package is not installed "
            f"(pip install lmcache=={SUPPORTED_LMCACHE})",
            name="lmcache",
        )
    try:
        return importlib.metadata.version("lmcache")
    except importlib.metadata.PackageNotFoundError:
        # A source tree on sys.path without metadata: its _version module.
        from lmcache import _version  # type: ignore[import-not-found]

        return str(_version.__version__)


def install(*, check_version: bool = True) -> None:
    """Puts bitplan under LMCache (see the module docs). Idempotent.

    Raises:
        ImportError: LMCache is not installed (``name == "lmcache"``).
        LMCacheVersionError: LMCache is not |version| (and the check is on).
    """
    version = _lmcache_version()
    if check_version and version != SUPPORTED_LMCACHE and os.environ.get(ANY_VERSION_ENV, "") in ("", "0"):
        raise LMCacheVersionError(
            f"bitplan.lmcache.install(): LMCache {version} is installed, but this bitplan supports "
            f"LMCache {SUPPORTED_LMCACHE} only; install lmcache=={SUPPORTED_LMCACHE}, or pass "
            f"check_version=False (or set {ANY_VERSION_ENV}=1) to try it anyway",
            name="lmcache",
        )
    from bitplan.lmcache.integration._table import REPLACEMENTS

    if _switch.status():
        return
    _switch.apply(REPLACEMENTS)
    logger.info("bitplan %s installed under LMCache %s", _bitplan_version(), version)


def uninstall() -> None:
    """Restores every name :func:`install` replaced and removes its import
    hook. Objects made while it was installed (a ``StorageManager``) keep
    bitplan inside; new ones are LMCache's own. A no-op when not installed."""
    _switch.restore()


def installed() -> dict[str, str]:
    """What is in place: each replaced LMCache name (``module.attribute``, or
    ``module.REGISTRY["entry"]``) mapped to ``"replaced"``, or to ``"on
    import"`` while its module has not been imported yet. Empty when the
    switch is off."""
    return _switch.status()


def _bitplan_version() -> str:
    from bitplan import __version__

    return __version__


install.__doc__ = (install.__doc__ or "").replace("|version|", SUPPORTED_LMCACHE)

__all__ = ["ANY_VERSION_ENV", "SUPPORTED_LMCACHE", "LMCacheVersionError", "install", "installed", "uninstall"]
