// node-opcua (2.182.2) subscriptions against the real daemon: a simulated and a written variable are
// monitored, the initial value and every change arrive, items are modified and deleted, and an idle
// subscription sends keep-alives. Every wait is "until it happens, at most 5 s".
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { AttributeIds, DataType, StatusCodes, TimestampsToReturn, ClientSubscription, ClientMonitoredItem } = require("node-opcua");
const { startDaemon, until, plainClient, closeAll } = require("./daemon");

const id = (path) => `ns=2;s=Interop.${path}`;

let daemon;
let client;
let session;

test.before(async () => {
  daemon = await startDaemon({});
  client = plainClient();
  await client.connect(daemon.url);
  session = await client.createSession();
});

test.after(async () => {
  await closeAll({ session, client, daemon });
});


async function subscribe(options = {}) {
  return ClientSubscription.create(session, {
    requestedPublishingInterval: 50,
    requestedLifetimeCount: 600,
    requestedMaxKeepAliveCount: 10,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
    priority: 1,
    ...options,
  });
}

async function monitor(subscription, nodeId, samplingInterval = 50, queueSize = 10) {
  const item = ClientMonitoredItem.create(
    subscription, { nodeId, attributeId: AttributeIds.Value },
    { samplingInterval, discardOldest: true, queueSize }, TimestampsToReturn.Both);
  const values = [];
  item.on("changed", (dv) => values.push(dv));
  await new Promise((resolve, reject) => {
    item.once("initialized", resolve);
    item.once("err", (e) => reject(new Error(String(e))));
  });
  return { item, values };
}

test("a written variable: the initial value, then every write", async () => {
  const subscription = await subscribe();
  try {
    const nodeId = id("Scalar.Double");
    const write = async (value) => {
      const s = await session.write({ nodeId, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value } } });
      assert.equal(s, StatusCodes.Good);
    };
    await write(1.5);
    const { item, values } = await monitor(subscription, nodeId, 20, 100);
    await until(() => values.length >= 1, "the initial value");
    assert.equal(values[0].value.value, 1.5);
    for (const v of [2.5, 3.5, 4.5]) {
      await write(v);
      await until(() => values.some((dv) => dv.value.value === v), `the write of ${v}`);
    }
    // Every write arrives, in order, once.
    assert.deepEqual(values.map((dv) => dv.value.value), [1.5, 2.5, 3.5, 4.5]);

    // Modify: a new sampling interval is revised and reported back.
    const result = await item.modify({ samplingInterval: 200, queueSize: 5, discardOldest: true });
    assert.equal(result.statusCode, StatusCodes.Good);
    assert.equal(result.revisedSamplingInterval, 200);
    await write(5.5);
    await until(() => values.some((dv) => dv.value.value === 5.5), "a write after modify");

    // Delete: no more notifications.
    await item.terminate();
    const count = values.length;
    await write(6.5);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(values.length, count);
  } finally {
    await subscription.terminate();
  }
});

test("a simulated variable changes at every sample", async () => {
  const subscription = await subscribe({ requestedPublishingInterval: 100 });
  try {
    const { values } = await monitor(subscription, id("Sine"), 100, 10);
    await until(() => values.length >= 10, "ten samples of the sine");
    const distinct = new Set(values.map((dv) => dv.value.value));
    assert.ok(distinct.size >= 8, `distinct values: ${[...distinct]}`);
    for (const dv of values) {
      assert.ok(dv.value.value >= -1 && dv.value.value <= 1);
      assert.equal(dv.statusCode.value & 0xC0000000, 0);
    }
  } finally {
    await subscription.terminate();
  }
});

test("sampling interval 0 on a simulated variable: the simulator's writes wake the item", async () => {
  const subscription = await subscribe({ requestedPublishingInterval: 100 });
  try {
    const { item, values } = await monitor(subscription, id("Sine"), 0, 100);
    assert.equal(item.monitoringParameters.samplingInterval, 0);  // exception-based, not revised up
    await until(() => values.length >= 8, "eight simulated changes");  // the simulator writes every 100 ms
    const times = values.map((dv) => dv.sourceTimestamp.getTime());
    for (let i = 1; i < times.length; ++i) assert.ok(times[i] > times[i - 1], "each change once, in order");
  } finally {
    await subscription.terminate();
  }
});

test("an idle subscription sends keep-alives", async () => {
  const subscription = await subscribe({ requestedPublishingInterval: 20, requestedMaxKeepAliveCount: 3 });
  try {
    let keepAlives = 0;
    subscription.on("keepalive", () => keepAlives++);
    await until(() => keepAlives >= 3, "three keep-alives");
  } finally {
    await subscription.terminate();
  }
});

test("sampling interval 0: writes wake the item, every write arrives", async () => {
  const subscription = await subscribe({ requestedPublishingInterval: 20 });
  try {
    const nodeId = id("Scalar.Int32");
    const write = async (value) => {
      const s = await session.write({ nodeId, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Int32, value } } });
      assert.equal(s, StatusCodes.Good);
    };
    await write(100);
    const { item, values } = await monitor(subscription, nodeId, 0, 100);
    assert.equal(item.monitoringParameters.samplingInterval, 0, "revised to exception-based");
    await until(() => values.length >= 1, "the initial value");
    // Writes back to back, without waiting for a notification in between: none is lost.
    for (let v = 101; v <= 110; ++v) await write(v);
    await until(() => values.length >= 11, "every write");
    assert.deepEqual(values.map((dv) => dv.value.value), [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110]);
  } finally {
    await subscription.terminate();
  }
});

test("TransferSubscriptions to a session of a second connection", async () => {
  const subscription = await subscribe();
  const client2 = plainClient();
  await client2.connect(daemon.url);
  const session2 = await client2.createSession();
  try {
    const { values } = await monitor(subscription, id("Scalar.Double"), 20, 10);
    await until(() => values.length >= 1, "the initial value");
    let transferred = false;
    subscription.on("status_changed", (status) => {
      if (status === StatusCodes.GoodSubscriptionTransferred) transferred = true;
    });
    const response = await session2.transferSubscriptions({
      subscriptionIds: [subscription.subscriptionId, 987654], sendInitialValues: true,
    });
    assert.equal(response.results.length, 2);
    assert.equal(response.results[0].statusCode, StatusCodes.Good);
    assert.equal(response.results[1].statusCode, StatusCodes.BadSubscriptionIdInvalid);
    await until(() => transferred, "GoodSubscriptionTransferred on the old session");
    // The subscription now belongs to the second session: it deletes it, the first cannot.
    const deleted = await session2.deleteSubscriptions({ subscriptionIds: [subscription.subscriptionId] });
    assert.equal(deleted.results[0], StatusCodes.Good);
  } finally {
    await subscription.terminate().catch(() => {});
    await session2.close();
    await client2.disconnect();
  }
});

test("Call: GetMonitoredItems returns the handles, ResendData resends the current values", async () => {
  const subscription = await subscribe();
  try {
    const nodeId = id("Scalar.Double");
    const { item, values } = await monitor(subscription, nodeId, 20, 10);
    await until(() => values.length >= 1, "the initial value");
    const call = (methodId, subscriptionId, dataType = DataType.UInt32) => session.call({
      objectId: "ns=0;i=2253", methodId,
      inputArguments: [{ dataType, value: subscriptionId }],
    });
    const got = await call("ns=0;i=11492", subscription.subscriptionId);
    assert.equal(got.statusCode, StatusCodes.Good);
    assert.equal(got.outputArguments.length, 2);
    assert.deepEqual(Array.from(got.outputArguments[0].value), [item.monitoredItemId]);
    assert.deepEqual(Array.from(got.outputArguments[1].value), [item.monitoringParameters.clientHandle]);

    const wrongType = await call("ns=0;i=11492", subscription.subscriptionId, DataType.Double);
    assert.equal(wrongType.statusCode, StatusCodes.BadInvalidArgument);
    assert.equal(wrongType.inputArgumentResults[0], StatusCodes.BadTypeMismatch);

    // Nothing changes, yet ResendData makes the next Publish carry the current value again.
    const before = values.length;
    const resent = await call("ns=0;i=12873", subscription.subscriptionId);
    assert.equal(resent.statusCode, StatusCodes.Good);
    await until(() => values.length > before, "the resent value");
    assert.equal(values[values.length - 1].value.value, values[before - 1].value.value);

    const unknown = await call("ns=0;i=12873", 12345);
    assert.equal(unknown.statusCode, StatusCodes.BadSubscriptionIdInvalid);
  } finally {
    await subscription.terminate();
  }
});
