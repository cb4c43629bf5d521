// The client side of the secured interop tests (security.test.js, security_users.test.js): node-opcua's
// certificate manager in a folder of its own (it makes the client's application certificate unless a test
// brings one, and accepts the daemon's), clients that use it, and the teardown both files share.
"use strict";
const assert = require("node:assert/strict");
const fs = require("node:fs");
const { OPCUAClient, OPCUACertificateManager } = require("node-opcua");

// Resolves to an initialised certificate manager whose PKI folder is `rootFolder`.
async function clientCertificateManager(rootFolder) {
  const manager = new OPCUACertificateManager({
    rootFolder, automaticallyAcceptUnknownCertificate: true, disableFileWatchers: true,
  });
  await manager.initialize();
  return manager;
}

// A client for `policy` and `mode` with the manager's application certificate, or with `certificate`
// ({ pemFile, keyFile }) when given; it does not retry a refused connection.
function secureClient(certificateManager, policy, mode, certificate) {
  return OPCUAClient.create({
    endpointMustExist: false,
    securityMode: mode,
    securityPolicy: policy,
    clientCertificateManager: certificateManager,
    ...(certificate ? { certificateFile: certificate.pemFile, privateKeyFile: certificate.keyFile } : {}),
    applicationUri: "urn:opcuad:interop:client",
    applicationName: "opcuad interop client",
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    requestedSessionTimeout: 60000,
  });
}

// For test.after: disposes of the certificate manager, stops the daemon (which must exit 0 on SIGTERM) and
// removes `dir`, the client's folder; any of them may be missing when test.before failed.
async function tearDown({ daemon, certificateManager, dir }) {
  if (process.env.OPCUAD_DEBUG && daemon) console.log(daemon.output());
  if (certificateManager) await certificateManager.dispose();
  if (daemon) {
    const { code } = await daemon.stop();
    assert.equal(code, 0, "opcuad exits cleanly on SIGTERM:\n" + daemon.output());
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

module.exports = { clientCertificateManager, secureClient, tearDown };
