"""The LMCache switch where LMCache is not installed (the suite against the
real release is ``lmcache_real/``): ``install()`` refuses with an
``ImportError`` naming the package and changes nothing, and the docs' table
lists exactly the names the switch replaces."""

import importlib.util
import os
import re

import pytest

import bitplan.lmcache
from bitplan.lmcache.integration import _boot
from bitplan.lmcache.integration._table import REPLACEMENTS

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "LMCACHE.md")


@pytest.mark.skipif(importlib.util.find_spec("lmcache") is not None, reason="LMCache is installed here")
def test_install_without_lmcache_names_the_package():
    with pytest.raises(ImportError) as error:
        bitplan.lmcache.install()
    assert error.value.name == "lmcache"
    assert "lmcache" in str(error.value) and "0.5.6" in str(error.value)
    assert bitplan.lmcache.installed() == {}
    bitplan.lmcache.uninstall()  # nothing to undo


def test_the_docs_table_lists_every_replaced_name():
    with open(DOCS, encoding="utf-8") as docs:
        rows = re.findall(r"^\| `(lmcache\.[^`]+)` \| `([^`]+)` \|", docs.read(), flags=re.MULTILINE)
    listed = [where for where, _ in rows]
    assert sorted(listed) == sorted(r.where for r in REPLACEMENTS)
    assert len(set(listed)) == len(listed)


def test_the_start_up_switch_reads_its_variable():
    assert not _boot.wanted({})
    assert not _boot.wanted({"BITPLAN_LMCACHE": "0"})
    assert not _boot.wanted({"BITPLAN_LMCACHE": " "})
    assert _boot.wanted({"BITPLAN_LMCACHE": "1"})
