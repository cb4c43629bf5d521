// A node-opcua server exposing the nodes opcuad-bench uses, so `opcuad-bench --compare node-opcua` can
// run the same scenario against it (bench/opcuad_bench.cpp starts it as a child).
//
//   node node_opcua_server.js --port P [--nodes N] [--counters N --counter-interval MS] [--sessions S]
//                             [--security None,Basic256Sha256:SignAndEncrypt,...]
//
// Namespace 2 is urn:opcuad:bench, as in the configuration opcuad-bench generates for opcuad:
//   ns=2;s=Bench          folder under Objects (BrowseName 2:Bench)
//   ns=2;s=Bench.V1..VN   writable Doubles, BrowseNames 2:V1..2:VN (read, write, translate)
//   ns=2;i=1..N           read-only Double counters (BrowseNames 2:C1..), +1 every --counter-interval ms (sub)
// Browse uses the Server object (i=2253), which every server has. Anonymous only; the endpoints are those
// --security lists, as opcuad-bench spells them (default None). node-opcua offers every listed mode with
// every listed policy, and accepts any client certificate, as the bench's own is made per run.
// Once listening it writes "listening on opc.tcp://127.0.0.1:PORT" to standard error, the line the
// harness waits for, and it stops on SIGTERM or SIGINT.
"use strict";
const os = require("node:os");
const fs = require("node:fs");
const path = require("node:path");

function loadNodeOpcua() {
  const modules = path.join(__dirname, "../../tests/interop/node_modules");
  try {
    return require(path.join(modules, "node-opcua"));
  } catch (e) {
    process.stderr.write(
      `node_opcua_server: cannot load node-opcua from ${modules} (${e.code || e.message});\n` +
        "install it with: (cd tests/interop && npm ci)\n");
    process.exit(3);
  }
}

function parseArgs(argv) {
  const o = { port: 0, nodes: 100, counters: 0, counterInterval: 100, sessions: 1000, security: ["None"] };
  const names = { "--port": "port", "--nodes": "nodes", "--counters": "counters",
                  "--counter-interval": "counterInterval", "--sessions": "sessions" };
  for (let i = 2; i < argv.length; i += 2) {
    if (argv[i] === "--security" && argv[i + 1]) {
      o.security = argv[i + 1].split(",");
      continue;
    }
    const key = names[argv[i]];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isFinite(value) || value < 0) {
      process.stderr.write(`node_opcua_server: bad option ${argv[i]} ${argv[i + 1]}\n`);
      process.exit(2);
    }
    o[key] = value;
  }
  if (!o.port) {
    process.stderr.write("node_opcua_server: --port is required\n");
    process.exit(2);
  }
  return o;
}

// --security entries ("None", "POLICY:MODE") as node-opcua's policies and modes.
function securityOptions(ua, entries) {
  const policies = new Set();
  const modes = new Set();
  for (const entry of entries) {
    if (entry === "None" || entry === "None:None") {
      policies.add(ua.SecurityPolicy.None);
      modes.add(ua.MessageSecurityMode.None);
      continue;
    }
    const [policy, mode] = entry.split(":");
    if (!(policy in ua.SecurityPolicy) || (mode !== "Sign" && mode !== "SignAndEncrypt")) {
      process.stderr.write(`node_opcua_server: unknown security ${entry}\n`);
      process.exit(2);
    }
    policies.add(ua.SecurityPolicy[policy]);
    modes.add(ua.MessageSecurityMode[mode]);
  }
  return { securityPolicies: [...policies], securityModes: [...modes] };
}

async function main() {
  const opts = parseArgs(process.argv);
  const ua = loadNodeOpcua();
  const security = securityOptions(ua, opts.security);
  const pki = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-bench-node-opcua-"));
  const certificateManager = new ua.OPCUACertificateManager({
    rootFolder: pki,
    automaticallyAcceptUnknownCertificate: true,
  });
  const limit = Math.max(opts.nodes, opts.counters, 1000);
  const server = new ua.OPCUAServer({
    port: opts.port,
    hostname: "127.0.0.1",
    securityPolicies: security.securityPolicies,
    securityModes: security.securityModes,
    allowAnonymous: true,
    serverCertificateManager: certificateManager,
    maxConnectionsPerEndpoint: opts.sessions + 10,
    serverCapabilities: {
      maxSessions: opts.sessions + 10,
      maxSubscriptions: opts.sessions * 2 + 100,
      maxSubscriptionsPerSession: 100,
      maxMonitoredItems: Math.max(opts.counters, 1000) + 1000,
      maxMonitoredItemsPerSubscription: Math.max(opts.counters, 1000) + 1000,
      operationLimits: {
        maxNodesPerRead: limit,
        maxNodesPerWrite: limit,
        maxNodesPerBrowse: limit,
        maxNodesPerTranslateBrowsePathsToNodeIds: limit,
        maxMonitoredItemsPerCall: Math.max(opts.counters, 1000) + 1000,
      },
    },
  });
  await server.initialize();

  const addressSpace = server.engine.addressSpace;
  const ns = addressSpace.registerNamespace("urn:opcuad:bench");
  if (ns.index !== 2) {
    process.stderr.write(`node_opcua_server: urn:opcuad:bench got namespace index ${ns.index}, not 2\n`);
    process.exit(4);
  }
  const folder = ns.addFolder(addressSpace.rootFolder.objects, { browseName: "Bench", nodeId: "ns=2;s=Bench" });
  for (let k = 1; k <= opts.nodes; ++k) {
    ns.addVariable({
      componentOf: folder,
      browseName: `V${k}`,
      nodeId: `ns=2;s=Bench.V${k}`,
      dataType: "Double",
      accessLevel: "CurrentRead | CurrentWrite",
      userAccessLevel: "CurrentRead | CurrentWrite",
      value: new ua.Variant({ dataType: ua.DataType.Double, value: 0 }),
    });
  }
  const counters = [];
  for (let k = 1; k <= opts.counters; ++k) {
    counters.push(ns.addVariable({
      componentOf: folder,
      browseName: `C${k}`,
      nodeId: `ns=2;i=${k}`,
      dataType: "Double",
      minimumSamplingInterval: opts.counterInterval,
      value: new ua.Variant({ dataType: ua.DataType.Double, value: 0 }),
    }));
  }
  if (counters.length) {
    // Every counter changes at every tick, with the time of the tick as source timestamp, like opcuad's
    // simulated counters. Ticks are on absolute deadlines (start + n x interval): setInterval drifts
    // later by a little each time, which would lose a sample every few seconds.
    const start = Date.now();
    let n = 0;
    const tick = () => {
      ++n;
      const now = new Date();
      for (const v of counters) {
        v.setValueFromSource(new ua.Variant({ dataType: ua.DataType.Double, value: n }), ua.StatusCodes.Good, now);
      }
      setTimeout(tick, Math.max(0, start + (n + 1) * opts.counterInterval - Date.now()));
    };
    setTimeout(tick, opts.counterInterval);
  }

  await server.start();
  process.stderr.write(`listening on opc.tcp://127.0.0.1:${opts.port} (node-opcua ${server.engine.buildInfo.softwareVersion})\n`);
  const stop = async () => {
    await server.shutdown(0);
    fs.rmSync(pki, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((e) => {
  process.stderr.write(`node_opcua_server: ${e.stack || e}\n`);
  process.exit(1);
});
