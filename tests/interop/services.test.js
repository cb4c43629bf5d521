// node-opcua (2.182.2) against the real daemon: connect, browse, translate, read, write, log in, and hold
// many sessions. Run by tools/test.sh through ctest (interop_node_opcua).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { MessageSecurityMode, AttributeIds, DataType, StatusCodes, BrowseDirection, UserTokenType, makeBrowsePath, coerceNodeId, VariantArrayType } = require("node-opcua");
const { startDaemon, plainClient, closeAll } = require("./daemon");

const NS = 2;  // urn:opcuad:interop:nodes
const id = (path) => `ns=${NS};s=Interop.${path}`;

let daemon;
let client;
let session;

test.before(async () => {
  daemon = await startDaemon({ users: [["alice", "wonderland"]] });
  client = plainClient();
  await client.connect(daemon.url);
  session = await client.createSession();
});

test.after(async () => {
  await closeAll({ session, client, daemon });
});

test("GetEndpoints lists the None endpoint with anonymous and username policies", async () => {
  const endpoints = await client.getEndpoints();
  assert.ok(endpoints.length >= 1);
  const e = endpoints[0];
  assert.equal(e.securityMode, MessageSecurityMode.None);
  assert.match(e.endpointUrl, /^opc\.tcp:\/\/127\.0\.0\.1:\d+/);
  const kinds = e.userIdentityTokens.map((t) => t.tokenType);
  assert.ok(kinds.includes(UserTokenType.Anonymous));
  assert.ok(kinds.includes(UserTokenType.UserName));
});

test("browses Root, Objects and the Server object", async () => {
  const root = await session.browse("ns=0;i=84");
  assert.equal(root.statusCode, StatusCodes.Good);
  const rootNames = root.references.map((r) => r.browseName.name);
  for (const n of ["Objects", "Types", "Views"]) assert.ok(rootNames.includes(n), `Root has ${n}`);
  const objects = await session.browse("ns=0;i=85");
  const objectNames = objects.references.map((r) => r.browseName.name);
  assert.ok(objectNames.includes("Server"));
  assert.ok(objectNames.includes("Interop"));
  const server = await session.browse({ nodeId: "ns=0;i=2253", browseDirection: BrowseDirection.Both, resultMask: 63 });
  const serverNames = server.references.map((r) => r.browseName.name);
  for (const n of ["ServerStatus", "NamespaceArray", "ServerCapabilities", "ServerType"]) {
    assert.ok(serverNames.includes(n), `Server has ${n}`);
  }
  // Every reference once.
  const keys = server.references.map((r) => `${r.referenceTypeId}|${r.isForward}|${r.nodeId}`);
  assert.equal(new Set(keys).size, keys.length);
});

test("browses with requestedMaxReferencesPerNode=1 and drains with BrowseNext", async () => {
  const first = await session.browse({
    nodeId: id("Many"), browseDirection: BrowseDirection.Forward, referenceTypeId: "HierarchicalReferences",
    includeSubtypes: true, nodeClassMask: 0, resultMask: 63,
  });
  // node-opcua applies its own requestedMaxReferencesPerNode through the raw service below.
  assert.ok(first.references.length >= 25);
  const raw = await session.performMessageTransaction(new (require("node-opcua").BrowseRequest)({
    requestedMaxReferencesPerNode: 1,
    nodesToBrowse: [{ nodeId: coerceNodeId(id("Many")), browseDirection: BrowseDirection.Forward,
      referenceTypeId: coerceNodeId("ns=0;i=33"), includeSubtypes: true, nodeClassMask: 0, resultMask: 63 }],
  }));
  let result = raw.results[0];
  assert.equal(result.references.length, 1);
  const names = [result.references[0].browseName.name];
  while (result.continuationPoint && result.continuationPoint.length > 0) {
    const next = await session.browseNext([result.continuationPoint], false);
    result = next[0];
    assert.equal(result.statusCode, StatusCodes.Good);
    for (const r of result.references) names.push(r.browseName.name);
  }
  assert.equal(names.length, 25);
  assert.equal(new Set(names).size, 25);
});

test("translates /Objects/Server/ServerStatus/CurrentTime", async () => {
  const result = await session.translateBrowsePath(makeBrowsePath("RootFolder", "/Objects/Server.ServerStatus.CurrentTime"));
  assert.equal(result.statusCode, StatusCodes.Good);
  assert.equal(result.targets[0].targetId.toString(), "ns=0;i=2258");
  const missing = await session.translateBrowsePath(makeBrowsePath("RootFolder", "/Objects/NoSuchThing"));
  assert.equal(missing.statusCode, StatusCodes.BadNoMatch);
});

test("reads NamespaceArray and ServerStatus", async () => {
  const ns = await session.read({ nodeId: "ns=0;i=2255", attributeId: AttributeIds.Value });
  assert.deepEqual(ns.value.value, ["http://opcfoundation.org/UA/", "urn:opcuad:interop", "urn:opcuad:interop:nodes"]);
  const status = await session.read({ nodeId: "ns=0;i=2256", attributeId: AttributeIds.Value });
  assert.equal(status.statusCode, StatusCodes.Good);
  assert.equal(status.value.value.state, 0);  // Running
  assert.ok(status.value.value.startTime instanceof Date);
  assert.equal(status.value.value.buildInfo.productName, "opcuad");
  const state = await session.read({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value });
  assert.equal(state.value.value, 0);
  const t1 = await session.read({ nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value });
  assert.ok(Math.abs(t1.value.value.getTime() - Date.now()) < 5000);
});

test("CurrentTime is the server's clock at each read; BuildInfo and profiles are honest", async () => {
  // Part 5 §12.10: computed at the read, not refreshed once a second.
  const t1 = await session.read({ nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const t2 = await session.read({ nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value });
  const gap = t2.value.value.getTime() - t1.value.value.getTime();
  assert.ok(gap >= 90 && gap < 1000, `CurrentTime moved ${gap} ms in 100 ms`);
  assert.ok(Math.abs(t2.value.value.getTime() - Date.now()) < 500);
  const start = await session.read({ nodeId: "ns=0;i=2257", attributeId: AttributeIds.Value });
  const built = await session.read({ nodeId: "ns=0;i=2266", attributeId: AttributeIds.Value });
  assert.ok(built.value.value.getTime() <= start.value.value.getTime(), "BuildDate is before the start");
  const profiles = await session.read({ nodeId: "ns=0;i=2269", attributeId: AttributeIds.Value });
  assert.deepEqual(profiles.value.value, ["http://opcfoundation.org/UA-Profile/Server/MicroEmbeddedDevice2017"]);
});

const scalarCases = [
  ["Boolean", DataType.Boolean, false],
  ["SByte", DataType.SByte, -100],
  ["Byte", DataType.Byte, 200],
  ["Int16", DataType.Int16, -30000],
  ["UInt16", DataType.UInt16, 60000],
  ["Int32", DataType.Int32, -2000000000],
  ["UInt32", DataType.UInt32, 4000000000],
  ["Int64", DataType.Int64, [0xffffffff, 0xfffffffe]],
  ["UInt64", DataType.UInt64, [1, 2]],
  ["Float", DataType.Float, 1.5],
  ["Double", DataType.Double, -7.125],
  ["String", DataType.String, "grüße"],
  ["DateTime", DataType.DateTime, new Date("2025-06-01T12:00:00Z")],
  ["Guid", DataType.Guid, "12345678-1234-5678-9ABC-DEF012345678"],
  ["ByteString", DataType.ByteString, Buffer.from([0, 1, 2, 255])],
  ["XmlElement", DataType.XmlElement, "<b>2</b>"],
  ["NodeId", DataType.NodeId, coerceNodeId("ns=1;s=Some.Node")],
  ["StatusCode", DataType.StatusCode, StatusCodes.BadTimeout],
  ["QualifiedName", DataType.QualifiedName, { namespaceIndex: 2, name: "Written" }],
  ["LocalizedText", DataType.LocalizedText, { locale: "de", text: "Geschrieben" }],
];

function normalise(dataType, v) {
  if (v instanceof Date) return v.getTime();
  if (Buffer.isBuffer(v)) return v.toString("hex");
  if (dataType === DataType.NodeId) return v.toString();
  if (dataType === DataType.StatusCode) return v.value;
  if (dataType === DataType.Guid) return String(v).toUpperCase();
  if (dataType === DataType.QualifiedName) return `${v.namespaceIndex}:${v.name}`;
  if (dataType === DataType.LocalizedText) return `${v.locale}|${v.text}`;
  return v;
}

test("reads and writes a variable of every built-in type and reads the value back", async () => {
  for (const [name, dataType, value] of scalarCases) {
    const nodeId = id(`Scalar.${name}`);
    const before = await session.read({ nodeId, attributeId: AttributeIds.Value });
    assert.equal(before.statusCode, StatusCodes.Good, `${name}: initial read`);
    assert.equal(before.value.dataType, dataType, `${name}: initial type`);
    const status = await session.write({ nodeId, attributeId: AttributeIds.Value, value: { value: { dataType, arrayType: VariantArrayType.Scalar, value } } });
    assert.equal(status, StatusCodes.Good, `${name}: write gives ${status.toString()}`);
    const after = await session.read({ nodeId, attributeId: AttributeIds.Value });
    assert.deepEqual(normalise(dataType, after.value.value), normalise(dataType, value), `${name}: read back`);
  }
});

test("reads and writes arrays", async () => {
  const cases = [
    ["Double", DataType.Double, new Float64Array([9.5, 8.5, 7.5])],
    ["Int32", DataType.Int32, new Int32Array([-1, 0, 1, 2])],
    ["String", DataType.String, ["x", "y", "z"]],
    ["Boolean", DataType.Boolean, [true, true, false]],
    ["Byte", DataType.Byte, new Uint8Array([7, 8])],
  ];
  for (const [name, dataType, value] of cases) {
    const nodeId = id(`Array.${name}`);
    const status = await session.write({
      nodeId, attributeId: AttributeIds.Value, value: { value: { dataType, arrayType: VariantArrayType.Array, value } },
    });
    assert.equal(status, StatusCodes.Good, `${name}[]: write`);
    const after = await session.read({ nodeId, attributeId: AttributeIds.Value });
    assert.deepEqual(Array.from(after.value.value), Array.from(value), `${name}[]: read back`);
  }
  const part = await session.read({ nodeId: id("Array.Double"), attributeId: AttributeIds.Value, indexRange: "1:2" });
  assert.deepEqual(Array.from(part.value.value), [8.5, 7.5]);
});

test("bad writes and unknown nodes get their status codes", async () => {
  const mismatch = await session.write({
    nodeId: id("Scalar.Int32"), attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value: 1.5 } },
  });
  assert.equal(mismatch, StatusCodes.BadTypeMismatch);
  const readOnly = await session.write({
    nodeId: id("ReadOnly"), attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value: 2 } },
  });
  assert.equal(readOnly, StatusCodes.BadNotWritable);
  const outOfRange = await session.write({
    nodeId: id("Limited"), attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value: 11 } },
  });
  assert.equal(outOfRange, StatusCodes.BadOutOfRange);
  const unknown = await session.read({ nodeId: "ns=2;s=Does.Not.Exist", attributeId: AttributeIds.Value });
  assert.equal(unknown.statusCode, StatusCodes.BadNodeIdUnknown);
  const unknownWrite = await session.write({
    nodeId: "ns=2;s=Does.Not.Exist", attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value: 1 } },
  });
  assert.equal(unknownWrite, StatusCodes.BadNodeIdUnknown);
  const badAttribute = await session.read({ nodeId: id("Many"), attributeId: AttributeIds.Value });
  assert.equal(badAttribute.statusCode, StatusCodes.BadAttributeIdInvalid);
});

test("a simulated variable changes", async () => {
  const a = await session.read({ nodeId: id("Sine"), attributeId: AttributeIds.Value });
  await new Promise((r) => setTimeout(r, 400));
  const b = await session.read({ nodeId: id("Sine"), attributeId: AttributeIds.Value });
  assert.notEqual(a.value.value, b.value.value);
  assert.ok(b.sourceTimestamp > a.sourceTimestamp);
});

test("logs in with username and password; a wrong password is refused", async () => {
  const c = plainClient();
  await c.connect(daemon.url);
  try {
    const s = await c.createSession({ type: UserTokenType.UserName, userName: "alice", password: "wonderland" });
    const v = await s.read({ nodeId: "ns=0;i=2255", attributeId: AttributeIds.Value });
    assert.equal(v.statusCode, StatusCodes.Good);
    await s.close();
    await assert.rejects(
      c.createSession({ type: UserTokenType.UserName, userName: "alice", password: "queen of hearts" }),
      /BadUserAccessDenied|Bad/);
  } finally {
    await c.disconnect();
  }
});

test("200 clients from one host open their sessions at the same moment, on the built-in limits", async () => {
  // Beyond limits.max_unactivated_sessions_per_address (16) the CreateSessions wait for a slot instead
  // of failing with BadTooManySessions: every client gets its session.
  const clients = Array.from({ length: 200 }, () => plainClient());
  try {
    const sessions = await Promise.all(clients.map(async (c) => {
      await c.connect(daemon.url);
      return c.createSession();
    }));
    assert.equal(sessions.length, 200);
    const reads = await Promise.all(
      sessions.map((s) => s.read({ nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value })));
    assert.ok(reads.every((r) => r.statusCode === StatusCodes.Good));
    // ServerDiagnosticsSummary.CurrentSessionCount follows within its one-second refresh.
    let count = 0;
    for (let i = 0; i < 30 && count < 201; ++i) {
      await new Promise((r) => setTimeout(r, 100));
      count = (await session.read({ nodeId: "ns=0;i=2277", attributeId: AttributeIds.Value })).value.value;
    }
    assert.ok(count >= 201, `CurrentSessionCount ${count}`);  // these 200 and the suite's own
    await Promise.all(sessions.map((s) => s.close()));
  } finally {
    await Promise.all(clients.map((c) => c.disconnect()));
  }
});
