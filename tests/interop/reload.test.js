// SIGHUP reloads the node files under a connected node-opcua (2.182.2) client (docs/OPERATIONS.md,
// "Reload"): a node added, one removed and one changed take effect in the same session, on the same
// secure channel, with no reconnection; the monitored item on the removed node gets BadNodeIdUnknown; a
// written value of an unchanged node survives. Then a broken node file: the errors are logged, the
// previous address space keeps serving and the daemon stays up. Then a changed limit is reported as needing
// a restart and a changed logging.level applied. /metrics counts the reloads.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");
const { AttributeIds, DataType, StatusCodes, TimestampsToReturn, ClientSubscription, ClientMonitoredItem, BrowseDirection } = require("node-opcua");
const { startDaemon, until, plainClient } = require("./daemon");

const NS = "urn:opcuad:interop:nodes";
const id = (name) => `ns=2;s=Reload.${name}`;

// The node file: folder Reload with A (written by the client), C (to be removed), D (to be renamed) and,
// after the first reload, B and S (simulated: the simulator follows the node files).
function nodeFile({ withB = false, withC = true, dName = "D", withS = false } = {}) {
  const children = [
    { kind: "variable", name: "A", data_type: "Double", value: 1.0, access: ["read", "write"] },
    ...(withB ? [{ kind: "variable", name: "B", data_type: "Int32", value: 5 }] : []),
    ...(withC ? [{ kind: "variable", name: "C", data_type: "Double", value: 3.0, access: ["read", "write"] }] : []),
    { kind: "variable", name: "D", display_name: dName, description: dName, data_type: "String", value: "d" },
    ...(withS ? [{ kind: "variable", name: "S", data_type: "Int32", value: 0,
      simulation: { kind: "counter", interval_ms: 50, step: 1, min: 0, max: 1000000 } }] : []),
  ];
  return JSON.stringify({ namespaces: [NS], nodes: [{ kind: "folder", name: "Reload", children }] }, null, 1);
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

test("SIGHUP: nodes added, removed and changed in the running session; a broken file changes nothing",
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-reload-"));
    const nodes = path.join(dir, "reload.json");
    fs.writeFileSync(nodes, nodeFile());
    const daemon = await startDaemon({ config: { node_files: [nodes], http: { listen: "127.0.0.1:0" } } });
    const client = plainClient();
    const events = { reconnections: 0, lost: 0 };
    client.on("connection_lost", () => { events.lost += 1; });
    client.on("start_reconnection", () => { events.reconnections += 1; });
    client.on("after_reconnection", () => { events.reconnections += 1; });
    let session;
    try {
      await client.connect(daemon.url);
      session = await client.createSession();
      const sessionId = session.sessionId.toString();
      const channelId = client._secureChannel.channelId;
      const metricsPort = /http: \/healthz and \/metrics on 127\.0\.0\.1:(\d+)/.exec(daemon.output())[1];
      const metrics = () => get(`http://127.0.0.1:${metricsPort}/metrics`);

      const subscription = await ClientSubscription.create(session, {
        requestedPublishingInterval: 50, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
        maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
      });
      const item = ClientMonitoredItem.create(subscription, { nodeId: id("C"), attributeId: AttributeIds.Value },
        { samplingInterval: 50, discardOldest: true, queueSize: 10 }, TimestampsToReturn.Both);
      const seen = [];
      item.on("changed", (dv) => seen.push(dv));
      await new Promise((resolve, reject) => { item.on("initialized", resolve); item.on("err", reject); });
      await until(() => seen.length >= 1, "C's initial value");
      assert.equal(seen[0].value.value, 3.0);

      const written = await session.write({
        nodeId: id("A"), attributeId: AttributeIds.Value,
        value: { value: { dataType: DataType.Double, value: 42.5 } },
      });
      assert.equal(written.name, "Good");

      // B and the simulated S added, C removed, D renamed.
      fs.writeFileSync(nodes, nodeFile({ withB: true, withC: false, dName: "D renamed", withS: true }));
      daemon.signal("SIGHUP");
      await until(() => /event=reload\.done .*added=2 removed=1 changed=1/.test(daemon.output()),
        "the reload's log line", 10000);

      await until(() => seen.some((dv) => dv.statusCode.equals(StatusCodes.BadNodeIdUnknown)),
        "BadNodeIdUnknown on the item of the removed node");
      const browsed = await session.browse({
        nodeId: "ns=2;s=Reload", browseDirection: BrowseDirection.Forward, resultMask: 63,
        referenceTypeId: "HierarchicalReferences", includeSubtypes: true,
      });
      const names = browsed.references.map((r) => r.browseName.name).sort();
      assert.deepEqual(names, ["A", "B", "D", "S"]);
      const [s1] = await session.read([{ nodeId: id("S"), attributeId: AttributeIds.Value }]);
      await new Promise((r) => setTimeout(r, 300));
      const [s2] = await session.read([{ nodeId: id("S"), attributeId: AttributeIds.Value }]);
      assert.ok(s2.value.value > s1.value.value, `S is simulated after the reload (${s1.value.value} -> ${s2.value.value})`);
      const [a, b, c, d] = await session.read([
        { nodeId: id("A"), attributeId: AttributeIds.Value },
        { nodeId: id("B"), attributeId: AttributeIds.Value },
        { nodeId: id("C"), attributeId: AttributeIds.Value },
        { nodeId: id("D"), attributeId: AttributeIds.DisplayName },
      ]);
      assert.equal(a.value.value, 42.5, "the written value of an unchanged node survives");
      assert.equal(b.value.value, 5);
      assert.ok(c.statusCode.equals(StatusCodes.BadNodeIdUnknown));
      assert.equal(d.value.value.text, "D renamed");
      // Same session, same channel, no reconnection; the BadNodeIdUnknown came once.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(seen.filter((dv) => dv.statusCode.equals(StatusCodes.BadNodeIdUnknown)).length, 1);
      assert.equal(session.sessionId.toString(), sessionId);
      assert.equal(client._secureChannel.channelId, channelId);
      assert.deepEqual(events, { reconnections: 0, lost: 0 });

      // A broken node file: every error logged, the previous address space keeps serving.
      fs.writeFileSync(nodes, nodeFile({ withB: true, withC: false, withS: true }).replace('"name": "B"', '"name": "A"').
        replace('"data_type": "Int32"', '"data_type": "Int33"'));
      const before = daemon.output().length;
      daemon.signal("SIGHUP");
      await until(() => /event=reload\.failed .*errors=\d+/.test(daemon.output().slice(before)), "the failed reload", 10000);
      const failed = daemon.output().slice(before);
      assert.match(failed, /event=reload\.error .*reload\.json: \/nodes\/0\/children\/1\/data_type: unknown DataType "Int33"/);
      assert.match(failed, /event=reload\.error .*reload\.json: \/nodes\/0\/children\/1: duplicate NodeId ns=2;s=Reload\.A/);
      const [b2] = await session.read([{ nodeId: id("B"), attributeId: AttributeIds.Value }]);
      assert.equal(b2.value.value, 5, "the previous address space still serves B");
      assert.equal(session.sessionId.toString(), sessionId);
      assert.equal(daemon.signal(0), true, "the daemon is still alive");

      // A setting read at start is reported as needing a restart; logging.level takes effect.
      assert.doesNotMatch(daemon.output(), /reload\.needs_restart/, "unchanged settings are not reported");
      fs.writeFileSync(nodes, nodeFile({ withB: true, withC: false, dName: "D renamed", withS: true }));
      const server = JSON.parse(fs.readFileSync(daemon.configFile, "utf8"));
      server.limits.max_sessions = 150;
      server.logging = { level: "debug" };
      fs.writeFileSync(daemon.configFile, JSON.stringify(server, null, 1));
      const at = daemon.output().length;
      daemon.signal("SIGHUP");
      await until(() => /event=reload\.done .*added=0 removed=0 changed=0/.test(daemon.output().slice(at)),
        "the third reload", 10000);
      const third = daemon.output().slice(at);
      assert.match(third, /event=reload\.needs_restart setting=limits\.max_sessions /);
      assert.match(third, /event=reload\.applied setting=logging\.level value=debug/);
      assert.doesNotMatch(third, /setting=(?!limits\.max_sessions |logging\.level )/);

      const m = await metrics();
      assert.match(m, /^opcuad_reloads_total 2$/m);
      assert.match(m, /^opcuad_reload_failures_total 1$/m);
      await subscription.terminate();
    } finally {
      if (session) await session.close();
      await client.disconnect();
      const { code } = await daemon.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      assert.equal(code, 0, "opcuad exits cleanly on SIGTERM:\n" + daemon.output());
    }
  });
