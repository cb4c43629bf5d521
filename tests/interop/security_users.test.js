// node-opcua (2.182.2) against the real daemon: who a session's user is and what that user may do
// (docs/SECURITY.md, "Users and roles"). An X509 user identity token whose certificate is in the user trust
// list (pki/user/trusted/certs) activates a session with its user's configured roles, an untrusted one is refused;
// an endpoint with `allow_anonymous: false` refuses anonymous but takes a user name; a variable's
// `write_roles` decide who may write it, and UserAccessLevel says so before anyone tries.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const {
  MessageSecurityMode, SecurityPolicy, AttributeIds, DataType,
  StatusCodes, UserTokenType,
} = require("node-opcua");
const { startDaemon, until, BIN } = require("./daemon");
const { clientCertificateManager, secureClient, tearDown } = require("./pki_setup");

const GUARDED = "ns=2;s=Roles.Setpoint";  // write_roles: ["Operator"] (the node file written below)
const CURRENT_WRITE = 0x02;              // AccessLevel bit (Part 3 §8.57)

let dir;
let daemon;
let certificateManager;
let client;      // application certificate: clientCert (trusted by the daemon)
let carol;       // X509 user in user/trusted/certs, role Operator
let dave;        // X509 user in user/trusted/certs, role Observer
let mallory;     // X509 user mapped to a configured user but NOT in the user trust list

// A self-signed RSA certificate made with the openssl command line: { der, pem, key (PEM), thumbprint }.
function makeCertificate(name, subject, extensions) {
  const key = path.join(dir, `${name}.key.pem`);
  const pem = path.join(dir, `${name}.cert.pem`);
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "30", "-subj", subject,
    "-keyout", key, "-out", pem, ...extensions.flatMap((e) => ["-addext", e]),
  ], { stdio: "ignore" });
  const der = execFileSync("openssl", ["x509", "-in", pem, "-outform", "DER"]);
  return {
    der, pemFile: pem, keyFile: key, key: fs.readFileSync(key, "utf8"),
    thumbprint: crypto.createHash("sha1").update(der).digest("hex"),
  };
}

function hashPassword(password) {
  return execFileSync(BIN, ["--hash-password"], { input: password + "\n" }).toString().trim();
}

const newClient = (policy, mode) => secureClient(certificateManager, policy, mode, client);

// Connects with `policy`/`mode`, runs fn(client), always disconnects.
async function withClient(policy, mode, fn) {
  const c = newClient(policy, mode);
  await c.connect(daemon.url);
  try {
    return await fn(c);
  } finally {
    await c.disconnect();
  }
}

// The ServiceResult an ActivateSession refusal carried, from node-opcua's error text.
async function refusal(promise) {
  try {
    const session = await promise;
    await session.close();
  } catch (err) {
    return err.message;
  }
  assert.fail("the session was activated");
}

// Refused ActivateSessions in the operator log (docs/CONFIGURATION.md, "Operator log").
const loginFailures = () =>
  (daemon.output().match(/event=login\.failed .*status=BadIdentityTokenRejected/g) || []).length;

const x509 = (user) => ({ type: UserTokenType.Certificate, certificateData: user.der, privateKey: user.key });
const login = (userName, password) => ({ type: UserTokenType.UserName, userName, password });

test.before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-interop-users-"));
  // Part 6 §6.2.2: an application certificate names its ApplicationUri, signs and receives keys; a user
  // certificate signs.
  client = makeCertificate("client", "/CN=opcuad interop client", [
    "subjectAltName=URI:urn:opcuad:interop:client",
    "keyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment",
    "extendedKeyUsage=clientAuth",
  ]);
  carol = makeCertificate("carol", "/CN=carol", ["keyUsage=critical,digitalSignature,nonRepudiation"]);
  dave = makeCertificate("dave", "/CN=dave", ["keyUsage=critical,digitalSignature,nonRepudiation"]);
  mallory = makeCertificate("mallory", "/CN=mallory", ["keyUsage=critical,digitalSignature,nonRepudiation"]);

  // The daemon's PKI, prepared before its first start: the client application and carol are trusted.
  const pki = path.join(dir, "pki");
  const trusted = [["trusted/certs", client], ["user/trusted/certs", carol], ["user/trusted/certs", dave]];
  for (const [folder, cert] of trusted) {
    fs.mkdirSync(path.join(pki, folder), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(pki, folder, `${cert.thumbprint}.der`), cert.der);
  }
  const nodeFile = path.join(dir, "roles.json");
  fs.writeFileSync(nodeFile, JSON.stringify({
    namespaces: ["urn:opcuad:interop:nodes"],
    nodes: [{
      kind: "folder", name: "Roles", children: [{
        kind: "variable", name: "Setpoint", data_type: "Double", value: 1.5, access: ["read", "write"],
        write_roles: ["Operator"],
      }],
    }],
  }));

  certificateManager = await clientCertificateManager(path.join(dir, "client-pki"));
  daemon = await startDaemon({
    endpoint: {
      security_policies: ["None", "Basic256Sha256"],
      security_modes: ["None", "SignAndEncrypt"],
      allow_anonymous: false,
    },
    security: { pki_directory: pki },
    config: {
      users: [
        { name: "alice", password_hash: hashPassword("wonderland"), roles: ["Operator"] },
        { name: "bob", password_hash: hashPassword("builder"), roles: ["Observer"] },
        { name: "carol", certificate_thumbprint: carol.thumbprint, roles: ["Operator"] },
        { name: "dave", certificate_thumbprint: dave.thumbprint, roles: ["Observer"] },
        { name: "mallory", certificate_thumbprint: mallory.thumbprint, roles: ["Operator"] },
      ],
      node_files: [path.join(__dirname, "nodes.json"), nodeFile],
    },
  });
});

test.after(() => tearDown({ daemon, certificateManager, dir }));

for (const [policy, mode] of [[SecurityPolicy.None, MessageSecurityMode.None],
  [SecurityPolicy.Basic256Sha256, MessageSecurityMode.SignAndEncrypt]]) {
  const over = MessageSecurityMode[mode];

  test(`X509 user over ${over}: a trusted user certificate activates with its roles, an untrusted one is refused`, async () => {
    await withClient(policy, mode, async (c) => {
      const endpoints = await c.getEndpoints();
      const ep = endpoints.find((e) => e.securityMode === mode);
      const token = ep.userIdentityTokens.find((t) => t.tokenType === UserTokenType.Certificate);
      assert.ok(token, "the endpoint offers X509 user tokens");
      // On None the user's signature still needs an asymmetric algorithm: the token policy names one.
      if (mode === MessageSecurityMode.None) assert.notEqual(token.securityPolicyUri || "", SecurityPolicy.None);

      const session = await c.createSession(x509(carol));
      try {
        // carol is an Operator: she may write the variable only Operators may write.
        const access = await session.read({ nodeId: GUARDED, attributeId: AttributeIds.UserAccessLevel });
        assert.equal(access.statusCode, StatusCodes.Good);
        assert.ok((access.value.value & CURRENT_WRITE) !== 0, "UserAccessLevel has CurrentWrite for an Operator");
        const w = await session.write({
          nodeId: GUARDED, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value: 2.5 } },
        });
        assert.equal(w, StatusCodes.Good);
      } finally {
        await session.close();
      }
      // dave, trusted the same way, is only an Observer: his certificate's user has his roles, not carol's.
      const observer = await c.createSession(x509(dave));
      try {
        const access = await observer.read({ nodeId: GUARDED, attributeId: AttributeIds.UserAccessLevel });
        assert.equal(access.value.value & CURRENT_WRITE, 0, "UserAccessLevel lacks CurrentWrite for an Observer");
        const w = await observer.write({
          nodeId: GUARDED, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value: 7 } },
        });
        assert.equal(w, StatusCodes.BadUserAccessDenied);
      } finally {
        await observer.close();
      }
      // mallory's certificate is a configured user's, but not in user/trusted/certs: the validator refuses it
      // and the client learns only BadIdentityTokenRejected (Part 4 §5.6.3, Table 18), not why.
      const before = loginFailures();
      assert.match(await refusal(c.createSession(x509(mallory))), /BadIdentityTokenRejected/);
      await until(() => loginFailures() === before + 1, "the refusal in the operator log");
    });
  });

  test(`allow_anonymous false over ${over}: anonymous is refused, a user name on the same endpoint is not`, async () => {
    await withClient(policy, mode, async (c) => {
      const endpoints = await c.getEndpoints();
      const ep = endpoints.find((e) => e.securityMode === mode);
      assert.ok(!ep.userIdentityTokens.some((t) => t.tokenType === UserTokenType.Anonymous),
        "no anonymous token policy is offered");
      // node-opcua sends only tokens the endpoint description offers; a hostile client sends one anyway, so
      // the test adds the anonymous policy to the client's copy of the endpoints.
      for (const e of c._serverEndpoints) {
        if (e.securityMode !== mode) continue;
        e.userIdentityTokens.push({ policyId: "anonymous", tokenType: UserTokenType.Anonymous });
      }
      const before = loginFailures();
      assert.match(await refusal(c.createSession({ type: UserTokenType.Anonymous })), /BadIdentityTokenRejected/);
      await until(() => loginFailures() === before + 1, "the server's refusal in the operator log");
      const session = await c.createSession(login("bob", "builder"));
      const v = await session.read({ nodeId: "ns=0;i=2259", attributeId: AttributeIds.Value });
      assert.equal(v.statusCode, StatusCodes.Good);
      await session.close();
    });
  });

  test(`write_roles over ${over}: a user without the role gets BadUserAccessDenied and no CurrentWrite, one with it writes`, async () => {
    await withClient(policy, mode, async (c) => {
      const write = (session, value) => session.write({
        nodeId: GUARDED, attributeId: AttributeIds.Value, value: { value: { dataType: DataType.Double, value } },
      });
      const userAccess = async (session) =>
        (await session.read({ nodeId: GUARDED, attributeId: AttributeIds.UserAccessLevel })).value.value;

      const observer = await c.createSession(login("bob", "builder"));
      try {
        assert.equal(await userAccess(observer) & CURRENT_WRITE, 0, "an Observer's UserAccessLevel lacks CurrentWrite");
        const access = await observer.read({ nodeId: GUARDED, attributeId: AttributeIds.AccessLevel });
        assert.ok((access.value.value & CURRENT_WRITE) !== 0, "the variable itself is writable (AccessLevel)");
        assert.equal(await write(observer, 99), StatusCodes.BadUserAccessDenied);
      } finally {
        await observer.close();
      }
      const operator = await c.createSession(login("alice", "wonderland"));
      try {
        assert.ok((await userAccess(operator) & CURRENT_WRITE) !== 0, "an Operator's UserAccessLevel has CurrentWrite");
        assert.equal(await write(operator, 42.25), StatusCodes.Good);
        const r = await operator.read({ nodeId: GUARDED, attributeId: AttributeIds.Value });
        assert.equal(r.value.value, 42.25, "the Operator's value is there, not the Observer's");
      } finally {
        await operator.close();
      }
    });
  });
}
