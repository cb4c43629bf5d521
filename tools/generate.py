#!/usr/bin/env python3
"""Regenerates every generated source file from the OPC Foundation schema folder, or checks that the
committed output is what the generators produce today.

    python3 tools/generate.py                  # write into the tree
    python3 tools/generate.py --check          # exit 1 and list files that differ or are missing

The schema folder defaults to ../shared/opcua-schema beside the checkout. The schema files themselves are
never copied into the tree.
"""
import argparse
import importlib
import pathlib
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree

ROOT = pathlib.Path(__file__).resolve().parent.parent
GENERATORS = ["gen_status_codes", "gen_node_ids", "gen_types", "gen_ns0"]


def produce(schema_dir: pathlib.Path) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "tools"))
    files: dict[str, str] = {}
    for name in GENERATORS:
        module = importlib.import_module(name)
        for rel, text in module.generate(schema_dir).items():
            if rel in files:
                raise SystemExit(f"{name}: {rel} is produced twice")
            files[rel] = text
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schema", type=pathlib.Path, default=ROOT.parent / "shared" / "opcua-schema")
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    if not (args.schema / "Opc.Ua.Types.bsd").is_file():
        print(f"schema folder not found: {args.schema}", file=sys.stderr)
        return 2
    files = produce(args.schema)
    if args.check:
        stale = [rel for rel, text in sorted(files.items())
                 if not (ROOT / rel).is_file() or (ROOT / rel).read_text() != text]
        for rel in stale:
            print(f"differs from the generator's output: {rel}")
        print(f"{len(files) - len(stale)} of {len(files)} generated files match")
        return 1 if stale else 0
    for rel, text in files.items():
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    print(f"wrote {len(files)} generated files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
