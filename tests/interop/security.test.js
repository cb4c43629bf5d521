// node-opcua (2.182.2) over signed and encrypted secure channels against the real daemon: the trust flow
// an operator follows (an unknown client is refused and its certificate lands in rejected/, moving it to
// trusted/ lets it in), then every policy x mode opens a session, reads, writes, browses and subscribes.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const {
  MessageSecurityMode, SecurityPolicy, AttributeIds, DataType,
  StatusCodes, ClientSubscription, ClientMonitoredItem, TimestampsToReturn, UserTokenType,
} = require("node-opcua");
const { execFileSync } = require("node:child_process");
const { startDaemon, until, BIN } = require("./daemon");
const { clientCertificateManager, secureClient, tearDown } = require("./pki_setup");

const NS = 2;
const id = (p) => `ns=${NS};s=Interop.${p}`;
const POLICIES = [SecurityPolicy.Basic256Sha256, SecurityPolicy.Aes128_Sha256_RsaOaep, SecurityPolicy.Aes256_Sha256_RsaPss];
const MODES = [MessageSecurityMode.Sign, MessageSecurityMode.SignAndEncrypt];

let daemon;
let clientPki;
let certificateManager;

const newClient = (policy, mode) => secureClient(certificateManager, policy, mode);

test.before(async () => {
  clientPki = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-interop-client-pki-"));
  certificateManager = await clientCertificateManager(clientPki);
  daemon = await startDaemon({
    users: [["alice", "wonderland"]],
    endpoint: {
      security_policies: ["None", "Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"],
      security_modes: ["None", "Sign", "SignAndEncrypt"],
    },
  });
});

test.after(() => tearDown({ daemon, certificateManager, dir: clientPki }));

test("an unknown client certificate is refused, saved to rejected/, and accepted once `opcuad pki trust` trusts it", async () => {
  const client = newClient(SecurityPolicy.Basic256Sha256, MessageSecurityMode.SignAndEncrypt);
  await assert.rejects(client.connect(daemon.url));
  await client.disconnect();
  const rejected = path.join(daemon.pki, "rejected", "certs");
  await until(() => fs.existsSync(rejected) && fs.readdirSync(rejected).length === 1, "a file in rejected/certs");
  const [file] = fs.readdirSync(rejected);
  assert.match(file, /^[0-9a-f]{40}\.der$/i);
  assert.match(daemon.output(), /BadCertificateUntrusted/);
  // The operator's way: `opcuad pki trust <thumbprint>` moves it from rejected/ to trusted/.
  const thumbprint = file.replace(/\.der$/i, "");
  const out = execFileSync(BIN, ["--config", daemon.configFile, "pki", "trust", thumbprint]).toString();
  assert.match(out, /action=trusted/);
  assert.ok(fs.existsSync(path.join(daemon.pki, "trusted", "certs", file)), "the certificate is in trusted/certs");
  assert.equal(fs.readdirSync(rejected).length, 0);
  // opcuad looks at the trust folders at most once a second: the change is picked up without a restart.
  await new Promise((resolve) => setTimeout(resolve, 1200));
  const again = newClient(SecurityPolicy.Basic256Sha256, MessageSecurityMode.SignAndEncrypt);
  await again.connect(daemon.url);
  const session = await again.createSession();
  const v = await session.read({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value });
  assert.equal(v.statusCode, StatusCodes.Good);
  await session.close();
  await again.disconnect();
});

for (const policy of POLICIES) {
  for (const mode of MODES) {
    const name = `${policy.split("#")[1]} ${MessageSecurityMode[mode]}`;
    test(`${name}: session, read, write, browse, subscribe, large messages both ways`, async () => {
      const client = newClient(policy, mode);
      await client.connect(daemon.url);
      const session = await client.createSession();
      try {
        const state = await session.read({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value });
        assert.equal(state.statusCode, StatusCodes.Good);
        const w = await session.write({
          nodeId: id("Scalar.Int32"), attributeId: AttributeIds.Value,
          value: { value: { dataType: DataType.Int32, value: 4711 } },
        });
        assert.equal(w, StatusCodes.Good);
        const r = await session.read({ nodeId: id("Scalar.Int32"), attributeId: AttributeIds.Value });
        assert.equal(r.value.value, 4711);
        const b = await session.browse("ns=0;i=85");
        assert.equal(b.statusCode, StatusCodes.Good);
        assert.ok(b.references.length > 0);
        // A request and a response of several chunks each (the channel's buffers are 64 KiB).
        const many = Array.from({ length: 3000 }, () => ({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value }));
        const results = await session.read(many);
        assert.equal(results.length, 3000);
        assert.ok(results.every((x) => x.statusCode === StatusCodes.Good));
        const sub = ClientSubscription.create(session, {
          requestedPublishingInterval: 50, requestedLifetimeCount: 100, requestedMaxKeepAliveCount: 10,
          maxNotificationsPerPublish: 0, publishingEnabled: true, priority: 1,
        });
        const item = ClientMonitoredItem.create(sub, { nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value },
          { samplingInterval: 50, discardOldest: true, queueSize: 1 }, TimestampsToReturn.Both);
        let changes = 0;
        item.on("changed", () => ++changes);
        await until(() => changes >= 3, "three CurrentTime changes", 10000);
        await sub.terminate();
      } finally {
        await session.close();
        await client.disconnect();
      }
    });
  }
}

// The password never travels in clear: on None the user token policy names a secure policy and node-opcua
// encrypts the secret with the server certificate (Part 4 §7.41); on SignAndEncrypt the channel carries it.
for (const [policy, mode] of [[SecurityPolicy.None, MessageSecurityMode.None],
  [SecurityPolicy.Basic256Sha256, MessageSecurityMode.SignAndEncrypt]]) {
  test(`user name login over ${MessageSecurityMode[mode]}: right password in, wrong password out`, async () => {
    const client = newClient(policy, mode);
    await client.connect(daemon.url);
    try {
      const endpoints = await client.getEndpoints();
      const none = endpoints.find((e) => e.securityMode === MessageSecurityMode.None);
      const username = none.userIdentityTokens.find((t) => t.tokenType === UserTokenType.UserName);
      // The strongest policy the server offers protects the password.
      assert.equal(username.securityPolicyUri, SecurityPolicy.Aes256_Sha256_RsaPss, "the password policy encrypts");
      const session = await client.createSession({ type: UserTokenType.UserName, userName: "alice", password: "wonderland" });
      const v = await session.read({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value });
      assert.equal(v.statusCode, StatusCodes.Good);
      await session.close();
      await assert.rejects(client.createSession({ type: UserTokenType.UserName, userName: "alice", password: "wrong" }));
    } finally {
      await client.disconnect();
    }
    assert.ok(!daemon.output().includes("wonderland"), "the password never appears in the log");
  });
}
