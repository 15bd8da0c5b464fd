// How long a membership cluster takes to form in the simulator (virtual
// time): every node starts at 0 and joins through node 0; formed when every
// node holds every other alive. The mean and the slowest over consecutive
// seeds, per size. Membership changes that bound what a node sends (the
// reflection gate, the amplification bounds) must not move these.
//
//   deno run -A bench/sim_formation.ts [--sizes 40,200] [--runs 12]
import process from "node:process";
import { parseArgs } from "node:util";
import { Cluster } from "../src/sim/faces/cluster.ts";
import { waitFor } from "../src/sim/scenarios/report.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    sizes: { type: "string", default: "40,200" },
    runs: { type: "string", default: "12" },
  },
});
const runs = Number(values.runs);
for (const size of values.sizes.split(",").map(Number)) {
  const times: number[] = [];
  for (let seed = 1; seed <= runs; seed++) {
    const cluster = new Cluster({ seed, size });
    times.push(waitFor(cluster, () => cluster.converged(), 60_000, 10) ?? Infinity);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(
    `${size} members, ${runs} seeds: formed in ${mean.toFixed(0)} ms on average, ` +
      `slowest ${Math.max(...times)} ms (${times.join(", ")})`,
  );
}
