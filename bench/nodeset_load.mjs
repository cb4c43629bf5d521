#!/usr/bin/env node
// Loading companion specifications: opcuad against node-opcua's own NodeSet2 loader on the same files, in the
// same run (docs/PERFORMANCE.md, "Loading companion specifications").
//
//   node bench/nodeset_load.mjs [--opcuad build/t/daemon/opcuad] [--nodesets DIR] [--runs 5] [--machines N]
//                               [--machine-runs 3]
//
// For every companion specification together (DI, IA, ISA95-JOBCONTROL, Machinery and its Jobs, Result and
// Examples, MachineTool, PackML, MachineVision, AutoID, Robotics), the medians of --runs runs of:
//   - opcuad check-config: wall and CPU time (user + system) and maximum RSS (/usr/bin/time), minus the same
//     for a server file without node files (the baseline);
//   - the daemon from its start to "listening" (the address space built and served): wall and CPU time
//     (/proc/<pid>/stat) and peak RSS (VmHWM), minus the baseline daemon's;
//   - node-opcua's generateAddressSpace (node-opcua's namespace 0, then the same files) in a fresh node
//     process: CPU time of the call and the process's peak RSS, minus a baseline process that loads
//     node-opcua and creates the empty AddressSpace.
// --machines N (default 10000; 0 skips it) also writes bench/nodeset_machines.py's model of N machines of 100
// nodes (1,000,000 nodes by default) into a temporary folder and measures opcuad check-config and the daemon
// on it, with the bytes per node (peak RSS over the baseline, divided by the nodes).
// node-opcua is the one tests/interop installs (npm ci there). The machine's load average and CPU steal
// during the run are printed: the figures of a shared machine are only as quiet as it was.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, "..");
const SPECS = [
  "DI/Opc.Ua.Di.NodeSet2.xml",
  "IA/Opc.Ua.IA.NodeSet2.xml",
  "ISA95-JOBCONTROL/opc.ua.isa95-jobcontrol.nodeset2.xml",
  "Machinery/Opc.Ua.Machinery.NodeSet2.xml",
  "Machinery/Jobs/Opc.Ua.Machinery.Jobs.Nodeset2.xml",
  "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml",
  "Machinery/Opc.Ua.Machinery.Examples.NodeSet2.xml",
  "MachineTool/Opc.Ua.MachineTool.NodeSet2.xml",
  "PackML/Opc.Ua.PackML.NodeSet2.xml",
  "MachineVision/Opc.Ua.MachineVision.NodeSet2.xml",
  "AutoID/Opc.Ua.AutoID.NodeSet2.xml",
  "Robotics/Opc.Ua.Robotics.NodeSet2.xml",
];

// The child processes that measure node-opcua: `--child load <files...>`, `--child baseline` (node-opcua
// loaded, the AddressSpace empty) or `--child bare` (node alone).
if (process.argv[2] === "--child" && process.argv[3] === "bare") {
  process.stdout.write(JSON.stringify({ maxrss_kb: process.resourceUsage().maxRSS }) + "\n");
  process.exit(0);
}
if (process.argv[2] === "--child") {
  const require = createRequire(path.join(ROOT, "tests/interop/package.json"));
  const { AddressSpace, generateAddressSpace, nodesets } = require("node-opcua");
  const addressSpace = AddressSpace.create();
  const files = process.argv[3] === "load" ? [nodesets.standard, ...process.argv.slice(4)] : [];
  const log = console.log;
  console.log = () => {};  // node-opcua logs every structure it registers
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  if (files.length > 0) await generateAddressSpace(addressSpace, files);
  const wall = Number(process.hrtime.bigint() - wall0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  console.log = log;
  const nodes = addressSpace.getNamespaceArray().reduce((n, ns) => n + ns._nodeid_index.size, 0);
  process.stdout.write(JSON.stringify({ wall_ms: wall, cpu_ms: (cpu.user + cpu.system) / 1000,
    maxrss_kb: process.resourceUsage().maxRSS, nodes }) + "\n");
  process.exit(0);
}

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const OPCUAD = path.resolve(option("--opcuad", path.join(ROOT, "build/t/daemon/opcuad")));
const NODESETS = path.resolve(option("--nodesets", process.env.OPCUAD_NODESETS_DIR || path.join(ROOT, "../shared/opcua-nodesets")));
const RUNS = Number(option("--runs", "5"));
const MACHINES = Number(option("--machines", "10000"));
const MACHINE_RUNS = Number(option("--machine-runs", "3"));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const TICK = Number(spawnSync("getconf", ["CLK_TCK"]).stdout.toString()) || 100;

function serverFile(dir, name, nodeFiles) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify({
    application_uri: "urn:opcuad:bench:nodeset-load",
    endpoints: [{ url: "opc.tcp://127.0.0.1:0" }],
    node_files: nodeFiles,
  }, null, 1));
  return file;
}

// opcuad check-config under /usr/bin/time: { wall_ms, cpu_ms, maxrss_kb }.
function checkConfig(file) {
  const r = spawnSync("/usr/bin/time", ["-f", "TIME %e %U %S %M", OPCUAD, "check-config", "--config", file], { maxBuffer: 1 << 26 });
  const err = r.stderr.toString();
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(err);
  if (r.status !== 0 || !m) throw new Error(`opcuad check-config ${file} failed:\n${err.slice(-2000)}`);
  return { wall_ms: Number(m[1]) * 1000, cpu_ms: (Number(m[2]) + Number(m[3])) * 1000, maxrss_kb: Number(m[4]) };
}

// The daemon from its start to "listening": { wall_ms, cpu_ms, maxrss_kb } at that moment, then SIGTERM.
function daemonReady(file) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(OPCUAD, ["--config", file], { stdio: ["ignore", "ignore", "pipe"] });
    let output = "";
    let done = false;
    child.stderr.on("data", (chunk) => {
      output += chunk;
      if (done || !/listening on opc\.tcp:/.test(output)) return;
      done = true;
      const wall = Number(process.hrtime.bigint() - t0) / 1e6;
      const stat = fs.readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
      const cpu = ((Number(stat[11]) + Number(stat[12])) * 1000) / TICK;
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]);
      child.kill("SIGTERM");
      child.on("exit", () => resolve({ wall_ms: wall, cpu_ms: cpu, maxrss_kb: hwm }));
    });
    child.on("exit", (code) => { if (!done) reject(new Error(`opcuad exited with ${code}:\n${output.slice(-2000)}`)); });
  });
}

// node-opcua in a fresh process: { wall_ms, cpu_ms, maxrss_kb, nodes }.
function nodeOpcua(args) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", ...args], { maxBuffer: 1 << 26 });
  const line = r.stdout.toString().trim().split("\n").pop();
  if (r.status !== 0) throw new Error(`node-opcua ${args[0]} failed:\n${r.stderr.toString().slice(-2000)}`);
  return JSON.parse(line);
}

function cpuTimes() {
  const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), steal: f[7] || 0 };
}

// Runs `measure` `n` times, returns the medians of each field.
async function medians(measure, n = RUNS) {
  const runs = [];
  for (let i = 0; i < n; ++i) runs.push(await measure());
  const out = {};
  for (const key of Object.keys(runs[0])) out[key] = median(runs.map((r) => r[key]));
  return out;
}

const fmt = (ms) => `${(ms / 1000).toFixed(3)} s`;
const mib = (kb) => `${(kb / 1024).toFixed(1)} MiB`;

async function main() {
  const missing = SPECS.filter((f) => !fs.existsSync(path.join(NODESETS, f)));
  if (missing.length) throw new Error(`missing in ${NODESETS}: ${missing.join(", ")} (--nodesets or OPCUAD_NODESETS_DIR)`);
  if (!fs.existsSync(OPCUAD)) throw new Error(`no opcuad at ${OPCUAD} (--opcuad)`);
  const files = SPECS.map((f) => path.join(NODESETS, f));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opcuad-nodeset-load-"));
  const stat0 = cpuTimes();
  const load0 = os.loadavg();
  try {
    console.log(`opcuad ${OPCUAD}\nnodesets ${NODESETS} (${files.length} files, ${files.reduce((n, f) => n + fs.statSync(f).size, 0)} bytes)`);
    console.log(`${os.cpus().length} CPU(s) ${os.cpus()[0].model}; medians of ${RUNS} runs`);
    const base = serverFile(dir, "baseline.json", []);
    const all = serverFile(dir, "all.json", files);

    const ccBase = await medians(async () => checkConfig(base));
    const ccAll = await medians(async () => checkConfig(all));
    const dBase = await medians(() => daemonReady(base));
    const dAll = await medians(() => daemonReady(all));
    const noBare = await medians(async () => nodeOpcua(["bare"]));
    const noBase = await medians(async () => nodeOpcua(["baseline"]));
    const noAll = await medians(async () => nodeOpcua(["load", ...files]));

    console.log("\nall companion specifications together:");
    console.log(`  opcuad check-config   wall ${fmt(ccAll.wall_ms)}  CPU ${fmt(ccAll.cpu_ms)}  max RSS ${mib(ccAll.maxrss_kb)} ` +
      `(baseline ${mib(ccBase.maxrss_kb)}, CPU ${fmt(ccBase.cpu_ms)}; the files: +${mib(ccAll.maxrss_kb - ccBase.maxrss_kb)})`);
    console.log(`  opcuad daemon ready   wall ${fmt(dAll.wall_ms)}  CPU ${fmt(dAll.cpu_ms)}  peak RSS ${mib(dAll.maxrss_kb)} ` +
      `(baseline ${mib(dBase.maxrss_kb)}, CPU ${fmt(dBase.cpu_ms)}; the files: +${mib(dAll.maxrss_kb - dBase.maxrss_kb)})`);
    console.log(`  node-opcua generateAddressSpace  wall ${fmt(noAll.wall_ms)}  CPU ${fmt(noAll.cpu_ms)}  peak RSS ${mib(noAll.maxrss_kb)} ` +
      `(baseline process with node-opcua loaded ${mib(noBase.maxrss_kb)}: the address space +${mib(noAll.maxrss_kb - noBase.maxrss_kb)}; ` +
      `node alone ${mib(noBare.maxrss_kb)}: +${mib(noAll.maxrss_kb - noBare.maxrss_kb)}; ${noAll.nodes} nodes)`);
    const noMem = noAll.maxrss_kb - noBase.maxrss_kb;
    console.log(`  CPU: node-opcua / opcuad check-config = ${(noAll.cpu_ms / ccAll.cpu_ms).toFixed(1)}x, ` +
      `/ opcuad daemon ready = ${(noAll.cpu_ms / dAll.cpu_ms).toFixed(1)}x`);
    const ratio = (a, b) => `${(a / b).toFixed(1)}x`;
    console.log(`  memory, node-opcua's address space (over node-opcua loaded) / opcuad: whole check-config ${ratio(noMem, ccAll.maxrss_kb)}, ` +
      `whole daemon ${ratio(noMem, dAll.maxrss_kb)}, check-config's increase ${ratio(noMem, ccAll.maxrss_kb - ccBase.maxrss_kb)}, ` +
      `daemon's increase ${ratio(noMem, dAll.maxrss_kb - dBase.maxrss_kb)}`);
    const noTotal = noAll.maxrss_kb - noBare.maxrss_kb;
    console.log(`  memory, node-opcua (over node alone) / opcuad: whole check-config ${ratio(noTotal, ccAll.maxrss_kb)}, ` +
      `whole daemon ${ratio(noTotal, dAll.maxrss_kb)}`);

    if (MACHINES > 0) {
      const out = path.join(dir, "machines");
      const gen = spawnSync("python3", [path.join(HERE, "nodeset_machines.py"), "--examples",
        path.join(NODESETS, "Machinery/Opc.Ua.Machinery.Examples.NodeSet2.xml"), "--out", out, "--machines", String(MACHINES)]);
      if (gen.status !== 0) throw new Error(`nodeset_machines.py failed:\n${gen.stderr}`);
      const generated = gen.stdout.toString().trim().split("\n");
      const nodes = MACHINES * 100;
      const bytes = generated.reduce((n, f) => n + fs.statSync(f).size, 0);
      const big = serverFile(dir, "machines.json", [...files.slice(0, 1), files[3], files[6], ...generated]);
      const ccBig = await medians(async () => checkConfig(big), MACHINE_RUNS);
      const dBig = await medians(() => daemonReady(big), MACHINE_RUNS);
      console.log(`\n${MACHINES} machines, ${nodes} nodes in ${generated.length} files (${bytes} bytes) with DI and Machinery, ` +
        `medians of ${MACHINE_RUNS} runs:`);
      console.log(`  opcuad check-config   wall ${fmt(ccBig.wall_ms)}  CPU ${fmt(ccBig.cpu_ms)}  max RSS ${mib(ccBig.maxrss_kb)}` +
        ` (${Math.round(((ccBig.maxrss_kb - ccBase.maxrss_kb) * 1024) / nodes)} bytes/node over the baseline)`);
      console.log(`  opcuad daemon ready   wall ${fmt(dBig.wall_ms)}  CPU ${fmt(dBig.cpu_ms)}  peak RSS ${mib(dBig.maxrss_kb)}` +
        ` (${Math.round(((dBig.maxrss_kb - dBase.maxrss_kb) * 1024) / nodes)} bytes/node over the baseline)`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const stat1 = cpuTimes();
  const steal = (100 * (stat1.steal - stat0.steal)) / Math.max(1, stat1.total - stat0.total);
  console.log(`\nmachine: load average ${load0.map((x) => x.toFixed(2)).join(" ")} at the start, ` +
    `${os.loadavg().map((x) => x.toFixed(2)).join(" ")} at the end; CPU steal ${steal.toFixed(1)} % during the run`);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
