// The request path of this tree against another tree's (an earlier release),
// both in one process, in alternating slices, so that a slow patch of a shared
// machine and the process's own luck hit both alike.
//
//   deno run -A bench/check_ab.ts --against DIR [--case hot|turn] [--rounds 41] [--swap] [--json]
//
// DIR is the other tree's root (its mod.ts is imported). Which tree is
// imported and built first matters, by some 5% on Bun: `--swap` makes this
// one first (else the other is), and a comparison runs both ways and takes
// the geometric mean of the two (`scripts/bench-compare.sh`). Each slice runs one
// tree's check loop for SLICE_OPS checks; a round runs A B B A and takes the
// ratio of B's time to A's. The median ratio over the rounds is the figure:
// above 1, this tree is slower. Each tree's loop is compiled from the same
// source text on its own (`new Function`), so the two never share the JIT's
// feedback for the call site: a loop that saw both guards would be polymorphic
// and slower for both. `scripts/bench-compare.sh` runs this on Deno, Bun and
// Node, several processes each.
import process from "node:process";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Guard, Limit } from "../mod.ts";

const SLICE_OPS = 250_000;

interface AnyGuard {
  check(key: string): { allowed: boolean };
}
type Loop = (guard: AnyGuard, keys: readonly string[], n: number) => number;

const LOOPS: Record<string, string> = {
  hot:
    "let s = 0; for (let i = 0; i < n; i++) if (g.check('api:tenant-42').allowed) s++; return s;",
  turn:
    "let s = 0; for (let i = 0; i < n; i++) if (g.check(keys[i & 4095]).allowed) s++; return s;",
};

function compile(name: string): Loop {
  const source = LOOPS[name];
  if (source === undefined) throw new RangeError(`--case must be hot or turn, not ${name}`);
  return new Function("g", "keys", "n", source) as Loop;
}

/** A guard that every check allows, from a tree's own `Guard` and `Limit`. */
async function spawnFrom(mod: { Guard: typeof Guard; Limit: typeof Limit }): Promise<AnyGuard> {
  return await mod.Guard.builder().defaultLimit(mod.Limit.perSecond(4_000_000_000)).spawn();
}

function timeMs(loop: Loop, guard: AnyGuard, keys: readonly string[]): number {
  const t0 = performance.now();
  if (loop(guard, keys, SLICE_OPS) === -1) console.log("unreachable"); // keeps the work observable
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const { values } = parseArgs({
  options: {
    against: { type: "string" },
    case: { type: "string", default: "hot" },
    rounds: { type: "string", default: "41" },
    swap: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  },
});
if (values.against === undefined) {
  console.error("--against DIR: the root of the tree to compare with");
  process.exit(2);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`--rounds must be a whole number above 0, not ${values.rounds}`);
  process.exit(2);
}
const roots = [values.against, new URL("..", import.meta.url).pathname];
const order = values.swap ? [1, 0] : [0, 1];
const guards: AnyGuard[] = [];
for (const t of order) {
  guards[t] = await spawnFrom(await import(pathToFileURL(`${roots[t]}/mod.ts`).href));
}
const loops = [compile(values.case!), compile(values.case!)];
const keys = Array.from({ length: 4096 }, (_, i) => `tenant:${i}`);
for (let w = 0; w < 8; w++) for (const t of order) timeMs(loops[t], guards[t], keys); // warm-up
const ratios: number[] = [];
const ns: [number[], number[]] = [[], []];
for (let r = 0; r < rounds; r++) {
  const a1 = timeMs(loops[0], guards[0], keys);
  const b1 = timeMs(loops[1], guards[1], keys);
  const b2 = timeMs(loops[1], guards[1], keys);
  const a2 = timeMs(loops[0], guards[0], keys);
  ratios.push((b1 + b2) / (a1 + a2));
  ns[0].push(((a1 + a2) * 1e6) / (2 * SLICE_OPS));
  ns[1].push(((b1 + b2) * 1e6) / (2 * SLICE_OPS));
}
const result = { ratio: median(ratios), beforeNs: median(ns[0]), afterNs: median(ns[1]) };
if (values.json) {
  console.log(JSON.stringify(result));
} else {
  console.log(
    `${values.case}: ${result.beforeNs.toFixed(1)} ns before, ${
      result.afterNs.toFixed(1)
    } ns now, median ratio ${result.ratio.toFixed(3)} over ${rounds} rounds`,
  );
}
