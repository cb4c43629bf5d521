#!/usr/bin/env python3
"""bench-smoke helper: runs opcuad-bench with --json, checks that standard output is one JSON document
holding the given keys (dotted paths; a path may go through the first element of a list), and exits with
opcuad-bench's own exit code (or 1 when the JSON is missing or incomplete).

    check_json.py [--ignore-exit] KEY[,KEY...] -- opcuad-bench ARGS... --json

--ignore-exit: only the JSON counts (for `limits`, whose PASS/FAIL depends on the machine's timing).
"""
import json
import subprocess
import sys


def lookup(doc, path):
    for part in path.split("."):
        if isinstance(doc, list):
            doc = doc[0] if doc else None
        if not isinstance(doc, dict) or part not in doc:
            return False, None
        doc = doc[part]
    return True, doc


def main():
    args = sys.argv[1:]
    ignore_exit = bool(args) and args[0] == "--ignore-exit"
    if ignore_exit:
        args = args[1:]
    sep = args.index("--")
    keys = [k for k in args[0].split(",") if k] if sep > 0 else []
    proc = subprocess.run(args[sep + 1:], stdout=subprocess.PIPE, text=True)
    sys.stdout.write(proc.stdout)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        print(f"check_json: standard output is not one JSON document: {e}", file=sys.stderr)
        return 1
    missing = [k for k in keys if not lookup(doc, k)[0]]
    if missing:
        print(f"check_json: missing keys: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0 if ignore_exit else proc.returncode


if __name__ == "__main__":
    sys.exit(main())
