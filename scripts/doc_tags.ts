// Beyond `deno doc --lint` (a JSDoc on every export, no private type in a
// public signature): every public function, method and constructor of the
// entry points documents each parameter with `@param` and, unless it returns
// nothing, its result with `@returns`. Run on Deno:
//
//   deno run -A scripts/doc_tags.ts            (every entry point of deno.json)
//   deno run -A scripts/doc_tags.ts mod.ts     (one)
import { execFileSync } from "node:child_process";
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
interface Declaration extends Member {
  readonly def?: { readonly constructors?: Member[]; readonly methods?: Member[] } & Partial<Fn>;
}

const deno = process.execPath;
const entries = process.argv.length > 2
  ? process.argv.slice(2)
  : Object.values(JSON.parse(readFileSync("deno.json", "utf8")).exports as Record<string, string>);
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
function check(what: string, m: Member, fn: Fn | undefined): void {
  if (fn === undefined || m.accessibility === "private" || what.includes("#")) return;
  const tags = m.jsDoc?.tags ?? [];
  const at = `${
    m.location.filename.replace(/^file:\/\/\/?.*?\/(src|mod)/, "$1")
  }:${m.location.line}`;
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

if (missing.size > 0) {
  console.log([...missing].sort().join("\n"));
  console.log(`\n${missing.size} public functions or methods lack a @param or @returns`);
  process.exit(1);
}
console.log(
  `every public function and method of ${entries.join(", ")} documents its parameters and result`,
);
