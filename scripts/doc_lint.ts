// The documentation gate, over every entry point of deno.json at once (as
// JSR reads the package):
//
// 1. `deno doc --lint`: a JSDoc on every export, an explicit return type, no
//    private type in a public signature. The one exception it grants: a
//    reference to a type of a third-party npm package (Hono's `Context`,
//    OpenTelemetry's `Meter`), which is that package's to document and ours
//    only to name; accepted only when the flagged file imports the type by
//    that name from a bare npm specifier.
// 2. Every public function, method and constructor documents each parameter
//    with `@param` and, unless it returns nothing, its result with `@returns`.
// 3. No two entry points export different things under one name.
// 4. Every optional field of an options type (`...Options`) says its `@default`.
//
//   deno run -A scripts/doc_lint.ts            (every entry point of deno.json)
//   deno run -A scripts/doc_lint.ts mod.ts     (some)
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import process from "node:process";

interface Tag {
  readonly kind: string;
  readonly name?: string;
}
interface Param {
  readonly kind: string;
  readonly name?: string;
  readonly left?: Param;
  readonly arg?: Param;
}
interface Fn {
  readonly params: readonly Param[];
  readonly returnType?: {
    readonly repr: string;
    readonly value?: { typeParams?: { repr: string }[] };
  };
}
interface Member {
  readonly name: string;
  readonly kind?: string;
  readonly accessibility?: string;
  readonly jsDoc?: { readonly tags?: readonly Tag[] };
  readonly functionDef?: Fn;
  readonly params?: readonly Param[];
  readonly location: { readonly filename: string; readonly line: number };
}
interface Property {
  readonly name: string;
  readonly optional?: boolean;
  readonly jsDoc?: { readonly tags?: readonly Tag[] };
  readonly location: { readonly filename: string; readonly line: number };
}
interface Declaration extends Member {
  readonly def?:
    & {
      readonly constructors?: Member[];
      readonly methods?: Member[];
      readonly target?: { readonly filename: string; readonly line: number };
    }
    & Partial<Fn>;
}

const deno = process.execPath;
const entries = process.argv.length > 2
  ? process.argv.slice(2)
  : Object.values(JSON.parse(readFileSync("deno.json", "utf8")).exports as Record<string, string>);
let failed = false;

// 1. deno doc --lint, less the references to third-party types.
const lint = spawnSync(deno, ["doc", "--lint", ...entries], {
  encoding: "utf8",
  env: { ...process.env, NO_COLOR: "1" },
  maxBuffer: 1 << 26,
});
const diagnostics = `${lint.stdout}${lint.stderr}`.split(/\n(?=error\[)/).filter((d) =>
  d.startsWith("error[")
);
const thirdParty = (d: string): boolean => {
  const m = /references private type '([\w$]+)'[\s\S]*?--> (\S+?):\d+:\d+/.exec(d);
  if (m === null) return false;
  const source = readFileSync(m[2], "utf8");
  return [...source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"([^".\/][^"]*)"/g)]
    .some(([, names, from]) =>
      !from.startsWith("node:") &&
      names.split(",").some((n) => n.trim().replace(/^type\s+/, "") === m[1])
    );
};
const real = diagnostics.filter((d) => !thirdParty(d));
if (real.length > 0) {
  console.log(real.join("\n"));
  console.log(`${real.length} documentation lint errors (deno doc --lint)`);
  failed = true;
} else if (lint.status !== 0 && diagnostics.length === 0) {
  console.log(`${lint.stdout}${lint.stderr}`);
  failed = true;
}

// 2. @param and @returns on every public function and method.
const doc = JSON.parse(
  execFileSync(deno, ["doc", "--json", ...entries], { encoding: "utf8", maxBuffer: 1 << 28 }),
);

function paramName(p: Param): string | undefined {
  if (p.kind === "identifier") return p.name;
  if (p.kind === "assign" && p.left) return paramName(p.left);
  if (p.kind === "rest" && p.arg) return paramName(p.arg);
  return undefined; // a destructured parameter: documented as a whole, not by name
}

const missing = new Set<string>();
const where = (m: { location: Member["location"] }) =>
  `${m.location.filename.replace(/^file:\/\/\/?.*?\/(src|mod)/, "$1")}:${m.location.line}`;
function check(what: string, m: Member, fn: Fn | undefined): void {
  if (fn === undefined || m.accessibility === "private" || what.includes("#")) return;
  const tags = m.jsDoc?.tags ?? [];
  if (tags.some((t) => t.kind === "internal")) return; // hidden from the docs, as deno doc does
  const at = where(m);
  for (const p of fn.params) {
    const name = paramName(p);
    if (name !== undefined && !tags.some((t) => t.kind === "param" && t.name === name)) {
      missing.add(`${at} ${what}: no @param ${name}`);
    }
  }
  const type = fn.returnType;
  const returns = type === undefined
    ? "void"
    : type.repr === "Promise"
    ? `Promise<${type.value?.typeParams?.[0]?.repr ?? ""}>`
    : type.repr;
  if (
    !/^(void|Promise<void>|never|this)$/.test(returns) && !tags.some((t) => t.kind === "return")
  ) {
    missing.add(`${at} ${what}: no @returns (${returns})`);
  }
}

for (
  const module of Object.values(doc.nodes) as {
    symbols?: { name: string; declarations: Declaration[] }[];
  }[]
) {
  for (const symbol of module.symbols ?? []) {
    for (const d of symbol.declarations) {
      if (d.kind === "function") check(symbol.name, { ...d, name: symbol.name }, d.def as Fn);
      for (const c of d.def?.constructors ?? []) {
        check(`new ${symbol.name}`, c, { params: c.params ?? [], returnType: { repr: "void" } });
      }
      for (const m of d.def?.methods ?? []) {
        if (m.kind === "getter" || m.kind === "setter") continue;
        check(`${symbol.name}.${m.name}`, m, m.functionDef);
      }
    }
  }
}

// 4. @default on every optional field of an options type.
for (
  const module of Object.values(doc.nodes) as {
    symbols?: { name: string; declarations: Declaration[] }[];
  }[]
) {
  for (const symbol of module.symbols ?? []) {
    if (!symbol.name.endsWith("Options")) continue;
    for (const d of symbol.declarations) {
      for (const p of (d.def as { properties?: Property[] } | undefined)?.properties ?? []) {
        if (p.optional && !(p.jsDoc?.tags ?? []).some((t) => t.kind === "default")) {
          missing.add(`${where(p)} ${symbol.name}.${p.name}: no @default`);
        }
      }
    }
  }
}

// 3. One name, one meaning, across the entry points.
const byName = new Map<string, Set<string>>();
for (
  const module of Object.values(doc.nodes) as {
    symbols?: { name: string; declarations: Declaration[] }[];
  }[]
) {
  for (const symbol of module.symbols ?? []) {
    // A re-export is a reference to the declaration it names: the same thing.
    const where = symbol.declarations.map((d) => {
      const at = (d.kind === "reference" ? d.def?.target : undefined) ?? d.location;
      return `${at.filename}:${at.line}`;
    }).join(",");
    byName.set(symbol.name, (byName.get(symbol.name) ?? new Set()).add(where));
  }
}
for (const [name, places] of byName) {
  if (places.size > 1) {
    console.log(`${name} names ${places.size} different things: ${[...places].join(" and ")}`);
    failed = true;
  }
}

if (missing.size > 0) {
  console.log([...missing].sort().join("\n"));
  console.log(
    `\n${missing.size} public functions, methods or options lack a @param, @returns or @default`,
  );
  failed = true;
}
if (failed) process.exit(1);
console.log(
  `${entries.join(", ")}: deno doc --lint clean (less third-party types), every public ` +
    "function and method documents its parameters and result, and no name means two things",
);
