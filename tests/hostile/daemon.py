"""Starts the real opcuad (OPCUAD_BIN) on a free port with a test configuration, watches its memory, stops
it. The configuration is the built-in demo one (config/default_config.cpp), listening on 127.0.0.1 only."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BIN = os.environ.get("OPCUAD_BIN") or os.path.join(ROOT, "build", "asan", "daemon", "opcuad")

# A daemon whose RSS passes this is killed at once, so a test that finds an unbounded path fails instead
# of taking the machine with it (the watchdog polls every 20 ms).
HARD_RSS_LIMIT_MB = int(os.environ.get("OPCUAD_HOSTILE_RSS_KILL_MB", "1500"))


def demo_nodes():
    """The demo node file of the built-in configuration, read from its source so the two never drift."""
    with open(os.path.join(ROOT, "config", "default_config.cpp"), encoding="utf-8") as f:
        src = f.read()
    m = re.search(r'kDemoNodes = R"json\((.*?)\)json"', src, re.S)
    if not m:
        raise RuntimeError("kDemoNodes not found in config/default_config.cpp")
    return json.loads(m.group(1))


def merge(base, extra):
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = v
    return base


def drop_pointer(config, pointer):
    """Removes the value at a JSON pointer (/a/b) from config; says whether it existed."""
    parts = [p for p in pointer.split("/") if p]
    node = config
    for p in parts[:-1]:
        if not isinstance(node, dict) or p not in node:
            return False
        node = node[p]
    if isinstance(node, dict) and parts and parts[-1] in node:
        del node[parts[-1]]
        return True
    return False


class Daemon:
    def __init__(self, config=None, optional=None):
        """config: merged into the base server file. optional: settings of limits that only newer daemons
        know (their keys are being added); each one this daemon rejects as an unknown key is left out and
        listed in self.rejected, so the test that needs it can say so."""
        self.dir = tempfile.mkdtemp(prefix="opcuad-hostile-")
        with open(os.path.join(self.dir, "demo.json"), "w") as f:
            json.dump(demo_nodes(), f)
        self.config = {
            "application_uri": "urn:opcuad:server",
            "application_name": "opcuad",
            "endpoints": [{"url": "opc.tcp://127.0.0.1:0", "security_policies": ["None"],
                           "security_modes": ["None"]}],
            # One shard: the attacker and the well-behaved client always share a thread, so a request that
            # holds its shard shows as latency (the strictest case; the default runs one shard per core).
            "threads": 1,
            "security": {"allow_anonymous": True, "anonymous_write": True},
            "namespaces": ["urn:opcuad:demo"],
            "node_files": ["demo.json"],
        }
        merge(self.config, config or {})
        if os.environ.get("OPCUAD_HOSTILE_CONFIG"):
            merge(self.config, json.loads(os.environ["OPCUAD_HOSTILE_CONFIG"]))
        self.rejected = []
        if optional:
            self.accept_optional(optional)
        self.file = os.path.join(self.dir, "opcuad.json")
        self.write()
        self.proc = None
        self.port = None
        self.peak_kb = 0
        self.killed_for_rss = False
        self._stop_watch = threading.Event()

    def write(self, path=None):
        with open(path or os.path.join(self.dir, "opcuad.json"), "w") as f:
            json.dump(self.config, f, indent=1)

    _rejected_cache = {}

    def accept_optional(self, optional):
        merge(self.config, json.loads(json.dumps(optional)))
        key = json.dumps(self.config, sort_keys=True)
        if key in Daemon._rejected_cache:
            self.rejected = list(Daemon._rejected_cache[key])
            for pointer in self.rejected:
                drop_pointer(self.config, pointer)
            return
        self._probe()
        Daemon._rejected_cache[key] = list(self.rejected)

    def _probe(self):
        probe = os.path.join(self.dir, "probe.json")
        for _ in range(10):
            self.write(probe)
            r = subprocess.run([BIN, "--config", probe, "--check-config"], capture_output=True, text=True,
                               timeout=60, env=self.env())
            if r.returncode == 0:
                return
            dropped = False
            for pointer in re.findall(r": (/[^:]*): unknown key", r.stderr):
                if drop_pointer(self.config, pointer):
                    self.rejected.append(pointer)
                    dropped = True
            if not dropped:
                raise RuntimeError("the test configuration is invalid:\n" + r.stderr)

    def env(self):
        env = dict(os.environ)
        # A small quarantine so freed memory shows in RSS as freed (ASan keeps 256 MB by default).
        asan = env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "quarantine_size_mb=16:detect_leaks=0"
        return env

    def start(self):
        self.log = open(os.path.join(self.dir, "stderr.log"), "w+")
        self.proc = subprocess.Popen([BIN, "--config", self.file], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.log, env=self.env())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = re.search(r"listening on opc\.tcp://127\.0\.0\.1:(\d+)", self.output())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError("opcuad exited with %s:\n%s" % (self.proc.returncode, self.output()))
            time.sleep(0.02)
        else:
            self.stop()
            raise RuntimeError("opcuad did not start:\n" + self.output())
        threading.Thread(target=self._watch, daemon=True).start()
        return self

    def output(self):
        with open(os.path.join(self.dir, "stderr.log"), errors="replace") as f:
            return f.read()

    def rss_kb(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
        return 0

    def reset_peak(self):
        self.peak_kb = self.rss_kb()

    def _watch(self):
        while not self._stop_watch.is_set() and self.proc.poll() is None:
            kb = self.rss_kb()
            self.peak_kb = max(self.peak_kb, kb)
            if kb > HARD_RSS_LIMIT_MB * 1024:
                self.killed_for_rss = True
                self.proc.send_signal(signal.SIGKILL)
                return
            time.sleep(0.02)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def sanitizer_reports(self):
        out = self.output()
        return [l for l in out.splitlines() if "AddressSanitizer" in l or "runtime error:" in l
                or "LeakSanitizer" in l]

    def stop(self):
        self._stop_watch.set()
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
