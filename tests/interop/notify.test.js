// The systemd notification protocol of the real daemon (sd_notify(3)) against a test $NOTIFY_SOCKET, an
// AF_UNIX datagram socket bound by notify_socket.py: READY=1 with a STATUS line once it listens, STATUS
// updates, WATCHDOG=1 pings when WATCHDOG_USEC is set, RELOADING=1 with MONOTONIC_USEC then READY=1
// around a SIGHUP, and STOPPING=1 on SIGTERM.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");
const { startDaemon, until } = require("./daemon");

// Resolves to { path, messages, stop() } once the socket is bound.
async function notifySocket() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-notify-"));
  const socketPath = path.join(dir, "notify");
  const child = spawn("python3", [path.join(__dirname, "notify_socket.py"), socketPath],
                      { stdio: ["ignore", "pipe", "inherit"] });
  const messages = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => messages.push(JSON.parse(line)));
  await until(() => messages[0] === "BOUND", "the notify socket", 10000);
  messages.shift();
  return {
    path: socketPath,
    messages,
    stop() {
      child.kill("SIGTERM");
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const lines = (message) => message.split("\n");
const has = (messages, line) => messages.some((m) => lines(m).includes(line));

test("READY, STATUS, WATCHDOG, RELOADING/READY, STOPPING", async () => {
  const sock = await notifySocket();
  // 400 ms: the daemon pings every 200 ms while every shard beats (at least every 100 ms).
  const daemon = await startDaemon({
    config: { shutdown: { grace_period_s: 1 }, threads: 2 },
    env: { NOTIFY_SOCKET: sock.path, WATCHDOG_USEC: "400000", WATCHDOG_PID: "" },
  });
  try {
    const m = sock.messages;
    await until(() => has(m, "READY=1"), "READY=1");
    const ready = m.find((x) => lines(x).includes("READY=1"));
    assert.match(ready, /^READY=1\nSTATUS=serving: 0 connection\(s\), 0 session\(s\), 0 subscription\(s\)$/);
    // Listening came first: the port was logged before READY=1 was sent.
    assert.match(daemon.output(), /listening on/);

    // Pings: several within a second and a half, each its own datagram.
    const before = m.filter((x) => x === "WATCHDOG=1").length;
    await new Promise((r) => setTimeout(r, 1500));
    const pings = m.filter((x) => x === "WATCHDOG=1").length - before;
    assert.ok(pings >= 4, `${pings} WATCHDOG=1 pings in 1.5 s`);
    // STATUS= refreshed every 2 s.
    await until(() => m.filter((x) => /^STATUS=serving/.test(x)).length >= 1, "a STATUS update", 5000);

    // SIGHUP: RELOADING=1 with the monotonic time, then READY=1 again.
    const at = m.length;
    const monotonicNow = process.hrtime.bigint() / 1000n;  // CLOCK_MONOTONIC on Linux, in µs
    daemon.signal("SIGHUP");
    await until(() => m.slice(at).some((x) => lines(x).includes("READY=1")), "READY=1 after the reload");
    const after = m.slice(at).filter((x) => x !== "WATCHDOG=1" && !/^STATUS=/.test(x));
    assert.match(after[0], /^RELOADING=1\nMONOTONIC_USEC=\d+$/);
    const usec = BigInt(/MONOTONIC_USEC=(\d+)/.exec(after[0])[1]);
    assert.ok(usec >= monotonicNow && usec - monotonicNow < 5000000n, `MONOTONIC_USEC ${usec} vs ${monotonicNow}`);
    assert.match(after[1], /^READY=1\nSTATUS=serving/);

    // SIGTERM with one client connected: STOPPING=1 first, then the countdown in STATUS, exit 0.
    const client = net.connect(Number(new URL(daemon.url.replace("opc.tcp", "http")).port), "127.0.0.1");
    client.on("error", () => {});
    await new Promise((r) => client.on("connect", r));
    await until(() => /event=connection\.accepted/.test(daemon.output()), "the connection");
    const stopAt = m.length;
    daemon.signal("SIGTERM");
    const { code } = await daemon.exited;
    client.destroy();
    assert.equal(code, 0, daemon.output());
    await until(() => has(m.slice(stopAt), "STOPPING=1"), "STOPPING=1");
    const stopping = m.slice(stopAt).find((x) => lines(x).includes("STOPPING=1"));
    assert.match(stopping, /^STOPPING=1\nSTATUS=shutting down in 1 s: 1 connection\(s\)/);
    assert.ok(m.slice(stopAt).some((x) => /^STATUS=shutting down in 0 s/.test(x)), JSON.stringify(m.slice(stopAt)));
  } finally {
    sock.stop();
    daemon.signal("SIGKILL");
  }
});

test("no WATCHDOG_USEC: no pings; WATCHDOG_PID of another process: no pings", async () => {
  for (const env of [{}, { WATCHDOG_USEC: "400000", WATCHDOG_PID: "1" }]) {
    const sock = await notifySocket();
    const daemon = await startDaemon({ config: { shutdown: { grace_period_s: 0 } }, env: { NOTIFY_SOCKET: sock.path, ...env } });
    try {
      await until(() => has(sock.messages, "READY=1"), "READY=1");
      await new Promise((r) => setTimeout(r, 700));
      assert.ok(!sock.messages.includes("WATCHDOG=1"), JSON.stringify(sock.messages));
      daemon.signal("SIGTERM");
      assert.equal((await daemon.exited).code, 0);
    } finally {
      sock.stop();
    }
  }
});
