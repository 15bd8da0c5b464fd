// What a read of a module's exported constant or class costs in a loop, the
// module's own export or an imported one, against a private one: the cost
// behind the private copies of US_PER_MS in src/core/time.ts and of
// NOMINATE_FRACTION in src/core/allocation/candidates.ts, and once behind
// Decision's module of its own (src/core/decision.ts says what this shows).
//
//   deno run -A bench/module_reads.ts [--rounds 21]
//   bun bench/module_reads.ts
//   tsx bench/module_reads.ts
//
// Each case is a module of its own, written from source text to a temporary
// directory, so that no two share a loop and the JIT's feedback for it. A
// round runs every case for SLICE_OPS iterations, in turn; the figure per
// case is its median time over the rounds, in ns per iteration, and how much
// more than the private read of the same thing it costs.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const SLICE_OPS = 20_000_000;

/** The constant and the class that the cases read. */
const SHARED = `
export const K = 1000;
export class D { constructor(a) { this.a = a; } }
`;

const CONST_LOOP =
  "export function loop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * K) | 0; return s; }";
// Each object is kept a while, as a decision is, so that none is optimized away.
const CLASS_LOOP = "export function loop(n) { const kept = new Array(1024); let s = 0; " +
  "for (let i = 0; i < n; i++) { const d = new D(i); kept[i & 1023] = d; s = (s + d.a) | 0; } " +
  "return s; }";

/** Each case's module source: `shared` is the URL of a module exporting K and D. */
const CASES: Record<string, (shared: string) => string> = {
  "constant, own export": () => `export const K = 1000;\n${CONST_LOOP}`,
  "constant, imported": (shared) => `import { K } from "${shared}";\n${CONST_LOOP}`,
  "constant, private": () => `const K = 1000;\n${CONST_LOOP}`,
  "class, own export": () => `export class D { constructor(a) { this.a = a; } }\n${CLASS_LOOP}`,
  "class, imported": (shared) => `import { D } from "${shared}";\n${CLASS_LOOP}`,
  "class, private": () => `class D { constructor(a) { this.a = a; } }\n${CLASS_LOOP}`,
};

/** Which private case each case is measured against. */
const BASE: Record<string, string> = {
  "constant, own export": "constant, private",
  "constant, imported": "constant, private",
  "class, own export": "class, private",
  "class, imported": "class, private",
};

const { values } = parseArgs({ options: { rounds: { type: "string", default: "21" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  throw new RangeError("--rounds must be a whole number");
}

const dir = mkdtempSync(join(tmpdir(), "module-reads-"));
/** The URL of a module written to `dir` as `name` with `source`. */
function written(name: string, source: string): string {
  const path = join(dir, `${name}.mjs`);
  writeFileSync(path, source);
  return pathToFileURL(path).href;
}
const shared = written("shared", SHARED);
const loops = new Map<string, (n: number) => number>();
try {
  let i = 0;
  for (const [name, source] of Object.entries(CASES)) {
    loops.set(name, (await import(written(`case${i++}`, source(shared)))).loop);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const times = new Map<string, number[]>([...loops.keys()].map((name) => [name, []]));
let sink = 0;
for (let round = 0; round <= rounds; round++) {
  for (const [name, loop] of loops) {
    const t0 = performance.now();
    sink ^= loop(SLICE_OPS);
    const ms = performance.now() - t0;
    if (round > 0) times.get(name)!.push(ms); // round 0 warms every loop up
  }
}
if (sink === 0.5) console.log("unreachable"); // keeps the work observable

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const nsPer = (name: string) => median(times.get(name)!) * 1e6 / SLICE_OPS;

const runtime = "Deno" in globalThis
  ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
  : "Bun" in globalThis
  ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `Node ${process.versions.node}`;
console.log(`${runtime}, ${rounds} rounds of ${SLICE_OPS} iterations, median ns per iteration:`);
for (const name of loops.keys()) {
  const ns = nsPer(name);
  const base = BASE[name];
  const more = base === undefined ? "" : `  (${(ns - nsPer(base)).toFixed(2)} ns against private)`;
  console.log(`  ${name.padEnd(22)} ${ns.toFixed(2)} ns${more}`);
}
