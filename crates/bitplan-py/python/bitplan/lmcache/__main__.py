"""``python -m bitplan.lmcache``: bitplan under LMCache without code changes.

``python -m bitplan.lmcache run -- COMMAND [ARGS...]`` runs a command (an
LMCache server, a vLLM launcher, a script) with ``BITPLAN_LMCACHE=1``: every
Python process it starts puts bitplan under LMCache at start-up (see
:mod:`bitplan.lmcache.integration._boot`).

``python -m bitplan.lmcache check`` says whether the switch can go in here:
LMCache's version against the one supported, and whether the start-up hook
the wheel installs is present. Exit status 0 when it can.
"""

from __future__ import annotations

import argparse
import os
import site
import sys

from bitplan.lmcache.integration._boot import ENV

PTH = "bitplan_lmcache.pth"


def _hook_paths() -> list[str]:
    roots = list(site.getsitepackages()) + [site.getusersitepackages()]
    return [os.path.join(root, PTH) for root in roots if os.path.exists(os.path.join(root, PTH))]


def _check() -> int:
    from bitplan.lmcache.integration import SUPPORTED_LMCACHE, _lmcache_version

    try:
        version = _lmcache_version()
    except ImportError as error:
        print(f"LMCache: not installed ({error})")
        return 1
    ok = version == SUPPORTED_LMCACHE
    print(f"LMCache: {version} ({'supported' if ok else f'bitplan supports {SUPPORTED_LMCACHE}'})")
    hooks = _hook_paths()
    print(f"start-up hook ({ENV}): {hooks[0] if hooks else 'not installed (an editable install?): call install()'}")
    print(f"{ENV}={os.environ.get(ENV, '')!r}")
    return 0 if ok and hooks else 1


def _run(command: list[str]) -> int:
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("usage: python -m bitplan.lmcache run -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if not _hook_paths():
        print(f"bitplan: {PTH} is not installed; the command runs without bitplan", file=sys.stderr)
    env = dict(os.environ, **{ENV: "1"})
    # exec replaces this process (searching PATH), as a launcher should.
    os.execvpe(command[0], command, env)
    return 127  # pragma: no cover - exec does not return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bitplan.lmcache", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help=f"run a command with {ENV}=1")
    run.add_argument("argv", nargs=argparse.REMAINDER)
    sub.add_parser("check", help="whether the switch can go in here")
    args = parser.parse_args(argv)
    if args.command == "check":
        return _check()
    return _run(args.argv)


if __name__ == "__main__":
    sys.exit(main())
