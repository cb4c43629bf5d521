// Discovery over SecurityPolicy None on an endpoint that offers only SignAndEncrypt (Part 4 §5.5.4): a client
// that knows nothing but the URL asks for the endpoints over None (as UaExpert and asyncua do), learns the
// server's certificate from them and connects securely on the same URL; nothing but discovery passes over
// the None channel.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { MessageSecurityMode, SecurityPolicy, AttributeIds, StatusCodes, UserTokenType } = require("node-opcua");
const { startDaemon, until, plainClient, BIN } = require("./daemon");
const { clientCertificateManager, secureClient, tearDown } = require("./pki_setup");

let daemon;
let clientPki;
let certificateManager;

test.before(async () => {
  clientPki = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-interop-discovery-pki-"));
  certificateManager = await clientCertificateManager(clientPki);
  daemon = await startDaemon({
    users: [["alice", "wonderland"]],
    endpoint: { security_policies: ["Basic256Sha256"], security_modes: ["SignAndEncrypt"], allow_anonymous: false },
  });
});

test.after(() => tearDown({ daemon, certificateManager, dir: clientPki }));

test("GetEndpoints over None on a secure-only endpoint lists the secure endpoint with the server certificate", async () => {
  const client = plainClient();
  await client.connect(daemon.url);
  try {
    const endpoints = await client.getEndpoints();
    assert.ok(endpoints.length >= 1);
    assert.ok(endpoints.every((e) => e.securityMode === MessageSecurityMode.SignAndEncrypt));
    assert.ok(endpoints.every((e) => e.securityPolicyUri === SecurityPolicy.Basic256Sha256));
    assert.ok(endpoints[0].serverCertificate && endpoints[0].serverCertificate.length > 0);
    const servers = await client.findServers();
    assert.ok(servers.length >= 1);
  } finally {
    await client.disconnect();
  }
});

test("a session over that None channel is refused", async () => {
  const client = plainClient();
  await client.connect(daemon.url);
  try {
    await assert.rejects(client.createSession());
  } finally {
    await client.disconnect();
  }
});

test("a client given only the URL discovers over None, then logs in over SignAndEncrypt", async () => {
  // First attempt: the discovery works, the secure channel is refused because the daemon does not trust
  // the client yet; the operator trusts it.
  const first = secureClient(certificateManager, SecurityPolicy.Basic256Sha256, MessageSecurityMode.SignAndEncrypt);
  await assert.rejects(first.connect(daemon.url));
  await first.disconnect();
  const rejected = path.join(daemon.pki, "rejected", "certs");
  await until(() => fs.existsSync(rejected) && fs.readdirSync(rejected).length === 1, "a file in rejected/certs");
  const thumbprint = fs.readdirSync(rejected)[0].replace(/\.der$/i, "");
  execFileSync(BIN, ["--config", daemon.configFile, "pki", "trust", thumbprint]);
  await new Promise((resolve) => setTimeout(resolve, 1200));  // trust folders are looked at once a second
  // Now the same client, which was given no server certificate, discovers it over None and connects.
  const client = secureClient(certificateManager, SecurityPolicy.Basic256Sha256, MessageSecurityMode.SignAndEncrypt);
  await client.connect(daemon.url);
  const session = await client.createSession({ type: UserTokenType.UserName, userName: "alice", password: "wonderland" });
  try {
    const v = await session.read({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value });
    assert.equal(v.statusCode, StatusCodes.Good);
  } finally {
    await session.close();
    await client.disconnect();
  }
});
