// Imports run one way: no file of the library reaches, through its imports,
// back to itself, and no layer imports one above it. DESIGN.md says so under
// "Surface and speed budgets" ("imports run one way (no cycles, none up the
// layers), checked by a test"); this is that test. Type-only imports count:
// a type that names its user back ties the two files as surely as a value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { sources } from "./sources.ts";

/**
 * What each layer may import besides itself, read off DESIGN.md's "Layers"
 * picture and the rules under it: `proto` (the wire format) stands alone;
 * `core` is sans-I/O over `proto` and imports nothing from `runtime`,
 * `http` or `sim`; `runtime` puts the core on clocks and sockets; the
 * simulator drives the core's face and nothing of the runtime; `http` (the
 * middleware and the sidecar) stands on the runtime and serves the metrics.
 * The "beside" rooms (metrics, the PostgreSQL ledger, the sidecar's client)
 * stand on the stack and on nothing beside them. The entry points (`mod.ts`,
 * `cli.ts`) may gather from any layer; nothing imports them. A file directly
 * in `src` (`version.ts`) is the ground: a constant any layer may read, and it
 * imports nothing of the library.
 */
const ALLOWED: Record<string, readonly string[]> = {
  ground: [],
  proto: ["ground"],
  core: ["ground", "proto"],
  runtime: ["ground", "proto", "core"],
  sim: ["ground", "proto", "core"],
  http: ["ground", "proto", "core", "runtime", "metrics"],
  metrics: ["ground", "proto", "core", "runtime"],
  postgres: ["ground", "proto", "core"],
  client: ["ground", "proto", "core", "runtime"],
  entry: ["ground", "proto", "core", "runtime", "sim", "http", "metrics", "postgres", "client"],
};

const ENTRIES = ["mod.ts", "cli.ts"];

/** The package's own subpaths (`@rateguard/guard/core`), should code name itself so. */
function selfExports(): Map<string, string> {
  const deno = JSON.parse(readFileSync("deno.json", "utf8"));
  const out = new Map<string, string>();
  for (const [sub, file] of Object.entries(deno.exports as Record<string, string>)) {
    out.set(join(deno.name, sub), normalize(file));
  }
  return out;
}

/** Every file of the library with the files it imports, type-only and re-exports too. */
function importGraph(): Map<string, string[]> {
  const self = selfExports();
  const graph = new Map<string, string[]>();
  for (const file of [...ENTRIES, ...sources("src")].map((f) => normalize(f))) {
    // The scanner skips comments and strings, so a JSDoc example's import is not one.
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets: string[] = [];
    for (const { fileName } of importedFiles) {
      let target: string | undefined;
      if (fileName.startsWith(".")) target = normalize(join(dirname(file), fileName));
      else target = self.get(fileName);
      if (target === undefined) continue; // another package, or a runtime's own module
      assert.ok(
        statSync(target, { throwIfNoEntry: false })?.isFile(),
        `${file} imports ${fileName}, no file`,
      );
      targets.push(target);
    }
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

function layerOf(file: string): string {
  if (ENTRIES.includes(file)) return "entry";
  const [top, layer, ...below] = relative(".", file).split(/[\\/]/);
  assert.equal(top, "src", `${file} is neither an entry point nor under src`);
  if (below.length === 0) return "ground";
  assert.ok(layer in ALLOWED, `${file}: the layer ${layer} is not in DESIGN.md's picture`);
  return layer;
}

/** The files that import each other in a loop, each loop once (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    const selfLoop = graph.get(v)?.includes(v) ?? false;
    if (component.length > 1 || selfLoop) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test("no file of the library imports itself back, through any path", () => {
  const graph = importGraph();
  assert.ok(graph.size > 50, "the graph was read");
  const shown = circles(graph).map((c) =>
    c.map((f) => `${f} -> ${graph.get(f)!.filter((t) => c.includes(t)).join(", ")}`).join("\n  ")
  );
  assert.deepEqual(shown, [], `circles of imports:\n  ${shown.join("\n\n  ")}`);
});

test("no layer imports one above it (DESIGN.md, Layers)", () => {
  const up: string[] = [];
  for (const [file, targets] of importGraph()) {
    const from = layerOf(file);
    for (const target of targets) {
      const to = layerOf(target);
      if (to !== from && !ALLOWED[from].includes(to)) {
        up.push(`${file} (${from}) -> ${target} (${to})`);
      }
    }
  }
  assert.deepEqual(up, [], `imports up or across the layers:\n  ${up.join("\n  ")}`);
});

test("the checker sees a circle, a type-only import and an import up the layers", () => {
  // The two tests above pass on a graph they cannot read, so read one by hand.
  const { importedFiles } = ts.preProcessFile(
    [
      'import type { A } from "./a.ts";',
      'export { B } from "./b.ts";',
      '/** import { C } from "./c.ts"; */',
      'const d = `import "./d.ts"`;',
    ].join("\n"),
    true,
    true,
  );
  assert.deepEqual(importedFiles.map((f) => f.fileName), ["./a.ts", "./b.ts"]);
  const loop = new Map([["x", ["y"]], ["y", ["z"]], ["z", ["x"]], ["w", ["x"]]]);
  assert.deepEqual(circles(loop), [["x", "y", "z"]]);
  assert.equal(ALLOWED.core.includes("runtime"), false);
  assert.equal(layerOf(normalize("src/core/limit.ts")), "core");
  assert.equal(layerOf(normalize("src/version.ts")), "ground");
});

test("one writer per slot: only the enforcer imports the operations that move a slot's state", () => {
  // core/operations.ts writes a slot's debt, instant and lean start; the
  // enforcer owns every slot, so it alone calls them (its refund, reset,
  // block, blockUntil and blockedForMs), and keeps its block set beside.
  const owner = normalize("src/core/enforcer.ts");
  const operations = normalize("src/core/operations.ts");
  const importers = [...importGraph()].filter(([, targets]) => targets.includes(operations))
    .map(([file]) => file);
  assert.deepEqual(importers, [owner]);
});
