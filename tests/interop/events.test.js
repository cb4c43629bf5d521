// Events seen by a node-opcua (2.182.2) client (Part 4 §5.12.1, §7.22.3): an event monitored item on the
// Server object with the select clauses a .NET-style alarm client sends (its first one the ConditionId:
// ConditionType, an empty browse path, the NodeId attribute) and an OfType where clause. A SIGHUP reload
// that adds and removes a node brings a GeneralModelChangeEvent whose Changes list both (Part 5 §12.16);
// the /metrics event counters follow; SIGTERM brings a SystemStatusChangeEvent with SystemState Shutdown
// before the connection closes.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");
const {
  AttributeIds, TimestampsToReturn, ClientSubscription, ClientMonitoredItem, EventFilter, ContentFilter,
  FilterOperator, LiteralOperand, SimpleAttributeOperand, NodeId, DataType, Variant, coerceQualifiedName,
  DataChangeFilter,
} = require("node-opcua");
const { startDaemon, until, plainClient } = require("./daemon");

const NS = "urn:opcuad:interop:nodes";
const BASE_EVENT = "i=2041";
const CONDITION_TYPE = "i=2782";
const GENERAL_MODEL_CHANGE = "i=2133";
const SYSTEM_STATUS_CHANGE = "i=11446";
const SHUTDOWN = 4;  // ServerState.Shutdown (Part 5 §12.6)

function nodeFile(names) {
  const children = names.map((name) => ({ kind: "variable", name, data_type: "Double", value: 1.0 }));
  return JSON.stringify({ namespaces: [NS], nodes: [{ kind: "folder", name: "Events", children }] }, null, 1);
}

function clause(type, browsePath, attributeId = AttributeIds.Value) {
  return new SimpleAttributeOperand({
    typeDefinitionId: NodeId.resolveNodeId(type),
    browsePath: browsePath.map((n) => coerceQualifiedName(n)),
    attributeId,
  });
}

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = "";
      res.on("data", (c) => { body += c; });
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

test("events: a .NET-style select list, a model change after SIGHUP, the shutdown status event", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-events-"));
  const nodes = path.join(dir, "events.json");
  fs.writeFileSync(nodes, nodeFile(["A", "Gone"]));
  const daemon = await startDaemon({
    config: { node_files: [nodes], http: { listen: "127.0.0.1:0" }, shutdown: { grace_period_s: 3 } },
  });
  const client = plainClient();
  let closed = false;
  client.on("close", () => { closed = true; });
  try {
    await client.connect(daemon.url);
    const session = await client.createSession();
    const subscription = await ClientSubscription.create(session, {
      requestedPublishingInterval: 50, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
    });
    const select = [
      clause(CONDITION_TYPE, [], AttributeIds.NodeId),  // the ConditionId: null for events that are not conditions
      clause(BASE_EVENT, ["EventId"]),
      clause(BASE_EVENT, ["EventType"]),
      clause(BASE_EVENT, ["SourceName"]),
      clause(BASE_EVENT, ["Time"]),
      clause(BASE_EVENT, ["Message"]),
      clause(BASE_EVENT, ["Severity"]),
      clause(GENERAL_MODEL_CHANGE, ["Changes"]),
      clause(SYSTEM_STATUS_CHANGE, ["SystemState"]),
      clause(BASE_EVENT, ["NoSuchField"]),
    ];
    const where = new ContentFilter({
      elements: [{
        filterOperator: FilterOperator.OfType,
        filterOperands: [new LiteralOperand({ value: new Variant({ dataType: DataType.NodeId, value: NodeId.resolveNodeId(BASE_EVENT) }) })],
      }],
    });
    const item = ClientMonitoredItem.create(subscription,
      { nodeId: "i=2253", attributeId: AttributeIds.EventNotifier },
      { samplingInterval: 0, discardOldest: true, queueSize: 100, filter: new EventFilter({ selectClauses: select, whereClause: where }) },
      TimestampsToReturn.Neither);
    const events = [];
    item.on("changed", (fields) => events.push(fields));
    await new Promise((resolve, reject) => { item.on("initialized", resolve); item.on("err", reject); });
    // Every clause resolves (a path no event type declares is Good too and selects null), so opcuad leaves
    // the EventFilterResult out (Part 4 §7.22.3).
    const result = item.filterResult;
    assert.ok(!result || !result.selectClauseResults || result.selectClauseResults.length === 0,
      `no EventFilterResult expected: ${result}`);

    // A reload that adds B and removes Gone.
    fs.writeFileSync(nodes, nodeFile(["A", "B"]));
    daemon.signal("SIGHUP");
    await until(() => events.some((f) => f[2].value.toString() === "ns=0;i=2133"), "a GeneralModelChangeEvent");
    const change = events.find((f) => f[2].value.toString() === "ns=0;i=2133");
    assert.equal(change[0].dataType, DataType.Null);  // not a condition
    assert.equal(change[1].value.length, 16);           // EventId
    assert.equal(change[3].value, "Server");
    assert.ok(change[4].value instanceof Date);
    const changes = change[7].value.map((c) => [c.affected.toString(), c.verb]);
    const ns = changes.find(([a]) => a.includes(";s=Events.B"))[0].split(";")[0];
    assert.deepEqual(changes.find(([a]) => a === `${ns};s=Events.B`), [`${ns};s=Events.B`, 1]);        // NodeAdded
    assert.deepEqual(changes.find(([a]) => a === `${ns};s=Events.Gone`), [`${ns};s=Events.Gone`, 2]);  // NodeDeleted
    assert.equal(change[9].dataType, DataType.Null);

    const port = /http: \/healthz and \/metrics on 127\.0\.0\.1:(\d+)/.exec(daemon.output())[1];
    const metrics = await get(`http://127.0.0.1:${port}/metrics`);
    assert.match(metrics, /^opcuad_events_queued_total [1-9]\d*$/m);
    assert.match(metrics, /^opcuad_events_dropped_total\{reason="inbox_full"\} 0$/m);

    // Shutdown: the SystemStatusChangeEvent reaches the client during the grace period.
    daemon.signal("SIGTERM");
    await until(() => events.some((f) => f[2].value.toString() === `ns=0;${SYSTEM_STATUS_CHANGE}`),
      "a SystemStatusChangeEvent", 4000);
    const status = events.find((f) => f[2].value.toString() === `ns=0;${SYSTEM_STATUS_CHANGE}`);
    assert.equal(status[8].value, SHUTDOWN);
    assert.ok(status[6].value >= 1);
    await until(() => closed, "the connection closed", 8000);
    assert.equal((await daemon.exited).code, 0);
  } finally {
    await client.disconnect().catch(() => {});
    await daemon.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("events: an item on a node that is not a notifier is refused; event and data filters stay apart", async () => {
  const daemon = await startDaemon();
  const client = plainClient();
  try {
    await client.connect(daemon.url);
    const session = await client.createSession();
    const created = await session.createSubscription({
      requestedPublishingInterval: 100, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
    });
    const eventFilter = () => new EventFilter({ selectClauses: [clause(BASE_EVENT, ["Message"])] });
    const item = (clientHandle, nodeId, attributeId, filter) => ({
      itemToMonitor: { nodeId, attributeId }, monitoringMode: 2,
      requestedParameters: { clientHandle, samplingInterval: 0, queueSize: 10, discardOldest: true, filter },
    });
    const response = await session.createMonitoredItems({
      subscriptionId: created.subscriptionId,
      timestampsToReturn: TimestampsToReturn.Neither,
      itemsToCreate: [
        item(1, "i=85", AttributeIds.EventNotifier, eventFilter()),       // Objects: not a notifier
        item(2, "i=2253", AttributeIds.EventNotifier, new DataChangeFilter({ trigger: 1 })),
        item(3, "i=2258", AttributeIds.Value, eventFilter()),             // CurrentTime with an EventFilter
        item(4, "i=2253", AttributeIds.EventNotifier, eventFilter()),
      ],
    });
    assert.deepEqual(response.results.map((r) => r.statusCode.name),
      ["BadNotSupported", "BadFilterNotAllowed", "BadFilterNotAllowed", "Good"]);
    assert.equal(response.results[3].revisedQueueSize, 10);
  } finally {
    await client.disconnect().catch(() => {});
    await daemon.stop();
  }
});
