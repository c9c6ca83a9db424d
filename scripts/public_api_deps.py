"""Which other crates' types a crate's public API names, from rustdoc's JSON
(``cargo +nightly rustdoc -- -Z unstable-options --output-format json``).

Walks every public item's signature (functions, fields, variants, type
aliases, generic bounds, and the generic arguments of std trait impls such as
``From<X>``) and prints each type path that belongs to a crate other than
std/core/alloc, with the items that name it. Impls of another crate's trait
(``serde::Serialize``) are not listed: implementing a trait does not put its
crate's types in our signatures. Exit status 1 if a path belongs to a crate
outside ``--allow`` (the crates each one re-exports). See scripts/check-public-api.
"""
import argparse
import collections
import json
import sys

OK = {"std", "core", "alloc"}
parser = argparse.ArgumentParser()
parser.add_argument("json", nargs="+")
parser.add_argument("--allow", action="append", default=[], help="a crate whose types may appear (re-exported)")
args = parser.parse_args()
bad = 0
for path in args.json:
    doc = json.load(open(path))
    ext = {int(k): v["name"] for k, v in doc["external_crates"].items()}
    paths = doc["paths"]
    index = doc["index"]
    hits = collections.defaultdict(set)
    def walk(node, where):
        if isinstance(node, dict):
            for key in ("resolved_path", "path"):
                rp = node.get(key)
                if isinstance(rp, dict) and "id" in rp and rp["id"] is not None:
                    p = paths.get(str(rp["id"]))
                    if p and p["crate_id"] != 0:
                        name = ext.get(p["crate_id"], "?")
                        if name not in OK:
                            hits[name + "::" + "::".join(p["path"][1:])].add(where)
            for v in node.values():
                walk(v, where)
        elif isinstance(node, list):
            for v in node:
                walk(v, where)
    for id_, item in index.items():
        if item["crate_id"] != 0 or item.get("visibility") not in ("public", "default"):
            continue
        inner = item["inner"]
        if "impl" in inner:
            impl = inner["impl"]
            tr = impl.get("trait")
            # Trait impls of external traits are fine unless their generics name external types.
            if impl.get("is_synthetic") or impl.get("blanket_impl"):
                continue
            trait_name = None
            if tr:
                p = paths.get(str(tr["id"]))
                trait_name = (ext.get(p["crate_id"], "?") if p and p["crate_id"] != 0 else "own") + ":" + tr.get("path", "")
                if trait_name.split(":")[0] in OK or trait_name.startswith("own"):
                    # generic args of std traits (From<X>) expose X
                    walk(tr.get("args"), f"impl {trait_name} for ...")
                continue
            continue
        walk(inner, item.get("name") or id_)
    print(f"== {path}")
    for k, v in sorted(hits.items()):
        crate = k.split("::")[0]
        verdict = "re-exported" if crate in args.allow else "NOT RE-EXPORTED"
        bad += crate not in args.allow
        print(f"  {verdict}: {k} (in {', '.join(sorted(x for x in v if x)[:6])})")
sys.exit(1 if bad else 0)
