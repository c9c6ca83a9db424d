"""The READMEs' Python examples run as they stand (issue #38, item 5).

Every fenced block whose info string is ``python`` (or ``py``) in the
repository's ``README.md``, each ``crates/*/README.md`` and
``crates/bitplan-py/benches/README.md`` is extracted and run with ``exec``
in a fresh namespace, from an empty temporary directory (so a block that
writes a file leaves nothing behind, and one that reads a file must make it
first). A block passes if it raises nothing: its ``assert`` statements are
its claims.

The one exception, by convention: **a block that cannot run alone says so
in the paragraph right above it**. If the paragraph that ends just before
the opening fence (the text lines above it, up to the previous blank line,
heading or fence) contains the word "excerpt", the block is an excerpt and
is not run; the sentence should say why, e.g. "(an excerpt: it needs
LMCache installed)" or "(an excerpt of a controller: `request` and `states`
are its own)". The word is visible in the rendered page, so a reader knows
as well as this test which examples they can paste. Every other block must
run: to leave one out, say why it is an excerpt, never edit this file.

Two more checks keep the convention honest: the root README's LMCache
example (it imports LMCache's modules) stays marked, and no Python block,
excerpt or not, quotes LMCache's controller or ``L1Manager`` internals
(LMCache is Apache-2.0; the READMEs describe its code in their own words
and show bitplan's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_EXCERPT = re.compile(r"\bexcerpt\b", re.IGNORECASE)


@dataclass(frozen=True)
class Block:
    path: Path  # the README
    line: int  # 1-based line of the opening fence
    source: str
    intro: str  # the paragraph right above the fence

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def is_excerpt(self) -> bool:
        return _EXCERPT.search(self.intro) is not None


def readmes() -> list[Path]:
    found = [ROOT / "README.md", *sorted(ROOT.glob("crates/*/README.md"))]
    found.append(ROOT / "crates/bitplan-py/benches/README.md")
    return [path for path in found if path.is_file()]


def python_blocks(path: Path) -> list[Block]:
    """The fenced Python blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        words = opening["info"].split()
        language = words[0].lower() if words else ""
        body = []
        j = i + 1
        while j < len(lines):
            closing = _FENCE.match(lines[j])
            if (
                closing is not None
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            line = lines[j]
            # CommonMark: the fence's indentation is removed from each line.
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            j += 1
        if language in ("python", "py"):
            intro = []
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            while (
                k >= 0
                and lines[k].strip()
                and not lines[k].lstrip().startswith("#")
                and _FENCE.match(lines[k]) is None
            ):
                intro.append(lines[k])
                k -= 1
            blocks.append(Block(path, i + 1, "\n".join(body) + "\n", "\n".join(reversed(intro))))
        i = j + 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in readmes() for block in python_blocks(path)]


BLOCKS = all_blocks()
RUNNABLE = [block for block in BLOCKS if not block.is_excerpt]


def test_the_readmes_are_found():
    if not (ROOT / "README.md").is_file():
        pytest.skip(f"not run from a checkout: no README.md at {ROOT}")
    assert BLOCKS, "no ```python block found in the READMEs"
    assert RUNNABLE, "every ```python block is marked an excerpt"


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda block: block.name)
def test_example_runs(block: Block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = compile(block.source, block.name, "exec")
    namespace = {"__name__": "__readme_example__"}
    exec(code, namespace)  # noqa: S102 - the READMEs are the repository's own


def test_the_convention(tmp_path):
    """The marker is read from the paragraph right above the fence only."""
    page = tmp_path / "README.md"
    page.write_text(
        "An excerpt is named in this paragraph,\n\nbut not in this one:\n\n"
        "```python\nrun = 1\n```\n\n"
        "Here it is (an excerpt:\nit needs LMCache installed):\n"
        "```python\nskipped = 1\n```\n\n"
        "An excerpt, above a heading.\n\n## Heading\n\n"
        "```py\nrun = 2\n```\n\n"
        "````markdown\n```python\nnot_python = 1\n```\n````\n\n"
        "  ```python\n  indented = 1\n  ```\n",
        encoding="utf-8",
    )
    blocks = [(block.source, block.is_excerpt) for block in python_blocks(page)]
    assert blocks == [
        ("run = 1\n", False),
        ("skipped = 1\n", True),
        ("run = 2\n", False),
        ("indented = 1\n", False),
    ]


def test_lmcache_example_stays_an_excerpt():
    if not (ROOT / "README.md").is_file():
        pytest.skip(f"not run from a checkout: no README.md at {ROOT}")
    lmcache = [block for block in python_blocks(ROOT / "README.md") if "bitplan.lmcache.install()" in block.source]
    assert lmcache, "the root README's bitplan.lmcache.install() example is gone"
    for block in lmcache:
        assert block.is_excerpt, f"{block.name} needs LMCache but is not introduced as an excerpt"


# Names from LMCache's controller and L1Manager internals: our READMEs name
# these functions in prose and tables, never show their code.
_LMCACHE_INTERNALS = (
    "_scatter_bitmaps(",
    "_scatter_bitmaps_full_global(",
    "_gather_keys(",
    "self._objects",
    "entry.read_lock",
    "res_bitmap",
)


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.name)
def test_no_lmcache_code_quoted(block: Block):
    quoted = [name for name in _LMCACHE_INTERNALS if name in block.source]
    assert not quoted, f"{block.name} shows LMCache's own code ({', '.join(quoted)}): describe it in prose"
