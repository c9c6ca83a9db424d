"""The no-code switch: ``BITPLAN_LMCACHE=1`` in the environment makes every
Python process of the environment call :func:`bitplan.lmcache.install` at
start-up.

The wheel installs ``bitplan_lmcache.pth`` into ``site-packages``; Python
runs its one line at every start-up (as ``coverage`` does with
``COVERAGE_PROCESS_START``): it reads the variable and, only when it is set,
imports this module and calls :func:`boot`. Nothing of LMCache is imported
here: :func:`install` registers an import hook, and LMCache's modules are
replaced as the program imports them.

A start-up hook must not stop the interpreter: when the switch cannot be
put in (LMCache missing, another version) :func:`boot` says why on stderr
and the program runs on LMCache's own code.
"""

from __future__ import annotations

import os
import sys

#: The variable that turns the switch on (any value but empty or ``0``).
ENV = "BITPLAN_LMCACHE"


def wanted(environ: dict | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(ENV, "").strip()
    return value not in ("", "0")


def boot() -> None:
    """Calls :func:`bitplan.lmcache.install`, reporting a failure on stderr."""
    try:
        from bitplan.lmcache.integration import install

        install()
    except ImportError as error:
        print(f"bitplan: {ENV} is set but bitplan is not installed under LMCache: {error}", file=sys.stderr)
