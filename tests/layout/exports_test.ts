// A surface a user can hold in mind: `./core` exports under 40 names, what
// someone driving a FleetNode on their own I/O needs (DESIGN.md, "Surface
// and speed budgets"); the rest of the core is internal, imported by its
// path. Counted from the entry point's own exports, re-exports followed, as
// the compiler resolves them (types and values alike).
import { test } from "node:test";
import assert from "node:assert/strict";
import ts from "typescript";

/** DESIGN.md's budget for `./core`: fewer exports than this. */
const CORE_BUDGET = 40;

function exportsOf(entry: string): string[] {
  const program = ts.createProgram([entry], {
    allowImportingTsExtensions: true,
    noEmit: true,
    noResolve: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    noLib: true, // the names, not their types: no library to read
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(entry);
  assert.ok(file, `${entry} was read`);
  const module = checker.getSymbolAtLocation(file);
  assert.ok(module, `${entry} is a module`);
  return checker.getExportsOfModule(module).map((s) => s.name).sort();
}

test(`./core exports fewer than ${CORE_BUDGET} names`, () => {
  const names = exportsOf("src/core/mod.ts");
  assert.ok(names.includes("FleetNode") && names.includes("Enforcer"), "the exports were read");
  assert.ok(
    names.length < CORE_BUDGET,
    `./core exports ${names.length} names, the budget is under ${CORE_BUDGET}: ${names.join(", ")}`,
  );
});
