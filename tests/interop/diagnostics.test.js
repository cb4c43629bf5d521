// node-opcua (2.182.2) reads the Server's diagnostics arrays (Part 5 §8.2.10) from the real daemon, as
// UaExpert's diagnostics view does: with "diagnostics": {"enabled": true} the SessionDiagnosticsArray and
// SubscriptionDiagnosticsArray decode as SessionDiagnosticsDataType / SubscriptionDiagnosticsDataType,
// counters follow the client's requests, a user without an administrative role sees its own session only
// and may not read the security diagnostics nor switch EnabledFlag, and an administrator sees everyone.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const { AttributeIds, DataType, StatusCodes, UserTokenType } = require("node-opcua");
const { startDaemon, BIN, plainClient, closeAll } = require("./daemon");

const SESSIONS = "ns=0;i=3707";       // Server.ServerDiagnostics.SessionsDiagnosticsSummary.SessionDiagnosticsArray
const SECURITY = "ns=0;i=3708";       // ... SessionSecurityDiagnosticsArray
const SUBSCRIPTIONS = "ns=0;i=2290";  // Server.ServerDiagnostics.SubscriptionDiagnosticsArray
const ENABLED = "ns=0;i=2294";        // Server.ServerDiagnostics.EnabledFlag

const hash = (password) => execFileSync(BIN, ["--hash-password"], { input: password + "\n" }).toString().trim();

let daemon;

test.before(async () => {
  daemon = await startDaemon({
    config: {
      diagnostics: { enabled: true },
      users: [
        { name: "admin", password_hash: hash("admin-secret"), roles: ["SecurityAdmin"] },
        { name: "viewer", password_hash: hash("viewer-secret"), roles: ["Observer"] },
      ],
    },
  });
});

test.after(async () => {
  await closeAll({ daemon });
});

async function open(name, identity) {
  const client = plainClient({ applicationName: name });
  await client.connect(daemon.url);
  const session = await client.createSession(identity);
  return { client, session, async close() { await session.close(); await client.disconnect(); } };
}

const read = (session, nodeId) => session.read({ nodeId, attributeId: AttributeIds.Value });

// Reads `nodeId` until check(entries) holds (the daemon refreshes the arrays once a second), at most 5 s.
async function readUntil(session, nodeId, check, what) {
  let entries = [];
  const deadline = Date.now() + 5000;
  for (;;) {
    const dv = await read(session, nodeId);
    assert.equal(dv.statusCode.value, StatusCodes.Good.value, `${nodeId}: ${dv.statusCode.toString()}`);
    entries = dv.value.value || [];
    if (check(entries)) return entries;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(entries.length)} entries`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("an administrator sees every session, decoded, with counters that follow the requests", async () => {
  const admin = await open("diag admin", { type: UserTokenType.UserName, userName: "admin", password: "admin-secret" });
  const viewer = await open("diag viewer", { type: UserTokenType.UserName, userName: "viewer", password: "viewer-secret" });
  try {
    for (let i = 0; i < 5; ++i) await read(viewer.session, "ns=0;i=2258");  // CurrentTime
    const viewerId = viewer.session.sessionId.toString();
    const entries = await readUntil(admin.session, SESSIONS, (all) => {
      const v = all.find((e) => e.sessionId.toString() === viewerId);
      return all.length >= 2 && v && v.readCount.totalCount >= 5;
    }, "both sessions, the viewer's Reads counted");
    const v = entries.find((e) => e.sessionId.toString() === viewerId);
    assert.equal(v.constructor.name, "SessionDiagnosticsDataType");
    assert.equal(v.sessionName, viewer.session.name);
    assert.equal(v.clientDescription.applicationName.text, "diag viewer");
    assert.ok(v.endpointUrl.includes("127.0.0.1"), v.endpointUrl);
    assert.equal(v.actualSessionTimeout, 60000);
    assert.ok(v.totalRequestCount.totalCount >= v.readCount.totalCount);
    assert.ok(v.clientConnectionTime.getTime() <= v.clientLastContactTime.getTime());

    const security = await read(admin.session, SECURITY);
    assert.equal(security.statusCode.value, StatusCodes.Good.value);
    const s = security.value.value.find((e) => e.sessionId.toString() === viewerId);
    assert.ok(s, "the viewer's security entry");
    assert.equal(s.clientUserIdOfSession, "viewer");
    assert.equal(s.authenticationMechanism, "UserName");
    assert.equal(s.transportProtocol, "opc.tcp");

    // A subscription of the viewer's shows in the administrator's SubscriptionDiagnosticsArray.
    const created = await viewer.session.createSubscription({
      requestedPublishingInterval: 100, requestedLifetimeCount: 600, requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 7,
    });
    const subs = await readUntil(admin.session, SUBSCRIPTIONS,
      (all) => all.some((e) => e.subscriptionId === created.subscriptionId), "the viewer's subscription");
    const sub = subs.find((e) => e.subscriptionId === created.subscriptionId);
    assert.equal(sub.constructor.name, "SubscriptionDiagnosticsDataType");
    assert.equal(sub.sessionId.toString(), viewerId);
    assert.equal(sub.priority, 7);
    assert.equal(sub.publishingInterval, 100);
    assert.equal(sub.publishingEnabled, true);
  } finally {
    await viewer.close();
    await admin.close();
  }
});

test("a user without an administrative role sees its own session only", async () => {
  const admin = await open("diag admin 2", { type: UserTokenType.UserName, userName: "admin", password: "admin-secret" });
  const viewer = await open("diag viewer 2", { type: UserTokenType.UserName, userName: "viewer", password: "viewer-secret" });
  try {
    const viewerId = viewer.session.sessionId.toString();
    await readUntil(admin.session, SESSIONS, (all) => all.some((e) => e.sessionId.toString() === viewerId),
      "the viewer's entry");
    const own = await readUntil(viewer.session, SESSIONS, (all) => all.length > 0, "the viewer's own entry");
    assert.equal(own.length, 1);
    assert.equal(own[0].sessionId.toString(), viewerId);

    const security = await read(viewer.session, SECURITY);
    assert.equal(security.statusCode.value, StatusCodes.BadUserAccessDenied.value);

    const status = await viewer.session.write({
      nodeId: ENABLED, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Boolean, value: false } },
    });
    assert.equal(status.value, StatusCodes.BadUserAccessDenied.value);
    const flag = await read(admin.session, ENABLED);
    assert.equal(flag.value.value, true);
  } finally {
    await viewer.close();
    await admin.close();
  }
});

test("an administrator switches the collection off and on with EnabledFlag", async () => {
  const admin = await open("diag admin 3", { type: UserTokenType.UserName, userName: "admin", password: "admin-secret" });
  const write = (value) => admin.session.write({
    nodeId: ENABLED, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Boolean, value } },
  });
  try {
    await readUntil(admin.session, SESSIONS, (all) => all.length > 0, "entries while enabled");
    assert.equal((await write(false)).value, StatusCodes.Good.value);
    await readUntil(admin.session, SESSIONS, (all) => all.length === 0, "empty arrays once disabled");
    assert.equal((await write(true)).value, StatusCodes.Good.value);
    await readUntil(admin.session, SESSIONS, (all) => all.length > 0, "entries again");
  } finally {
    await admin.close();
  }
});
