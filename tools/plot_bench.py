#!/usr/bin/python3
"""Plots of opcuad-bench --json results, as SVG files for docs/PERFORMANCE.md.

    tools/plot_bench.py [--out DIR] [--title TEXT] RESULT.json [RESULT.json ...]

Each input is the JSON document of one opcuad-bench run (docs/PERFORMANCE.md, "The load harness"). It
writes into DIR (default: the current directory):

  throughput.svg     requests/s and server CPU per request of every target, grouped by scenario
  latency.svg        p50, p90, p99 and p99.9 of every target, one panel per scenario
  security.svg       when a run compared --security variants: requests/s relative to None and server CPU
                     per request, per variant
  subscriptions.svg  when a sub run is among the inputs: its capacity (--find-capacity) or notifications/s

Every plot names the machine and the steal time the runs recorded. The output is deterministic (a fixed
SVG hash salt, no date), so the same inputs give byte-identical files. It needs matplotlib (Debian:
python3-matplotlib); exits 77 without it, so that ctest can skip.
"""

import argparse
import json
import os
import statistics
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # headless: no display, and the same output everywhere
    import matplotlib.pyplot as plt
except ImportError:
    sys.stderr.write("plot_bench: matplotlib is missing (Debian: apt-get install python3-matplotlib)\n")
    sys.exit(77)

PERCENTILES = [("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9")]
# One colour per target kind, in the order they appear; the same kind keeps its colour in every plot.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def base_target(name):
    """'opcuad[Basic256Sha256:SignAndEncrypt]' -> 'opcuad': the variant is part of the scenario group."""
    return name.split("[", 1)[0]


def scenario_label(doc, run):
    scenario = doc["scenario"]
    ops = doc.get("operations_per_request", 1)
    label = scenario if scenario == "browse" else f"{scenario}-{ops}"
    security = run.get("security") or doc.get("security", "None")
    if security != "None":
        policy, _, mode = security.partition(":")
        label += f"\n{policy}\n{mode}"
    return label


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Results:
    """Every input, split into load runs (one row per target and scenario) and sub runs."""

    def __init__(self, docs):
        self.load = []  # dicts: group, target, variant, rate, server_us, latency, doc, run
        self.sub = []
        self.steal = []  # every round's steal, percent
        self.high_steal_rounds = 0
        self.machines = []
        for doc in docs:
            machine = doc.get("machine", {})
            text = f"{machine.get('cpus', '?')} CPU(s) ({machine.get('cpu_model', '?')})"
            if text not in self.machines:
                self.machines.append(text)
            if doc.get("scenario") == "sub":
                self.sub.append(doc)
                continue
            for run in doc.get("runs", []):
                rate = run.get("median_round_requests_per_s") or run.get("requests_per_s")
                server_us = run.get("median_round_server_cpu_us_per_request")
                if server_us is None and run.get("server_cpu_s", -1) > 0:
                    server_us = run.get("server_cpu_us_per_request")
                self.load.append({
                    "group": scenario_label(doc, run),
                    "target": base_target(run["target"]),
                    "variant": run.get("security") or doc.get("security", "None"),
                    "rate": rate,
                    "server_us": server_us,
                    "latency": run.get("latency_us", {}),
                    "doc": doc,
                    "run": run,
                })
                for r in run.get("round_details", []):
                    if r.get("steal_percent") is not None:
                        self.steal.append(r["steal_percent"])
                    self.high_steal_rounds += bool(r.get("high_steal"))

    def groups(self):
        seen = []
        for row in self.load:
            if row["group"] not in seen:
                seen.append(row["group"])
        return seen

    def targets(self):
        seen = []
        for row in self.load:
            if row["target"] not in seen:
                seen.append(row["target"])
        return seen

    def find(self, group, target):
        for row in self.load:
            if row["group"] == group and row["target"] == target:
                return row
        return None

    def footnote(self):
        machine = "; ".join(self.machines)
        if not self.steal:
            return f"machine: {machine}; steal not recorded"
        return (f"machine: {machine}; steal median {statistics.median(self.steal):.1f} %, "
                f"max {max(self.steal):.1f} % over {len(self.steal)} rounds "
                f"({self.high_steal_rounds} above 5 %)")


def colour(targets, target):
    return PALETTE[targets.index(target) % len(PALETTE)]


def grouped_bars(ax, groups, targets, value, fmt, cols):
    """Bars of value(group, target) side by side per group, each labelled with fmt(value)."""
    width = 0.8 / max(1, len(targets))
    for k, target in enumerate(targets):
        xs, ys = [], []
        for i, group in enumerate(groups):
            v = value(group, target)
            if v is not None and v > 0:
                xs.append(i - 0.4 + width * (k + 0.5))
                ys.append(v)
        bars = ax.bar(xs, ys, width, label=target, color=cols(target))
        for bar, y in zip(bars, ys):
            ax.annotate(fmt(y), (bar.get_x() + bar.get_width() / 2, y), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=6.5)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=7.5)
    ax.grid(axis="y", which="major", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)


def si(v):
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def save(fig, path):
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "tools/plot_bench.py"})
    plt.close(fig)
    print(path)


def plot_throughput(res, out, title):
    groups, targets = res.groups(), res.targets()
    cols = lambda t: colour(targets, t)
    fig, (a, b) = plt.subplots(2, 1, figsize=(max(6.5, 1.3 * len(groups) + 2), 7.5))
    grouped_bars(a, groups, targets, lambda g, t: (res.find(g, t) or {}).get("rate"), si, cols)
    a.set_yscale("log")
    a.set_ylabel("requests/s (median of rounds, log)")
    a.set_title(f"{title}: throughput", fontsize=10)
    a.legend(fontsize=7.5)
    grouped_bars(b, groups, targets, lambda g, t: (res.find(g, t) or {}).get("server_us"),
                 lambda v: f"{v:.1f}", cols)
    b.set_yscale("log")
    b.set_ylabel("server CPU µs per request (log)")
    b.set_title("server CPU per request (lower is better)", fontsize=10)
    fig.text(0.01, 0.005, res.footnote(), fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    save(fig, os.path.join(out, "throughput.svg"))


def plot_latency(res, out, title):
    groups, targets = res.groups(), res.targets()
    cols = lambda t: colour(targets, t)
    n = len(groups)
    ncols = min(4, n)
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols + 0.6, 3.2 * nrows + 0.4), squeeze=False)
    labels = [label for _, label in PERCENTILES]
    for i, group in enumerate(groups):
        ax = axes[i // ncols][i % ncols]

        def value(percentile_label, target, group=group):
            row = res.find(group, target)
            if row is None:
                return None
            key = dict((l, k) for k, l in PERCENTILES)[percentile_label]
            return row["latency"].get(key)

        grouped_bars(ax, labels, targets, value, lambda v: f"{v:.0f}" if v >= 10 else f"{v:.1f}", cols)
        ax.set_yscale("log")
        ax.set_title(group.replace("\n", " "), fontsize=8)
        if i % ncols == 0:
            ax.set_ylabel("latency µs (log)")
    for j in range(n, nrows * ncols):
        axes[j // ncols][j % ncols].axis("off")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{title}: latency percentiles", fontsize=10)
    fig.text(0.01, 0.005, res.footnote(), fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    save(fig, os.path.join(out, "latency.svg"))


def plot_security(res, out, title):
    """Per scenario without its variant: each variant's requests/s over None's, and its server µs."""
    rows = [r for r in res.load if r["target"] != "canned"]
    variants = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    if len(variants) < 2 or "None" not in variants:
        return
    scenario_of = lambda r: r["group"].split("\n", 1)[0]
    scenarios, targets = [], []
    for r in rows:
        if scenario_of(r) not in scenarios:
            scenarios.append(scenario_of(r))
        if r["target"] not in targets:
            targets.append(r["target"])
    # x groups: scenario x target; bars: variants.
    groups = [(s, t) for s in scenarios for t in targets
              if any(scenario_of(r) == s and r["target"] == t and r["variant"] != "None" for r in rows)]
    if not groups:
        return

    def find(scenario, target, variant):
        for r in rows:
            if scenario_of(r) == scenario and r["target"] == target and r["variant"] == variant:
                return r
        return None

    def relative(group, variant):
        base, row = find(*group, "None"), find(*group, variant)
        if not base or not row or not base["rate"] or not row["rate"]:
            return None
        # Within one run the ratio of the round pairs is in the JSON; across runs, the medians.
        if base["doc"] is row["doc"] and base["target"] in ("opcuad", "server"):
            ratio = row["doc"].get("ratios", {}).get(row["run"]["target"])
            if ratio:
                return 1 / ratio
        return row["rate"] / base["rate"]

    names = [f"{s} {t}" for s, t in groups]
    vcols = lambda v: PALETTE[variants.index(v) % len(PALETTE)]
    fig, (a, b) = plt.subplots(2, 1, figsize=(max(6.5, 1.6 * len(groups) + 2), 7))
    idx = lambda name: groups[names.index(name)]
    grouped_bars(a, names, variants, lambda n, v: relative(idx(n), v), lambda x: f"{x:.2f}", vcols)
    a.set_ylabel("requests/s relative to None")
    a.set_title(f"{title}: cost of secured channels", fontsize=10)
    a.legend(fontsize=7)
    grouped_bars(b, names, variants, lambda n, v: (find(*idx(n), v) or {}).get("server_us"),
                 lambda x: f"{x:.1f}", vcols)
    b.set_yscale("log")
    b.set_ylabel("server CPU µs per request (log)")
    fig.text(0.01, 0.005, res.footnote(), fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    save(fig, os.path.join(out, "security.svg"))


def plot_subscriptions(res, out, title):
    if not res.sub:
        return
    capacity = any(d.get("find_capacity") for d in res.sub)
    groups, targets, values = [], [], {}
    for doc in res.sub:
        group = f"{doc['sampling_interval_ms']:g} ms, {doc['sessions']} session(s)"
        if doc.get("find_capacity"):
            group += "\ncapacity"
        if group not in groups:
            groups.append(group)
        for t in doc.get("targets", []):
            if t["target"] not in targets:
                targets.append(t["target"])
            values[(group, t["target"])] = t.get("median")
    cols = lambda t: colour(targets, t)
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(groups) + 2), 4))
    grouped_bars(ax, groups, targets, lambda g, t: values.get((g, t)), si, cols)
    ax.set_yscale("log")
    ax.set_ylabel("items with >= 99 % of samples (log)" if capacity else "notifications/s (log)")
    ax.set_title(f"{title}: subscriptions", fontsize=10)
    ax.legend(fontsize=7.5)
    fig.text(0.01, 0.005, "; ".join(res.machines), fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, os.path.join(out, "subscriptions.svg"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="opcuad-bench --json outputs")
    parser.add_argument("--out", default=".", help="directory for the SVG files")
    parser.add_argument("--title", default="opcuad-bench", help="prefix of every plot's title")
    args = parser.parse_args()
    docs = []
    for path in args.inputs:
        with open(path, encoding="utf-8") as f:
            docs.append(json.load(f))
    # Deterministic SVG: element ids from a fixed salt instead of a random one, no date in the metadata,
    # text as paths (no dependence on the reader's fonts).
    plt.rcParams.update({"svg.hashsalt": "opcuad-bench", "svg.fonttype": "path", "font.size": 8})
    os.makedirs(args.out, exist_ok=True)
    res = Results(docs)
    if res.load:
        plot_throughput(res, args.out, args.title)
        plot_latency(res, args.out, args.title)
        plot_security(res, args.out, args.title)
    plot_subscriptions(res, args.out, args.title)
    if not res.load and not res.sub:
        sys.stderr.write("plot_bench: no load or sub results in the inputs\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
