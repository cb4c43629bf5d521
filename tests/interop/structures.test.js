// node-opcua (2.182.2) against the real daemon on structured values of types that NodeSet2 files define
// (docs/CONFIGURATION.md, "NodeSet2 node files"): the client learns each type from its DataTypeDefinition,
// decodes what it reads, encodes what it writes, and sees the changes of a subscription. The models are
// the unit tests' own (tests/unit/config/nodesets: types.xml defines the structures, types_values.xml the
// variables holding them) and, when OPCUAD_NODESETS_DIR has them, the published DI, Machinery and
// Machinery Result specifications with a node file's variable of Result's ProcessingTimesDataType. Run by
// tools/test.sh through ctest (interop_node_opcua).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const {
  AttributeIds,
  DataType,
  StatusCodes,
  TimestampsToReturn,
  coerceNodeId,
  promoteOpaqueStructure,
} = require("node-opcua");
const { startDaemon, plainClient, closeAll } = require("./daemon");

const FIXTURES = path.join(__dirname, "../unit/config/nodesets");
const NODESETS_DIR = process.env.OPCUAD_NODESETS_DIR || path.join(__dirname, "../../../shared/opcua-nodesets");
const COMPANION = [
  "DI/Opc.Ua.Di.NodeSet2.xml",
  "Machinery/Opc.Ua.Machinery.NodeSet2.xml",
  "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml",
].map((f) => path.join(NODESETS_DIR, f));
// Under CI (tools/test.sh) the specifications must be there; elsewhere their test is skipped without them.
const companion = COMPANION.every((f) => fs.existsSync(f));
assert.ok(companion || !process.env.CI, `companion specifications not found in ${NODESETS_DIR}`);
const RESULT_URI = "http://opcfoundation.org/UA/Machinery/Result/";

let daemon;
let client;
let session;
let values;  // namespace index of urn:types:values (the variables)
let types;  // namespace index of urn:types (the structures)
let nodeDir;  // the node file of the companion specification's variable

const variable = (i) => `ns=${values};i=${i}`;
const dataType = (i) => coerceNodeId(`ns=${types};i=${i}`);

// The Value of `nodeId` as node-opcua decodes it with the types it read from the server.
async function readDecoded(nodeId, indexRange) {
  const dv = await session.read({ nodeId, attributeId: AttributeIds.Value, indexRange });
  assert.equal(dv.statusCode, StatusCodes.Good, `read ${nodeId}`);
  await promoteOpaqueStructure(session, [dv]);
  return dv.value.value;
}

async function writeObject(nodeId, value) {
  return session.write({
    nodeId,
    attributeId: AttributeIds.Value,
    value: { value: { dataType: DataType.ExtensionObject, value } },
  });
}

// Plain data of a decoded structure (or an array of them), for deep comparison.
const plain = (v) => JSON.parse(JSON.stringify(Array.isArray(v) ? v.map((e) => e.toJSON()) : v.toJSON()));

test.before(async () => {
  const files = ["types.xml", "types_more.xml", "types_values.xml"].map((f) => path.join(FIXTURES, f));
  if (companion) {
    nodeDir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-structures-"));
    const nodeFile = path.join(nodeDir, "cycle.json");
    fs.writeFileSync(nodeFile, JSON.stringify({
      namespaces: ["urn:opcuad:interop:cycle"],
      nodes: [{
        kind: "variable",
        name: "LastCycle",
        access: ["read", "write"],
        data_type: `${RESULT_URI}:ProcessingTimesDataType`,
        value: { StartTime: "2026-01-05T06:00:00Z", EndTime: "2026-01-05T06:00:12Z", ProcessingDuration: 1500 },
      }],
    }));
    files.push(...COMPANION, nodeFile);
  }
  daemon = await startDaemon({ config: { namespaces: [], node_files: files } });
  client = plainClient();
  await client.connect(daemon.url);
  session = await client.createSession();
  const namespaces = await session.readNamespaceArray();
  values = namespaces.indexOf("urn:types:values");
  types = namespaces.indexOf("urn:types");
  assert.ok(values > 0 && types > 0, `the models are loaded: ${namespaces}`);
});

test.after(async () => {
  await closeAll({ session, client, daemon });
  if (nodeDir) fs.rmSync(nodeDir, { recursive: true, force: true });
});

test("the DataTypeDefinition of a structure lists its fields in order", async () => {
  const dv = await session.read({ nodeId: dataType(3001), attributeId: AttributeIds.DataTypeDefinition });
  assert.equal(dv.statusCode, StatusCodes.Good);
  assert.deepEqual(
    dv.value.value.fields.map((f) => f.name),
    ["Count", "Inner", "Inners", "Mode", "Label", "Far"],
  );
});

test("reads the values the file gives, decoded by the client from the served definitions", async () => {
  // Nested structures, an array of them, an enumeration and a structure of another namespace.
  assert.deepEqual(plain(await readDecoded(variable(1))), {
    count: 7,
    inner: { v: 1.5 },
    inners: [{ v: 2.5 }, { v: 3.5 }],
    mode: 5,
    label: "abc",
    far: { code: 9 },
  });
  // A union: the switch selects the second field.
  const choice = plain(await readDecoded(variable(3)));
  assert.equal(choice.switchField, 2);
  assert.equal(choice.Text, "x");
  // An array of structures, whole and through an IndexRange.
  assert.deepEqual(plain(await readDecoded(variable(4))), [{ v: 1 }, { v: 2 }]);
  assert.deepEqual(plain(await readDecoded(variable(4), "1")), [{ v: 2 }]);
  // A recursive structure: arrays of itself.
  assert.deepEqual(plain(await readDecoded(variable(7))), { children: [{ children: [{}] }, {}] });
});

test("writes a structure the client encodes and reads it back", async () => {
  const value = { count: 11, inner: { v: 0.25 }, inners: [{ v: 1 }], mode: 5, label: "new", far: { code: 3 } };
  const outer = await session.constructExtensionObject(dataType(3001), value);
  assert.equal(await writeObject(variable(1), outer), StatusCodes.Good);
  assert.deepEqual(plain(await readDecoded(variable(1))), value);

  const list = [];
  for (const v of [4, 5, 6]) list.push(await session.constructExtensionObject(dataType(3003), { v }));
  assert.equal(await writeObject(variable(4), list), StatusCodes.Good);
  assert.deepEqual(plain(await readDecoded(variable(4))), [{ v: 4 }, { v: 5 }, { v: 6 }]);
});

test("a structure of another type is refused with BadTypeMismatch and leaves the value", async () => {
  const before = plain(await readDecoded(variable(1)));
  const inner = await session.constructExtensionObject(dataType(3003), { v: 1 });
  assert.equal(await writeObject(variable(1), inner), StatusCodes.BadTypeMismatch);
  assert.deepEqual(plain(await readDecoded(variable(1))), before);
});

test("a body the client cannot decode is written back byte for byte", async () => {
  // Sealed holds a structure with a field of an abstract type that allows subtypes (Part 3 §8.51), which
  // this client keeps opaque: its bytes go back unchanged and the server checks them.
  const dv = await session.read({ nodeId: variable(6), attributeId: AttributeIds.Value });
  const opaque = dv.value.value;
  assert.ok(Buffer.isBuffer(opaque.buffer), "kept as an opaque body");
  assert.equal(await writeObject(variable(6), opaque), StatusCodes.Good);
  const again = await session.read({ nodeId: variable(6), attributeId: AttributeIds.Value });
  assert.equal(again.value.value.buffer.toString("hex"), opaque.buffer.toString("hex"));
});

test("a subscription delivers each written structure, decoded", async () => {
  const subscription = await session.createSubscription2({
    requestedPublishingInterval: 50,
    publishingEnabled: true,
    requestedMaxKeepAliveCount: 10,
    requestedLifetimeCount: 100,
  });
  try {
    const item = await subscription.monitor(
      { nodeId: variable(1), attributeId: AttributeIds.Value },
      { samplingInterval: 0, queueSize: 10 },
      TimestampsToReturn.Both,
    );
    const seen = [];
    const wanted = (count) => seen.some((v) => v.count === count);
    const waitFor = async (count) => {
      for (let i = 0; i < 100 && !wanted(count); ++i) await new Promise((r) => setTimeout(r, 50));
      assert.ok(wanted(count), `a notification with count ${count}: ${JSON.stringify(seen)}`);
    };
    item.on("changed", (dv) => {
      promoteOpaqueStructure(session, [dv]).then(() => seen.push(plain(dv.value.value)));
    });
    for (const count of [21, 22]) {
      const value = { count, inner: { v: count / 2 }, inners: [], mode: 0, label: `n${count}`, far: { code: count } };
      assert.equal(await writeObject(variable(1), await session.constructExtensionObject(dataType(3001), value)),
                   StatusCodes.Good);
      await waitFor(count);
      assert.deepEqual(seen.find((v) => v.count === count), value);
    }
  } finally {
    await subscription.terminate();
  }
});

test("a node file's variable of Machinery Result's ProcessingTimesDataType: optional fields both ways",
     { skip: !companion && `companion specifications not found in ${NODESETS_DIR}` }, async () => {
  const namespaces = await session.readNamespaceArray();
  const cycle = `ns=${namespaces.indexOf("urn:opcuad:interop:cycle")};s=LastCycle`;
  const result = namespaces.indexOf(RESULT_URI);
  assert.ok(result > 0);
  const read = plain(await readDecoded(cycle));
  assert.equal(new Date(read.startTime).toISOString(), "2026-01-05T06:00:00.000Z");
  assert.equal(new Date(read.endTime).toISOString(), "2026-01-05T06:00:12.000Z");
  assert.equal(read.processingDuration, 1500);
  assert.equal(read.acquisitionDuration, undefined, "an optional field left out stays out");

  const written = await session.constructExtensionObject(coerceNodeId(`ns=${result};i=3006`), {
    startTime: new Date("2026-02-01T00:00:00Z"),
    endTime: new Date("2026-02-01T00:00:05Z"),
    acquisitionDuration: 250,
  });
  assert.equal(await writeObject(cycle, written), StatusCodes.Good);
  const back = plain(await readDecoded(cycle));
  assert.equal(new Date(back.endTime).toISOString(), "2026-02-01T00:00:05.000Z");
  assert.equal(back.acquisitionDuration, 250);
  assert.equal(back.processingDuration, undefined);
});
