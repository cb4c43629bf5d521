// node-opcua (2.182.2) losing its connection: the client reaches the daemon through a TCP relay in this
// process, the relay cuts every connection, and the client reconnects on its own. The daemon must let
// the session be re-activated on the new SecureChannel (Part 4 §5.6.3), keep its subscription, and keep
// delivering changes: the monitored item sees a write made after the reconnection. And a session closed
// with deleteSubscriptions FALSE leaves its subscription for the next session to take over.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const net = require("node:net");
const { AttributeIds, DataType, StatusCodes, TimestampsToReturn, ClientSubscription, ClientMonitoredItem } = require("node-opcua");
const { startDaemon, until, plainClient, closeAll } = require("./daemon");

const id = (path) => `ns=2;s=Interop.${path}`;

let daemon;

test.before(async () => {
  daemon = await startDaemon({});
});

test.after(async () => {
  await closeAll({ daemon });
});


// A TCP relay on a free port to the daemon's port; cut() destroys every connection it carries.
async function startRelay(targetUrl) {
  const target = new URL(targetUrl.replace("opc.tcp:", "http:"));
  const pairs = new Set();
  let accepted = 0;
  const server = net.createServer((inbound) => {
    accepted += 1;
    const outbound = net.connect(Number(target.port), target.hostname);
    const pair = { inbound, outbound };
    pairs.add(pair);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      pairs.delete(pair);
    };
    inbound.on("error", drop).on("close", drop);
    outbound.on("error", drop).on("close", drop);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `opc.tcp://127.0.0.1:${server.address().port}`,
    accepted: () => accepted,
    cut() {
      for (const { inbound, outbound } of [...pairs]) {
        inbound.destroy();
        outbound.destroy();
      }
      pairs.clear();
    },
    close: () => new Promise((resolve) => {
      for (const { inbound, outbound } of pairs) {
        inbound.destroy();
        outbound.destroy();
      }
      server.close(resolve);
    }),
  };
}

test("a cut connection: the client reconnects, its session and subscription carry on", async () => {
  const relay = await startRelay(daemon.url);
  const client = plainClient({ connectionStrategy: { maxRetry: 20, initialDelay: 100, maxDelay: 500 } });
  let reconnected = 0;
  client.on("after_reconnection", () => { reconnected += 1; });
  await client.connect(relay.url);
  const session = await client.createSession();
  try {
    const nodeId = id("Scalar.Double");
    const write = async (value) => {
      const s = await session.write({ nodeId, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value } } });
      assert.equal(s, StatusCodes.Good);
    };
    await write(10.5);
    const subscription = await ClientSubscription.create(session, {
      requestedPublishingInterval: 50, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
    });
    const item = ClientMonitoredItem.create(
      subscription, { nodeId, attributeId: AttributeIds.Value },
      { samplingInterval: 20, discardOldest: true, queueSize: 10 }, TimestampsToReturn.Both);
    const values = [];
    item.on("changed", (dv) => values.push(dv.value.value));
    await until(() => values.includes(10.5), "the initial value", 10000);
    const subscriptionId = subscription.subscriptionId;  // the server's id, known once it answered

    const sessionId = session.sessionId.toString();
    relay.cut();
    await until(() => reconnected >= 1, "the client's reconnection", 10000);
    assert.ok(relay.accepted() >= 2, "the client opened a new connection");

    // Same session (re-activated on the new channel), same subscription, and changes still arrive.
    assert.equal(session.sessionId.toString(), sessionId);
    assert.equal(subscription.subscriptionId, subscriptionId);
    await write(11.5);
    await until(() => values.includes(11.5), "a write made after the reconnection", 10000);
    await write(12.5);
    await until(() => values.includes(12.5), "a second write after the reconnection", 10000);
    await subscription.terminate();
  } finally {
    await session.close().catch(() => {});
    await client.disconnect();
    await relay.close();
  }
});

test("a session closed without deleting its subscriptions: the next session takes them over", async () => {
  const client = plainClient();
  await client.connect(daemon.url);
  try {
    const first = await client.createSession();
    const created = await first.createSubscription({
      requestedPublishingInterval: 100, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
    });
    assert.equal(created.responseHeader.serviceResult, StatusCodes.Good);
    const subscriptionId = created.subscriptionId;
    await first.close(false);  // deleteSubscriptions FALSE: kept until their lifetime ends (Part 4 §5.6.4)

    const second = await client.createSession();
    try {
      const response = await second.transferSubscriptions({ subscriptionIds: [subscriptionId], sendInitialValues: true });
      assert.equal(response.results[0].statusCode, StatusCodes.Good);
      const deleted = await second.deleteSubscriptions({ subscriptionIds: [subscriptionId] });
      assert.equal(deleted.results[0], StatusCodes.Good);
    } finally {
      await second.close();
    }
  } finally {
    await client.disconnect();
  }
});
