"""opcuad's command line (daemon/cli.cpp): each command's output and exit code on good and bad input,
against the built binary (OPCUAD_BIN). Exit codes: 0 ok, 1 runtime failure, 2 usage, 3 invalid
configuration (opcuad(8))."""
import base64
import hashlib
import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import termios
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BIN = os.environ.get("OPCUAD_BIN") or os.path.join(ROOT, "build", "asan", "daemon", "opcuad")
ENV = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def opcuad(*args, input=None, timeout=120):
    return subprocess.run([BIN, *args], input=input, capture_output=True, text=True, timeout=timeout, env=ENV)


def verifies(password, encoded):
    """Checks a pbkdf2-sha256$<iterations>$<salt>$<hash> value the way config/password.cpp does."""
    scheme, iterations, salt, digest = encoded.split("$")
    assert scheme == "pbkdf2-sha256"
    salt, digest = base64.b64decode(salt), base64.b64decode(digest)
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, int(iterations), len(digest)) == digest


class Dir:
    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="opcuad-cli-")
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path


COMMANDS = ["run", "check-config", "print-default-config", "hash-password"]


class Help(unittest.TestCase):
    def test_top_level_help_lists_commands_and_exit_codes(self):
        r = opcuad("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for c in COMMANDS + ["--config", "--log-level", "--version"]:
            self.assertIn(c, r.stdout)
        self.assertIn("0 ok, 1 runtime failure, 2 usage error, 3 invalid configuration", r.stdout)
        self.assertNotIn("--hash-password", r.stdout)  # the old flags are hidden aliases

    def test_each_command_has_its_own_help(self):
        for c in COMMANDS:
            r = opcuad(c, "--help")
            self.assertEqual(r.returncode, 0, c + ": " + r.stderr)
            self.assertIn("Usage: opcuad " + c, r.stdout)
        self.assertIn("--node-file", opcuad("print-default-config", "--help").stdout)

    def test_version(self):
        r = opcuad("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout.strip(), r"^opcuad \d+\.\d+\.\d+$")


class Usage(unittest.TestCase):
    def check_usage(self, *args):
        r = opcuad(*args)
        self.assertEqual(r.returncode, 2, "%s: %s%s" % (args, r.stdout, r.stderr))
        self.assertTrue(r.stderr.strip(), args)
        return r

    def test_unknown_option_or_command(self):
        self.assertIn("--bogus", self.check_usage("--bogus").stderr)
        self.check_usage("frobnicate")
        self.check_usage("check-config", "--bogus")

    def test_missing_or_invalid_arguments(self):
        self.check_usage("--config")
        self.assertIn("loud", self.check_usage("--log-level", "loud").stderr)
        self.check_usage("check-config", "hash-password")  # one command at a time
        self.check_usage("--check-config", "--hash-password")
        self.check_usage("--check-config", "run")


class CheckConfig(unittest.TestCase):
    def test_valid_file(self):
        with Dir() as d:
            f = d.write("opcuad.json", json.dumps({"endpoints": [{"url": "opc.tcp://127.0.0.1:4840"}]}))
            for args in (["check-config", "--config", f], ["--config", f, "check-config"], ["-c", f, "check-config"],
                         ["--config", f, "--check-config"]):
                r = opcuad(*args)
                self.assertEqual(r.returncode, 0, "%s: %s" % (args, r.stderr))
                self.assertRegex(r.stdout, re.escape(f) + r": valid: 1 endpoint\(s\), 0 user\(s\)")

    def test_warnings_for_an_endpoint_no_client_can_use_for_anonymous_writes_and_for_none_beyond_loopback(self):
        with Dir() as d:
            f = d.write("opcuad.json", json.dumps({"endpoints": [
                {"url": "opc.tcp://127.0.0.1:4840"},
                {"url": "opc.tcp://127.0.0.1:4841", "allow_anonymous": False}]}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f + ": warning: endpoint opc.tcp://127.0.0.1:4841 offers no user token policy", r.stderr)
            self.assertNotIn("4840 offers no user token policy", r.stderr)
            self.assertNotIn("anonymous_write", r.stderr)  # off unless asked for
            f = d.write("writes.json", json.dumps({"endpoints": [{"url": "opc.tcp://127.0.0.1:4840"}],
                                                  "security": {"anonymous_write": True}}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("warning: anonymous sessions may write every writable variable (security.anonymous_write)",
                          r.stderr)
            self.assertNotIn("no user token policy", r.stderr)
            self.assertNotIn("beyond loopback", r.stderr)
            for host in ("0.0.0.0", "[::]", "192.0.2.1"):
                f = d.write("open.json", json.dumps({"endpoints": [{"url": "opc.tcp://%s:4840" % host}]}))
                r = opcuad("check-config", "--config", f)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("warning: endpoint opc.tcp://%s:4840 offers SecurityPolicy None beyond loopback" % host,
                              r.stderr)

    def test_every_problem_is_reported_with_exit_3(self):
        with Dir() as d:
            f = d.write("opcuad.json", json.dumps({"endpoints": [{"url": "http://x"}], "colour": 1,
                                                   "logging": {"level": "loud"}}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertEqual(r.stdout, "")
            self.assertIn(f + ": /colour: unknown key", r.stderr)
            self.assertIn(f + ": /logging/level: unknown log level", r.stderr)
            self.assertIn("/endpoints/0/url", r.stderr)
            self.assertEqual(opcuad("--config", f, "--check-config").returncode, 3)

    def test_unreadable_or_broken_files(self):
        with Dir() as d:
            r = opcuad("check-config", "--config", os.path.join(d.path, "missing.json"))
            self.assertEqual(r.returncode, 3)
            self.assertIn("cannot open file", r.stderr)
            r = opcuad("check-config", "--config", d.write("broken.json", "{\"endpoints\": ["))
            self.assertEqual(r.returncode, 3)
            self.assertIn("invalid JSON", r.stderr)

    def test_nodeset2_files_are_checked_with_file_and_line(self):
        fixtures = os.path.join(ROOT, "tests", "unit", "config", "nodesets")
        with Dir() as d:
            # Named before the model it requires: loaded after it all the same.
            f = d.write("opcuad.json", json.dumps({"node_files": [os.path.join(fixtures, "machine.xml"),
                                                                   os.path.join(fixtures, "base.xml")]}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 0, r.stderr)
            # 47 of the files; 2 x 8 of the models' NamespaceMetadata objects and their properties; base.xml's
            # OPC Binary dictionary, its NamespaceUri and Deprecated and PointType's DataTypeDescription.
            self.assertIn(f + ": 67 node(s) of 2 model(s) from 2 NodeSet2 file(s): http://example.com/base/ 1.2.0 "
                          "http://example.com/machine/ 0.9", r.stdout)
            broken = d.write("broken.xml", "<UANodeSet>\n<UAObject NodeId='ns=1;i=1'\n</UANodeSet>\n")
            missing = d.write("alone.xml", open(os.path.join(fixtures, "machine.xml")).read())
            f = d.write("bad.json", json.dumps({"node_files": [broken, missing]}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn(broken + ": line 3: malformed XML", r.stderr)
            self.assertIn(missing + ": line 13: model http://example.com/machine/ requires model "
                          "http://example.com/base/ 1.1, which no node file provides", r.stderr)
            # Its references into the missing model are not reported on top (nor with a file that did not
            # parse).
            self.assertIn(f + ": 2 problem(s)", r.stderr)

    def test_alarm_errors_name_the_file_and_the_alarm(self):
        with Dir() as d:
            nodes = d.write("nodes.json", json.dumps({"namespaces": ["urn:t"], "nodes": [
                {"kind": "variable", "name": "Level", "data_type": "Double", "value": 0, "alarms": [
                    {"name": "L", "type": "exclusive_limit", "limits": {"high": 5, "low": 5}}]},
                {"kind": "variable", "name": "Switch", "data_type": "Boolean", "value": False}],
                "alarms": [{"name": "T", "input": "s=Level", "type": "trip"}]}))
            f = d.write("opcuad.json", json.dumps({"node_files": [nodes]}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn(nodes + ": /nodes/0/alarms/0/limits/low: must be less than high", r.stderr)
            self.assertIn(nodes + ': /alarms/0/input: a "trip" alarm needs a Boolean scalar input', r.stderr)
            nodes = d.write("nodes.json", json.dumps({"namespaces": ["urn:t"], "nodes": [
                {"kind": "variable", "name": "Switch", "data_type": "Boolean", "value": False,
                 "alarms": [{"name": "T", "type": "trip"}]}]}))
            r = opcuad("check-config", "--config", f)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_without_config_uses_the_installed_file_or_the_built_in_demo(self):
        installed = re.search(r"without --config, (\S+) if it exists", opcuad("--help").stdout).group(1)
        r = opcuad("check-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        if os.path.exists(installed):
            self.assertIn(installed + ": valid", r.stdout)
        else:
            self.assertIn("built-in default", r.stdout)
            self.assertRegex(r.stdout, r"valid: 1 endpoint\(s\), 0 user\(s\), [1-9]\d* node declaration")


class PrintDefaultConfig(unittest.TestCase):
    def test_prints_the_packaged_files(self):
        r = opcuad("print-default-config")
        self.assertEqual(r.returncode, 0)
        with open(os.path.join(ROOT, "packaging", "opcuad.json")) as f:
            self.assertEqual(r.stdout, f.read())
        r = opcuad("print-default-config", "--node-file")
        with open(os.path.join(ROOT, "packaging", "nodes.d", "demo.json")) as f:
            self.assertEqual(r.stdout, f.read())

    def test_output_loads_as_is(self):
        with Dir() as d:
            server = d.write("opcuad.json", opcuad("print-default-config").stdout)
            r = opcuad("check-config", "--config", server)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("0 node file(s)", r.stdout)  # nodes.d/*.json matches nothing yet: still valid
            d.write("nodes.d/demo.json", opcuad("print-default-config", "--node-file").stdout)
            r = opcuad("check-config", "--config", server)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("in 1 node file(s)", r.stdout)

    def test_complete_and_commented(self):
        """Every key the schema knows for a server file is there, and every object says what it is for,
        so a key added to the schema without a place in the starting point fails here."""
        printed = json.loads(opcuad("print-default-config").stdout)
        with open(os.path.join(ROOT, "config", "opcuad.schema.json")) as f:
            server = json.load(f)["$defs"]["serverFile"]
        self.assertIn("comment", printed)
        for key, spec in server["properties"].items():
            self.assertIn(key, printed, "print-default-config lacks " + key)
            sub = spec.get("items", spec) if spec.get("type") == "array" else spec
            if sub.get("type") == "object" and isinstance(printed[key], dict):
                for inner in sub.get("properties", {}):
                    self.assertIn(inner, printed[key], "print-default-config lacks %s.%s" % (key, inner))
                self.assertIn("comment", printed[key], key + " has no comment")

    def test_safe_defaults(self):
        printed = json.loads(opcuad("print-default-config").stdout)
        self.assertEqual([e["url"] for e in printed["endpoints"]], ["opc.tcp://127.0.0.1:4840", "opc.tcp://0.0.0.0:4843"])
        # Only loopback serves SecurityPolicy None; the endpoint on every interface is secured, without anonymous.
        exposed = printed["endpoints"][1]
        self.assertNotIn("None", exposed["security_policies"] + exposed["security_modes"])
        self.assertFalse(exposed["allow_anonymous"])
        self.assertFalse(printed["security"]["allow_plaintext_passwords"])
        self.assertFalse(printed["security"]["anonymous_write"])
        nodes = json.loads(opcuad("print-default-config", "--node-file").stdout)

        def writable(n):
            return "write" in n.get("access", []) or any(writable(c) for c in n.get("children", []))
        self.assertFalse(any(writable(n) for n in nodes["nodes"]), "a demo node is writable by anonymous clients")


class HashPassword(unittest.TestCase):
    def test_from_standard_input(self):
        for command in (["hash-password"], ["--hash-password"]):
            r = opcuad(*command, input="s3cret pass\n")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, r"^pbkdf2-sha256\$600000\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+\n$")
            self.assertTrue(verifies("s3cret pass", r.stdout.strip()))
            self.assertNotIn("s3cret", r.stderr)
        r = opcuad("hash-password", input="crlf\r\nsecond line\n")
        self.assertTrue(verifies("crlf", r.stdout.strip()))

    def test_two_hashes_of_one_password_differ(self):
        a = opcuad("hash-password", input="same\n").stdout
        b = opcuad("hash-password", input="same\n").stdout
        self.assertNotEqual(a, b)  # a random salt each time

    def test_no_or_empty_password(self):
        for text in ("", "\n"):
            r = opcuad("hash-password", input=text)
            self.assertEqual(r.returncode, 1, repr(text))
            self.assertEqual(r.stdout, "")
            self.assertIn("password", r.stderr)

    def terminal(self, lines, interrupt=False):
        """Runs hash-password on a pseudo-terminal, typing `lines` after each prompt (or, with interrupt,
        sending SIGINT at the first prompt): (exit code, everything the terminal showed, standard output,
        whether echo is on again afterwards)."""
        master, slave = pty.openpty()
        out_r, out_w = os.pipe()
        proc = subprocess.Popen([BIN, "hash-password"], stdin=slave, stdout=out_w, stderr=slave, env=ENV,
                                start_new_session=True)
        os.close(out_w)
        shown = b""
        deadline = time.monotonic() + 120
        pending = list(lines)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    shown += os.read(master, 4096)
                except OSError:
                    break
            prompts = shown.count(b"assword: ")
            if interrupt and prompts:
                proc.send_signal(signal.SIGINT)
                interrupt = False
            if pending and prompts > len(lines) - len(pending):
                os.write(master, pending.pop(0).encode() + b"\n")
            if proc.poll() is not None:
                break
        proc.wait(60)
        # What the process wrote just before it exited may still be in the terminal's buffer.
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        stdout = os.read(out_r, 65536).decode()
        os.close(out_r)
        echo = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
        os.close(master)
        os.close(slave)
        return proc.returncode, shown.decode(errors="replace"), stdout, echo

    def test_terminal_asks_twice_without_echo(self):
        code, shown, stdout, echo = self.terminal(["Tty-Secret-1", "Tty-Secret-1"])
        self.assertEqual(code, 0, shown)
        self.assertIn("Password: ", shown)
        self.assertIn("Repeat password: ", shown)
        self.assertNotIn("Tty-Secret-1", shown)  # never echoed
        self.assertTrue(verifies("Tty-Secret-1", stdout.strip()))
        self.assertTrue(echo, "the terminal's echo was not restored")

    def test_terminal_echo_restored_after_ctrl_c(self):
        code, shown, stdout, echo = self.terminal([], interrupt=True)
        self.assertEqual(code, -signal.SIGINT, shown)
        self.assertEqual(stdout, "")
        self.assertTrue(echo, "Ctrl-C at the prompt left the terminal without echo")

    def test_terminal_passwords_that_differ(self):
        code, shown, stdout, echo = self.terminal(["first-one", "second-one"])
        self.assertEqual(code, 1)
        self.assertIn("differ", shown)
        self.assertEqual(stdout, "")
        self.assertTrue(echo)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run(unittest.TestCase):
    def start(self, args, wait_for=None):
        log = tempfile.TemporaryFile(mode="w+")
        self.addCleanup(log.close)
        proc = subprocess.Popen([BIN, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                env=ENV)
        deadline = time.monotonic() + 60
        while wait_for and time.monotonic() < deadline and proc.poll() is None:
            log.seek(0)
            if re.search(wait_for, log.read()):
                break
            time.sleep(0.05)
        return proc, log

    def output(self, log):
        log.seek(0)
        return log.read()

    def stop(self, proc):
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.fail("opcuad did not stop on SIGTERM")

    def test_invalid_configuration_exits_3(self):
        with Dir() as d:
            f = d.write("opcuad.json", json.dumps({"threads": "two"}))
            for args in (["--config", f], ["run", "--config", f]):
                proc, log = self.start(args)
                self.assertEqual(proc.wait(60), 3)
                self.assertIn("not starting", self.output(log))

    def test_handshake_pool_follows_its_settings(self):
        with Dir() as d:
            f = d.write("opcuad.json", json.dumps({
                "endpoints": [{"url": "opc.tcp://127.0.0.1:0"}],
                "connections": {"handshake_threads": 3, "max_queued_handshakes": 7}}))
            proc, log = self.start(["run", "--config", f], r"listening on opc\.tcp://127\.0\.0\.1:\d+")
            self.assertIn("handshake pool: 3 thread(s) at nice 10, at most 7 queued", self.output(log))
            self.assertEqual(self.stop(proc), 0, self.output(log))
            for bad in ({"handshake_threads": 257}, {"max_queued_handshakes": 0}):
                f = d.write("opcuad.json", json.dumps({"connections": bad}))
                proc, log = self.start(["run", "--config", f])
                self.assertEqual(proc.wait(60), 3)
                self.assertIn("/connections/" + next(iter(bad)) + ": out of range", self.output(log))

    def test_runtime_failure_exits_1(self):
        with Dir() as d, socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            url = "opc.tcp://127.0.0.1:%d" % taken.getsockname()[1]
            f = d.write("opcuad.json", json.dumps({"endpoints": [{"url": url}]}))
            proc, log = self.start(["run", "--config", f])
            self.assertEqual(proc.wait(60), 1, self.output(log))

    def test_serves_the_printed_configuration_and_log_level_overrides(self):
        with Dir() as d:
            text = opcuad("print-default-config").stdout.replace("127.0.0.1:4840", "127.0.0.1:0")
            f = d.write("opcuad.json", text)
            d.write("nodes.d/demo.json", opcuad("print-default-config", "--node-file").stdout)
            proc, log = self.start(["run", "--config", f], r"listening on opc\.tcp://127\.0\.0\.1:\d+")
            self.assertIn("listening on", self.output(log))
            # The packaged defaults: half the CPUs (at least one) for handshakes, 256 queued.
            self.assertIn("handshake pool: %d thread(s) at nice 10, at most 256 queued" % max(1, os.cpu_count() // 2),
                          self.output(log))
            self.assertEqual(self.stop(proc), 0, self.output(log))
            # --log-level warn: the file says info, the command line wins; the daemon still serves.
            port = free_port()
            f = d.write("opcuad.json", text.replace("127.0.0.1:0", "127.0.0.1:%d" % port))
            proc, log = self.start(["--log-level", "warn", "--config", f])
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            self.assertEqual(self.stop(proc), 0)
            self.assertNotIn(" info ", self.output(log))


if __name__ == "__main__":
    unittest.main(verbosity=2)
