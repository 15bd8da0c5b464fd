// A test-only fleet member: runs a guard in a fleet and offers load to one
// key at a given rate, printing a JSON line a second of what it admitted.
//
//   fleet_member.ts --bind 127.0.0.1:0 --seeds 127.0.0.1:7001 --limit 300 --rate 200
//
// The first line is {"ready": "<advertised address>"}. SIGTERM leaves and exits 0;
// so does the end of stdin, so that a member outlives no parent, however it died.
// With --standby the member loads, prints {"standby": true} and binds only when
// told "start" on stdin: a restart at once, without the runtime's start-up time.
import process from "node:process";
import { parseArgs } from "node:util";
import { Buffer } from "node:buffer";
import { type GossipAuthMode, Guard, PartitionPolicy, Secret } from "../../mod.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    bind: { type: "string", default: "127.0.0.1:0" },
    seeds: { type: "string", default: "" },
    limit: { type: "string", default: "300" },
    rate: { type: "string", default: "0" },
    burst: { type: "string", default: "10" },
    // How often it reports: finer reports place a burst in its second.
    "report-ms": { type: "string", default: "1000" },
    policy: { type: "string", default: "holddown:2s" },
    period: { type: "string", default: "100" },
    auth: { type: "string", default: "off" },
    secret: { type: "string" }, // base64
    standby: { type: "boolean", default: false },
  },
});
if (values.standby) {
  console.log(JSON.stringify({ standby: true }));
  await new Promise<void>((resolve) => {
    const wait = (chunk: unknown) => {
      if (!String(chunk).split("\n").some((l) => l.trim() === "start")) return;
      process.stdin.off("data", wait);
      resolve();
    };
    process.stdin.on("data", wait);
  });
}
const secrets = values.secret
  ? [new Secret(new Uint8Array(Buffer.from(values.secret, "base64")))]
  : [];

const guard = await Guard.builder()
  .bind(values.bind!)
  .seeds(values.seeds!.split(",").filter((s) => s !== ""))
  .limit(Number(values.limit))
  .burst(Number(values.burst))
  .partitionPolicy(PartitionPolicy.parse(values.policy!))
  .protocolPeriodMs(Number(values.period))
  .gossipAuth(values.auth as GossipAuthMode, secrets)
  .spawn();
console.log(JSON.stringify({ ready: guard.address() }));

let rate = Number(values.rate);
let admitted = 0;
let denied = 0;
let owed = 0;
let last = performance.now();
let reportedAt = performance.now();
const offer = () => {
  const now = performance.now();
  owed += ((now - last) * rate) / 1000;
  last = now;
  for (; owed >= 1; owed--) {
    if (guard.check("k").allowed) admitted++;
    else denied++;
  }
};
// No load, no timer: an idle member's CPU is its guard's alone.
let load = rate > 0 ? setInterval(offer, 5) : undefined;
const report = setInterval(() => {
  const s = guard.stats();
  const now = performance.now();
  console.log(JSON.stringify({
    atMs: Date.now(),
    // What this report covers: timers run late on a loaded machine, and a
    // rate is what was admitted over the time it was admitted in.
    spanMs: now - reportedAt,
    admitted,
    denied,
    clusterSize: s.clusterSize,
    countedSize: s.countedSize,
    suspects: s.suspects,
    share: guard.share("k"),
    running: guard.isRunning(),
    traffic: guard.traffic(),
    cpuMicros: process.cpuUsage().user + process.cpuUsage().system,
  }));
  admitted = denied = 0;
  reportedAt = now;
}, Number(values["report-ms"]));

// Commands on stdin: "rate <n>" changes the load; "leave" leaves and exits.
process.stdin.on("data", async (chunk) => {
  for (const line of String(chunk).split("\n")) {
    const [cmd, arg] = line.trim().split(" ");
    if (cmd === "rate") {
      rate = Number(arg);
      last = performance.now();
      load ??= setInterval(offer, 5);
    }
    if (cmd === "leave") await stop();
  }
});

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (load !== undefined) clearInterval(load);
  clearInterval(report);
  await guard.leave();
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.stdin.on("end", () => void stop());
