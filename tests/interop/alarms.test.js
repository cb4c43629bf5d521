// Alarms & Conditions (Part 9) seen by a node-opcua (2.182.2) client against the real daemon
// (docs/CONFIGURATION.md, "Alarms"): an exclusive limit alarm judged where its input is written, its
// condition events on the Server object, Acknowledge with the EventId an event carried (Part 9 §5.7.3),
// ConditionRefresh (§5.5.7), the alarm's ack_roles, and the condition state kept across a restart in
// $STATE_DIRECTORY/conditions.state.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const {
  AttributeIds, TimestampsToReturn, ClientSubscription, ClientMonitoredItem, EventFilter,
  SimpleAttributeOperand, NodeId, DataType, StatusCodes, UserTokenType, coerceQualifiedName,
} = require("node-opcua");
const { startDaemon, until, plainClient, BIN } = require("./daemon");
const { execFileSync } = require("node:child_process");

const NS = "urn:opcuad:interop:alarms";
const SERVER = "i=2253";
const BASE_EVENT = "i=2041";
const CONDITION_TYPE = "i=2782";
const ACKNOWLEDGEABLE = "i=2881";
const ALARM_CONDITION = "i=2915";
const EXCLUSIVE_LIMIT = "i=9341";
const REFRESH_START = "ns=0;i=2787";
const REFRESH_END = "ns=0;i=2788";
const CONDITION_REFRESH = "i=3875";  // ConditionType.ConditionRefresh
const ACKNOWLEDGE = "i=9111";        // AcknowledgeableConditionType.Acknowledge

const LIMITS = { high_high: 95, high: 85, low: 10, low_low: 5 };
const SEVERITY = { high_high: 850, high: 650, low: 640, low_low: 840 };

// The node file: Plant (a notifier) / Tank1 / Level with the exclusive limit alarm LevelLimits, and
// Pressure whose alarm only Supervisors may acknowledge. `level` is Level's start value.
function nodeFile(level) {
  const alarm = (name, extra = {}) => ({
    name, type: "exclusive_limit", limits: LIMITS, severity: SEVERITY,
    message: "{name}: level {value} is {state}", ...extra,
  });
  return JSON.stringify({
    namespaces: [NS],
    nodes: [{
      kind: "folder", name: "Plant", event_notifier: true, children: [{
        kind: "object", name: "Tank1", children: [
          { kind: "variable", name: "Level", data_type: "Double", value: level, access: ["read", "write"],
            alarms: [alarm("LevelLimits")] },
          { kind: "variable", name: "Pressure", data_type: "Double", value: 50, access: ["read", "write"],
            alarms: [alarm("PressureLimits", { ack_roles: ["Supervisor"] })] },
        ],
      }],
    }],
  }, null, 1);
}

function hashPassword(password) {
  return execFileSync(BIN, ["--hash-password"], { input: password + "\n" }).toString().trim();
}

function clause(type, browsePath, attributeId = AttributeIds.Value) {
  return new SimpleAttributeOperand({
    typeDefinitionId: NodeId.resolveNodeId(type),
    browsePath: browsePath.map((n) => coerceQualifiedName(n)),
    attributeId,
  });
}

// The select list, and the names the tests read the fields by.
const SELECT = [
  ["conditionId", clause(CONDITION_TYPE, [], AttributeIds.NodeId)],
  ["eventId", clause(BASE_EVENT, ["EventId"])],
  ["eventType", clause(BASE_EVENT, ["EventType"])],
  ["message", clause(BASE_EVENT, ["Message"])],
  ["severity", clause(BASE_EVENT, ["Severity"])],
  ["active", clause(ALARM_CONDITION, ["ActiveState", "Id"])],
  ["acked", clause(ACKNOWLEDGEABLE, ["AckedState", "Id"])],
  ["retain", clause(CONDITION_TYPE, ["Retain"])],
  ["limitState", clause(EXCLUSIVE_LIMIT, ["LimitState", "CurrentState"])],
  ["comment", clause(CONDITION_TYPE, ["Comment"])],
];

function named(fields) {
  const e = {};
  SELECT.forEach(([name], i) => { e[name] = fields[i].value; });
  e.eventType = e.eventType && e.eventType.toString();
  e.conditionId = e.conditionId && e.conditionId.toString();
  return e;
}

// An event item on the Server object in a new subscription of `session`: { subscription, events }.
async function subscribeEvents(session) {
  const subscription = await ClientSubscription.create(session, {
    requestedPublishingInterval: 50, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
    maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
  });
  const item = ClientMonitoredItem.create(subscription,
    { nodeId: SERVER, attributeId: AttributeIds.EventNotifier },
    { samplingInterval: 0, discardOldest: true, queueSize: 100,
      filter: new EventFilter({ selectClauses: SELECT.map(([, c]) => c) }) },
    TimestampsToReturn.Neither);
  const events = [];
  item.on("changed", (fields) => events.push(named(fields)));
  await new Promise((resolve, reject) => { item.on("initialized", resolve); item.on("err", reject); });
  return { subscription, events };
}

const writeDouble = (session, nodeId, value) => session.write({
  nodeId, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value } },
});

const read = async (session, nodeId) => {
  const dv = await session.read({ nodeId, attributeId: AttributeIds.Value });
  assert.equal(dv.statusCode, StatusCodes.Good, `Read ${nodeId}`);
  return dv.value.value;
};

// Acknowledge (Part 9 §5.7.3) on `condition`: the CallMethodResult's StatusCode.
async function acknowledge(session, condition, eventId, comment = "") {
  const result = await session.call({
    objectId: condition, methodId: ACKNOWLEDGE,
    inputArguments: [
      { dataType: DataType.ByteString, value: eventId },
      { dataType: DataType.LocalizedText, value: { text: comment } },
    ],
  });
  return result.statusCode;
}

// The events of `condition` after the first `from` of `events`, once there are `count` of them.
async function conditionEvents(events, condition, from, count, what) {
  const mine = () => events.slice(from).filter((e) => e.conditionId === condition);
  await until(() => mine().length >= count, what, 3000);
  return mine();
}

// Connects a client to `daemon` and runs `body(session, ns, client)` (`ns`: the node file's namespace
// index), then closes the session and stops the daemon, which must exit cleanly.
async function withSession(daemon, body) {
  const client = plainClient();
  try {
    await client.connect(daemon.url);
    const session = await client.createSession();
    const ns = (await session.readNamespaceArray()).indexOf(NS);
    assert.ok(ns > 0, "the node file's namespace is in the NamespaceArray");
    await body(session, ns, client);
    await session.close();
  } finally {
    await client.disconnect().catch(() => {});
    const { code } = await daemon.stop();
    assert.equal(code, 0, "opcuad exits cleanly on SIGTERM:\n" + daemon.output());
  }
}

test("alarms: limit events, Acknowledge, ConditionRefresh and ack_roles", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-alarms-"));
  const nodes = path.join(dir, "alarms.json");
  fs.writeFileSync(nodes, nodeFile(50));
  const daemon = await startDaemon({
    config: {
      node_files: [nodes],
      users: [
        { name: "sam", password_hash: hashPassword("supervise"), roles: ["Supervisor"] },
        { name: "otto", password_hash: hashPassword("operate"), roles: ["Operator"] },
      ],
    },
  });
  try {
    await withSession(daemon, async (session, ns, client) => {
      const LEVEL = `ns=${ns};s=Plant.Tank1.Level`;
      const CONDITION = `${LEVEL}.LevelLimits`;
      const { subscription, events } = await subscribeEvents(session);

      await t.test("a HighHigh event, Acknowledge with its EventId, back to normal", async () => {
        assert.equal(await read(session, `${CONDITION}.ActiveState.Id`), false, "inactive at start");
        assert.equal(await read(session, `${CONDITION}.AckedState.Id`), true, "acknowledged at start");

        let from = events.length;
        assert.equal(await writeDouble(session, LEVEL, 97.5), StatusCodes.Good);
        const [raised] = await conditionEvents(events, CONDITION, from, 1, "the HighHigh event");
        assert.equal(raised.eventType, `ns=0;${EXCLUSIVE_LIMIT}`);
        assert.equal(raised.active, true);
        assert.equal(raised.acked, false);
        assert.equal(raised.retain, true);
        assert.equal(raised.limitState.text, "HighHigh");
        assert.equal(raised.severity, SEVERITY.high_high);
        assert.equal(raised.message.text, "LevelLimits: level 97.5 is HighHigh");
        assert.ok(Buffer.isBuffer(raised.eventId) && raised.eventId.length > 0, "an EventId");
        // The condition's own variables say the same.
        assert.equal(await read(session, `${CONDITION}.ActiveState.Id`), true);
        assert.deepEqual(await read(session, `${CONDITION}.EventId`), raised.eventId);

        from = events.length;
        assert.equal(await acknowledge(session, CONDITION, raised.eventId, "seen"), StatusCodes.Good);
        const [acked] = await conditionEvents(events, CONDITION, from, 1, "the acknowledgement's event");
        assert.equal(acked.acked, true);
        assert.equal(acked.active, true);
        assert.equal(acked.retain, true, "still active, so still retained");
        assert.equal(acked.comment.text, "seen");
        assert.notDeepEqual(acked.eventId, raised.eventId, "a new event has a new EventId");
        assert.equal(await read(session, `${CONDITION}.AckedState.Id`), true);

        // The newest event's EventId names a state already acknowledged.
        assert.equal(await acknowledge(session, CONDITION, acked.eventId), StatusCodes.BadConditionBranchAlreadyAcked);
        // An EventId the server never issued.
        assert.equal(await acknowledge(session, CONDITION, Buffer.alloc(16, 0xa5)), StatusCodes.BadEventIdUnknown);

        from = events.length;
        assert.equal(await writeDouble(session, LEVEL, 50), StatusCodes.Good);
        const [normal] = await conditionEvents(events, CONDITION, from, 1, "the return to normal");
        assert.equal(normal.active, false);
        assert.equal(normal.acked, true);
        assert.equal(normal.retain, false, "inactive and acknowledged: no longer retained");
        assert.equal(normal.message.text, "LevelLimits: level 50 is Inactive");
    });

    await t.test("ConditionRefresh: RefreshStart, the retained condition with its last EventId, RefreshEnd", async () => {
      let from = events.length;
      assert.equal(await writeDouble(session, LEVEL, 90), StatusCodes.Good);
      const [raised] = await conditionEvents(events, CONDITION, from, 1, "the High event");
      assert.equal(raised.limitState.text, "High");
      assert.equal(raised.severity, SEVERITY.high);
      assert.equal(raised.acked, false);

      from = events.length;
      const result = await session.call({
        objectId: CONDITION_TYPE, methodId: CONDITION_REFRESH,
        inputArguments: [{ dataType: DataType.UInt32, value: subscription.subscriptionId }],
      });
      assert.equal(result.statusCode, StatusCodes.Good);
      await until(() => events.slice(from).some((e) => e.eventType === REFRESH_END), "the RefreshEndEvent", 3000);
      const refresh = events.slice(from);
      // Only LevelLimits is retained (PressureLimits is inactive and acknowledged).
      assert.deepEqual(refresh.map((e) => e.eventType), [REFRESH_START, `ns=0;${EXCLUSIVE_LIMIT}`, REFRESH_END]);
      const [, condition] = refresh;
      assert.equal(condition.conditionId, CONDITION);
      assert.deepEqual(condition.eventId, raised.eventId, "the EventId of the condition's last event");
      assert.equal(condition.active, true);
      assert.equal(condition.acked, false);
      assert.equal(condition.limitState.text, "High");

      // A subscription this session does not hold.
      const foreign = await session.call({
        objectId: CONDITION_TYPE, methodId: CONDITION_REFRESH,
        inputArguments: [{ dataType: DataType.UInt32, value: subscription.subscriptionId + 1000 }],
      });
      assert.equal(foreign.statusCode, StatusCodes.BadSubscriptionIdInvalid);
    });

    await t.test("ack_roles: an Operator is refused, a Supervisor acknowledges", async () => {
      const PRESSURE = `ns=${ns};s=Plant.Tank1.Pressure`;
      const GUARDED = `${PRESSURE}.PressureLimits`;
      const from = events.length;
      assert.equal(await writeDouble(session, PRESSURE, 3), StatusCodes.Good);
      const [raised] = await conditionEvents(events, GUARDED, from, 1, "the LowLow event");
      assert.equal(raised.limitState.text, "LowLow");
      assert.equal(raised.severity, SEVERITY.low_low);

      // Anonymous and the Operator lack the role; neither call changes the condition.
      assert.equal(await acknowledge(session, GUARDED, raised.eventId), StatusCodes.BadUserAccessDenied);
      const operator = await client.createSession({ type: UserTokenType.UserName, userName: "otto", password: "operate" });
      try {
        assert.equal(await acknowledge(operator, GUARDED, raised.eventId), StatusCodes.BadUserAccessDenied);
      } finally {
        await operator.close();
      }
      assert.equal(await read(session, `${GUARDED}.AckedState.Id`), false, "the refused calls acknowledged nothing");

      const supervisor = await client.createSession({ type: UserTokenType.UserName, userName: "sam", password: "supervise" });
      try {
        assert.equal(await acknowledge(supervisor, GUARDED, raised.eventId, "on it"), StatusCodes.Good);
        assert.equal(await read(supervisor, `${GUARDED}.AckedState.Id`), true);
        assert.equal((await read(supervisor, `${GUARDED}.Comment`)).text, "on it");
      } finally {
        await supervisor.close();
      }
    });

    await subscription.terminate();
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("alarms: an acknowledgement and its comment survive a restart (STATE_DIRECTORY)", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-alarms-state-"));
  const stateDir = path.join(dir, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  const stateFile = path.join(stateDir, "conditions.state");
  const nodes = path.join(dir, "alarms.json");
  fs.writeFileSync(nodes, nodeFile(97));  // above high_high: active from the start, and again after the restart
  const start = () => startDaemon({ config: { node_files: [nodes] }, env: { STATE_DIRECTORY: stateDir } });

  let lastEventId;
  try {
    let daemon = await start();
    assert.match(daemon.output(), /event=state\.none /, "no state file yet");
    await withSession(daemon, async (session, ns) => {
      const CONDITION = `ns=${ns};s=Plant.Tank1.Level.LevelLimits`;
      assert.equal(await read(session, `${CONDITION}.ActiveState.Id`), true, "judged from the start value");
      assert.equal(await read(session, `${CONDITION}.AckedState.Id`), false);
      const eventId = await read(session, `${CONDITION}.EventId`);
      assert.equal(await acknowledge(session, CONDITION, eventId, "valve checked"), StatusCodes.Good);
      lastEventId = await read(session, `${CONDITION}.EventId`);
      assert.notDeepEqual(lastEventId, eventId);
      // Written within about a second of the change, not only at shutdown.
      await until(() => fs.existsSync(stateFile) && fs.readFileSync(stateFile).includes("valve checked"),
        "the acknowledgement in the state file", 3000);
    });
    assert.equal(fs.statSync(stateFile).mode & 0o777, 0o600, "the state file is the daemon's only");

    daemon = await start();
    assert.match(daemon.output(), /event=state\.loaded file=\S*conditions\.state conditions=2 records=2/);
    await withSession(daemon, async (session, ns) => {
      const CONDITION = `ns=${ns};s=Plant.Tank1.Level.LevelLimits`;
      assert.equal(await read(session, `${CONDITION}.ActiveState.Id`), true);
      assert.equal(await read(session, `${CONDITION}.AckedState.Id`), true, "the acknowledgement was restored");
      assert.equal((await read(session, `${CONDITION}.Comment`)).text, "valve checked");
      assert.equal((await read(session, `${CONDITION}.LimitState.CurrentState`)).text, "HighHigh");
      assert.deepEqual(await read(session, `${CONDITION}.EventId`), lastEventId, "the last EventId was restored");
      // The EventId a client saw before the restart still names the condition's state: acknowledged already.
      assert.equal(await acknowledge(session, CONDITION, lastEventId), StatusCodes.BadConditionBranchAlreadyAcked);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
