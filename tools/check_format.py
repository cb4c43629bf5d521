#!/usr/bin/env python3
"""Checks that every C++ source of the project is formatted as .clang-format says (clang-format 14, the
Debian 12 package). Lists every file that is not and exits 1 if there is any; the code the generators
write (every generated/ folder) is left as they write it.

    python3 tools/check_format.py          # check
    python3 tools/check_format.py --fix    # rewrite the files in place
"""
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ["addressspace", "bench", "config", "daemon", "services", "tests", "tools", "transport", "ua"]
SKIP_PARTS = {"generated", "node_modules"}


def sources() -> list[pathlib.Path]:
    out = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".cpp", ".hpp") or not path.is_file():
                continue
            if SKIP_PARTS.intersection(path.relative_to(ROOT).parts):
                continue
            out.append(path)
    return out


def main() -> int:
    tool = shutil.which("clang-format-14") or shutil.which("clang-format")
    if tool is None:
        print("check_format.py: clang-format is not installed (Debian package clang-format)", file=sys.stderr)
        return 2
    files = sources()
    if "--fix" in sys.argv[1:]:
        subprocess.run([tool, "-i", *map(str, files)], check=True)
        print(f"{len(files)} files formatted")
        return 0
    # One clang-format for all files (a process per file costs more than the formatting): each violation
    # is reported as "<file>:<line>:<column>: error: ...".
    r = subprocess.run([tool, "--dry-run", "-Werror", *map(str, files)], capture_output=True, text=True)
    bad = sorted({pathlib.Path(line.split(":", 1)[0]).resolve().relative_to(ROOT)
                  for line in r.stderr.splitlines() if ": error: " in line})
    if r.returncode != 0 and not bad:
        print(r.stderr, file=sys.stderr)
        print("check_format.py: clang-format failed", file=sys.stderr)
        return 2
    for b in bad:
        print(f"{b}: not formatted (python3 tools/check_format.py --fix)")
    print(f"{len(files)} files checked, {len(bad)} not formatted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
