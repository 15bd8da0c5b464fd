// How fast the simulator runs a large fleet: skewed demand (as the accuracy
// rows at 200 and 1000 nodes offer it) for a number of virtual seconds, with
// the wall and CPU time it took. The CPU time is the process's, user + system:
// on a shared machine it is the figure to compare, the wall time the one a
// user waits for. The task runs it on Bun, where the simulator is a fifth
// faster than on Deno; it runs on either, with the same outcome.
//
//   deno task bench:sim [--nodes 200] [--seconds 60] [--seed 1]
import process from "node:process";
import { parseArgs } from "node:util";
import { run } from "../src/sim/accuracy/run.ts";
import { largeRows } from "../src/sim/accuracy/large.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    nodes: { type: "string", default: "200" },
    seconds: { type: "string", default: "60" },
    seed: { type: "string", default: "1" },
    scenario: { type: "string", default: "skewed" },
  },
});
const nodes = Number(values.nodes);
const endMs = Number(values.seconds) * 1_000;
const seed = Number(values.seed);
if (!Number.isInteger(nodes) || nodes < 200) throw new RangeError(`--nodes: at least 200`);
if (!(endMs > 5_000)) throw new RangeError(`--seconds: more than 5 (traffic starts at 5 s)`);
const row = largeRows(nodes).find((s) => s.id === `${values.scenario}-${nodes}`);
if (row === undefined) throw new RangeError(`--scenario: no row ${values.scenario}-${nodes}`);

const cpu0 = process.cpuUsage();
const wall0 = performance.now();
const outcome = run({ ...row, endMs, steady: undefined }, seed);
const wallS = (performance.now() - wall0) / 1_000;
const cpu = process.cpuUsage(cpu0);
const cpuS = (cpu.user + cpu.system) / 1e6;
console.log(
  `${row.id}, ${endMs / 1_000} virtual seconds, seed ${seed}: ${wallS.toFixed(1)} s wall, ` +
    `${cpuS.toFixed(1)} s CPU (user ${(cpu.user / 1e6).toFixed(1)}, system ${
      (cpu.system / 1e6).toFixed(1)
    }); steady ${outcome.steady.toFixed(3)} R, peak ${outcome.peak.toFixed(2)} R`,
);
