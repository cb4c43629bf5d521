// Starts the real opcuad daemon on a free port with a test configuration, and stops it.
"use strict";
const { spawn, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const BIN = process.env.OPCUAD_BIN || path.join(__dirname, "../../build/release/daemon/opcuad");

function hashPassword(password) {
  return execFileSync(BIN, ["--hash-password"], { input: password + "\n" }).toString().trim();
}

// Resolves to { url, pki, stop(), output(), signal(name), exited } once the daemon logs the port it listens on.
// `endpoint` adds members to the one endpoint (security_policies, security_modes); `security` is the server
// file's security section, its PKI inside the daemon's temporary folder unless given (result.pki); `config`
// adds top-level keys to the server file, `env` variables to the daemon's environment.
async function startDaemon({ users = [], limits = {}, endpoint = {}, security = {}, config: extra = {}, env = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-interop-"));
  const pki = security.pki_directory || path.join(dir, "pki");
  const config = {
    application_uri: "urn:opcuad:interop",
    endpoints: [{ url: "opc.tcp://127.0.0.1:0", ...endpoint }],
    // Anonymous sessions write in most tests (the built-in default configuration allows it too).
    security: { pki_directory: pki, anonymous_write: true, ...security },
    // The built-in limits unless a test says otherwise: the suite opens 200 sessions at once from
    // 127.0.0.1, as a gateway starting up does.
    limits,
    users: users.map(([name, password]) => ({ name, password_hash: hashPassword(password) })),
    namespaces: ["urn:opcuad:interop:nodes"],
    node_files: [path.join(__dirname, "nodes.json")],
    ...extra,
  };
  const file = path.join(dir, "opcuad.json");
  fs.writeFileSync(file, JSON.stringify(config, null, 1));
  const child = spawn(BIN, ["--config", file], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env } });
  let output = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("opcuad did not start:\n" + output)), 60000);
    child.stderr.on("data", (chunk) => {
      output += chunk;
      const m = /listening on opc\.tcp:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(`opc.tcp://127.0.0.1:${m[1]}`);
      }
    });
    child.on("exit", (code) => reject(new Error(`opcuad exited with ${code}:\n${output}`)));
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return {
    url,
    pki,
    configFile: file,
    exited,
    signal: (name) => child.kill(name),
    output: () => output,
    async stop() {
      child.kill("SIGTERM");
      const result = await exited;
      fs.rmSync(dir, { recursive: true, force: true });
      return result;
    },
  };
}

// A node-opcua client for the tests on SecurityPolicy None: no reconnection (a test sees a lost connection
// as it happens) and a 60 s session; `options` override any of these.
function plainClient(options = {}) {
  const { OPCUAClient, MessageSecurityMode, SecurityPolicy } = require("node-opcua");
  return OPCUAClient.create({
    endpointMustExist: false,
    securityMode: MessageSecurityMode.None,
    securityPolicy: SecurityPolicy.None,
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    requestedSessionTimeout: 60000,
    ...options,
  });
}

// Resolves once predicate() is true, polling every 10 ms; rejects after `ms` naming what it waited for.
function until(predicate, what, ms = 5000) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const poll = () => {
      if (predicate()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

// A test file's teardown: closes the session and disconnects the client when they were opened, and stops
// the daemon, which must exit with 0 on SIGTERM.
async function closeAll({ session, client, daemon }) {
  if (session) await session.close();
  if (client) await client.disconnect();
  if (daemon) {
    const { code } = await daemon.stop();
    require("node:assert/strict").equal(code, 0, "opcuad exits cleanly on SIGTERM:\n" + daemon.output());
  }
}

module.exports = { startDaemon, until, plainClient, closeAll, BIN };
