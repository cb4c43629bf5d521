#!/usr/bin/env python3
"""Checks the layering of services/ (docs/ARCHITECTURE.md, Services): every #include "services/..." in
services/ must point to a file of the same layer or a lower one. Lists every include that points up, and
every file of services/ that the table below does not place, and exits 1 if there is any.

    python3 tools/check_layers.py            # from anywhere; the tree is found from this file

A .cpp file is in the layer of its own header unless the table names it. Within a layer files may include
each other; a header never includes one that includes it back (the compiler would say so first).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Bottom first. A file (its name without the extension, or a .cpp named in full) belongs to one layer.
LAYERS = [
    ("base", ["address_counter", "alarm_eval", "bounded_counter", "cell_watch", "content_filter", "event_inbox", "event_record", "event_schema", "filter_convert",
              "index_range", "login_verifier", "notifier_watch", "pending_publish", "scratch", "service_stats",
              "session_diagnostics", "subscription_registry", "user_token"]),
    ("session", ["access_control", "attribute_read", "audit", "diagnostics", "session", "session_events"]),
    ("shard", ["event_item", "item_table", "monitored_item", "publish_queue", "sampler", "shard", "subscription",
               "subscription_items.cpp"]),
    ("registry", ["session_registry"]),
    ("request", ["request"]),
    ("dispatch", ["dispatcher", "handlers"]),
    # diagnostics.cpp implements Server::collect_diagnostics, so it reads the Server.
    ("server", ["server", "server_endpoints.cpp", "diagnostics.cpp"]),
    ("services", ["attribute_service.cpp", "discovery_service.cpp", "method_service.cpp",
                  "monitored_item_service.cpp", "session_crypto", "session_identity.cpp", "session_move.cpp",
                  "session_service.cpp",
                  "subscription_service.cpp", "transfer_service.cpp", "view_service.cpp"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"services/([^"]+)"', re.MULTILINE)


def layer_of(name: str, rank: dict[str, int]) -> int | None:
    if name in rank:
        return rank[name]
    return rank.get(name.rsplit(".", 1)[0])


def main() -> int:
    rank: dict[str, int] = {}
    for i, (_, files) in enumerate(LAYERS):
        for f in files:
            if f in rank:
                print(f"check_layers.py: {f} is in two layers", file=sys.stderr)
                return 2
            rank[f] = i
    names = [name for name, _ in LAYERS]
    problems: list[str] = []
    sources = sorted(p for p in (ROOT / "services").iterdir() if p.suffix in (".hpp", ".cpp"))
    for path in sources:
        own = layer_of(path.name, rank)
        if own is None:
            problems.append(f"services/{path.name}: in no layer (add it to LAYERS in tools/check_layers.py)")
            continue
        text = path.read_text()
        for match in INCLUDE.finditer(text):
            target = match.group(1)
            line = text.count("\n", 0, match.start()) + 1
            theirs = layer_of(target, rank)
            if theirs is None:
                problems.append(f"services/{path.name}:{line}: includes services/{target}, which is in no layer")
            elif theirs > own:
                problems.append(f"services/{path.name}:{line}: includes services/{target}: up from layer "
                                f"'{names[own]}' to '{names[theirs]}'")
    for p in problems:
        print(p)
    print(f"{len(sources)} files of services/ in {len(LAYERS)} layers, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
