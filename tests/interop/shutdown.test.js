// Graceful shutdown seen by a node-opcua (2.182.2) client: the daemon gets SIGTERM while the client
// monitors ServerStatus.State and SecondsTillShutdown; the client sees Shutdown (4, Part 5 §12.6) with
// ShutdownReason and a countdown that falls to 0, then its connection closes (ERR BadServerHalted, Part 6
// §7.1.5) and the daemon exits 0. A second SIGTERM during the countdown closes at once.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { AttributeIds, TimestampsToReturn, ClientSubscription, ClientMonitoredItem } = require("node-opcua");
const { startDaemon, until, plainClient } = require("./daemon");

const STATE = "i=2259";            // Server.ServerStatus.State
const SECONDS = "i=2992";          // Server.ServerStatus.SecondsTillShutdown
const REASON = "i=2993";           // Server.ServerStatus.ShutdownReason
const SHUTDOWN = 4;                // ServerState.Shutdown

async function connect(url) {
  const client = plainClient();
  const events = { closed: false, lost: false };
  client.on("close", () => { events.closed = true; });
  client.on("connection_lost", () => { events.lost = true; });
  await client.connect(url);
  const session = await client.createSession();
  return { client, session, events };
}

async function monitor(subscription, nodeId) {
  const item = ClientMonitoredItem.create(
    subscription, { nodeId, attributeId: AttributeIds.Value },
    { samplingInterval: 100, discardOldest: true, queueSize: 10 }, TimestampsToReturn.Both);
  const values = [];
  item.on("changed", (dv) => values.push(dv.value.value));
  await new Promise((resolve, reject) => {
    item.on("initialized", resolve);
    item.on("err", reject);
  });
  return values;
}

test("SIGTERM: State Shutdown, a countdown, a clean close, exit 0", async () => {
  const daemon = await startDaemon({ config: { shutdown: { grace_period_s: 3 } } });
  const { client, session, events } = await connect(daemon.url);
  try {
    const subscription = await ClientSubscription.create(session, {
      requestedPublishingInterval: 100, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
    });
    const states = await monitor(subscription, STATE);
    const seconds = await monitor(subscription, SECONDS);
    await until(() => states.length > 0 && seconds.length > 0, "the initial values");
    assert.equal(states[0], 0, "Running before the signal");
    assert.equal(seconds[0], 0);

    const started = Date.now();
    daemon.signal("SIGTERM");
    await until(() => states.includes(SHUTDOWN), "State = Shutdown", 5000);
    const reason = await session.read({ nodeId: REASON, attributeId: AttributeIds.Value });
    assert.equal(reason.value.value.locale, "en");
    assert.equal(reason.value.value.text, "The server is shutting down (SIGTERM)");
    const status = await session.read({ nodeId: "i=2256", attributeId: AttributeIds.Value });
    assert.equal(status.value.value.state, SHUTDOWN, "the ServerStatus structure follows its components");

    const { code, signal } = await daemon.exited;
    const took = Date.now() - started;
    assert.equal(code, 0, "exit 0:\n" + daemon.output());
    assert.equal(signal, null);
    // 3 s of countdown, then a bounded close: well inside systemd's 90 s stop timeout.
    assert.ok(took >= 2500 && took < 10000, `shut down after ${took} ms`);
    // The countdown as the client saw it: it starts at the grace period (or just below, if a sample fell
    // after the first tick) and falls, one step at a time, to 0.
    const countdown = seconds.slice(1);
    assert.ok(countdown.length >= 3, `countdown ${JSON.stringify(seconds)}`);
    assert.ok(countdown[0] >= 2 && countdown[0] <= 3, `countdown ${JSON.stringify(seconds)}`);
    for (let i = 1; i < countdown.length; ++i) {
      assert.ok(countdown[i] < countdown[i - 1], `decreasing: ${JSON.stringify(seconds)}`);
    }
    assert.equal(countdown[countdown.length - 1], 0, `ends at 0: ${JSON.stringify(seconds)}`);

    await until(() => events.closed || events.lost, "the client's connection to close", 5000);
    const log = daemon.output();
    assert.match(log, /event=shutdown\.started signal=SIGTERM grace_period_s=3 connections=1 sessions=1 subscriptions=1/);
    assert.match(log, /event=shutdown\.closing sessions=1 connections=1/);
    assert.doesNotMatch(log, /event=shutdown\.timeout/, "every connection flushed and closed by itself");
    assert.match(log, /stopped/);
  } finally {
    await client.disconnect().catch(() => {});
  }
});

test("a second SIGTERM during the countdown shuts down at once", async () => {
  const daemon = await startDaemon({ config: { shutdown: { grace_period_s: 30 } } });
  const { client, session } = await connect(daemon.url);
  try {
    daemon.signal("SIGTERM");
    await until(() => /event=shutdown\.started/.test(daemon.output()), "the shutdown to start");
    const state = await session.read({ nodeId: STATE, attributeId: AttributeIds.Value });
    assert.equal(state.value.value, SHUTDOWN);
    const seconds = await session.read({ nodeId: SECONDS, attributeId: AttributeIds.Value });
    assert.ok(seconds.value.value > 25 && seconds.value.value <= 30, `SecondsTillShutdown ${seconds.value.value}`);
    const started = Date.now();
    daemon.signal("SIGTERM");
    const { code } = await daemon.exited;
    assert.equal(code, 0, daemon.output());
    assert.ok(Date.now() - started < 5000, "no waiting for the rest of the 30 s");
    assert.match(daemon.output(), /event=shutdown\.now signal=SIGTERM/);
  } finally {
    await client.disconnect().catch(() => {});
  }
});

test("grace_period_s 0: SIGINT closes at once, exit 0", async () => {
  const daemon = await startDaemon({ config: { shutdown: { grace_period_s: 0 } } });
  const { client, events } = await connect(daemon.url);
  try {
    const started = Date.now();
    daemon.signal("SIGINT");
    const { code } = await daemon.exited;
    assert.equal(code, 0, daemon.output());
    assert.ok(Date.now() - started < 4000);
    await until(() => events.closed || events.lost, "the client's connection to close", 5000);
    assert.match(daemon.output(), /event=shutdown\.started signal=SIGINT grace_period_s=0/);
  } finally {
    await client.disconnect().catch(() => {});
  }
});

test("no client connected: no countdown to wait for", async () => {
  const daemon = await startDaemon({ config: { shutdown: { grace_period_s: 30 } } });
  const started = Date.now();
  daemon.signal("SIGTERM");
  const { code } = await daemon.exited;
  assert.equal(code, 0, daemon.output());
  assert.ok(Date.now() - started < 4000, "no waiting for the 30 s");
  assert.match(daemon.output(), /event=shutdown\.started signal=SIGTERM grace_period_s=0 connections=0/);
});

test("the countdown ends when the last client leaves", async () => {
  const daemon = await startDaemon({ config: { shutdown: { grace_period_s: 30 } } });
  const { client, session } = await connect(daemon.url);
  daemon.signal("SIGTERM");
  await until(() => /event=shutdown\.started/.test(daemon.output()), "the shutdown to start");
  const state = await session.read({ nodeId: STATE, attributeId: AttributeIds.Value });
  assert.equal(state.value.value, SHUTDOWN);
  // What a client should do on seeing Shutdown: leave in order.
  const started = Date.now();
  await session.close();
  await client.disconnect();
  const { code } = await daemon.exited;
  assert.equal(code, 0, daemon.output());
  assert.ok(Date.now() - started < 4000, "no waiting for the rest of the 30 s");
  assert.match(daemon.output(), /event=shutdown\.clients_gone seconds_left=\d+/);
});
