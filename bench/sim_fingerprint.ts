// A fingerprint of every datagram a simulated fleet sends (sender, address,
// bytes) over a run of skewed demand, with the count of datagrams and of
// requests admitted: a change meant to make the simulator or the core
// cheaper, and nothing else, leaves it as it was. Compare a checkout before
// the change with one after; `--chaos` adds loss, duplication, delay, clock
// drift, a crash, a leave, a restart and a late join.
//
//   node_modules/deno/deno run -A bench/sim_fingerprint.ts [--nodes 200] [--seconds 10] [--seed 1] [--chaos]
import { createHash } from "node:crypto";
import process from "node:process";
import { parseArgs } from "node:util";
import { LIMIT, skewed } from "../src/sim/accuracy/run.ts";
import { Fleet } from "../src/sim/faces/fleet.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    nodes: { type: "string", default: "200" },
    seconds: { type: "string", default: "10" },
    seed: { type: "string", default: "1" },
    chaos: { type: "boolean", default: false },
  },
});
const nodes = Number(values.nodes);
const seconds = Number(values.seconds);
const chaos = values.chaos;
const fleet = new Fleet({
  seed: Number(values.seed),
  size: nodes,
  limit: LIMIT,
  ...(chaos
    ? {
      faults: { lossRate: 0.2, duplicateRate: 0.05, delayRate: 0.1, delayMaxMs: 50 },
      clockDrift: 0.02,
    }
    : {}),
});
const hash = createHash("sha256");
let datagrams = 0;
fleet.onSend = (from, bytes, to) => {
  datagrams++;
  hash.update(`${from}>${to}:`);
  hash.update(bytes);
};
let admitted = 0;
for (let t = 0; t < seconds * 1_000; t += 1_000) {
  // Traffic starts at 5 s, as in the accuracy rows.
  if (t === 5_000) { for (let i = 0; i < fleet.size; i++) fleet.setDemand(i, skewed(i)); }
  if (chaos && t === 6_000) {
    fleet.crash(3);
    fleet.leave(4);
  }
  if (chaos && t === 8_000) {
    fleet.restart(3);
    fleet.add();
  }
  fleet.runUntil(t + 1_000);
  for (let i = 0; i < fleet.size; i++) admitted += fleet.take(i).admitted;
}
console.log(
  `${nodes} nodes, ${seconds} s${chaos ? ", chaos" : ""}: ${datagrams} datagrams, ` +
    `${admitted} admitted, ${hash.digest("hex").slice(0, 16)}`,
);
