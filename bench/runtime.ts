// What the benches share: which runtime runs them, and how a bench starts
// itself again for a case of its own, in a fresh process of that runtime.
import process from "node:process";

const runtime = globalThis as unknown as {
  Deno?: { version: { deno: string }; execPath(): string };
  Bun?: { version: string };
};

/** `Deno 2.9.6`, `Bun 1.4.5` or `Node 20.20.2`. */
export function runtimeName(): string {
  return runtime.Deno
    ? `Deno ${runtime.Deno.version.deno}`
    : runtime.Bun
    ? `Bun ${runtime.Bun.version}`
    : `Node ${process.versions.node}`;
}

/** The command that runs `script` again on this runtime, with Deno's extra `denoFlags`. */
export function selfCommand(script: string, denoFlags: string[] = []): [string, string[]] {
  if (runtime.Deno) return [runtime.Deno.execPath(), ["run", "-A", ...denoFlags, script]];
  if (runtime.Bun) return [process.execPath, [script]];
  return [process.execPath, [...process.execArgv, script]];
}

/** Prints a two-column markdown table of figures. */
export function printTable(rows: readonly (readonly [figure: string, value: string])[]): void {
  console.log("| figure | value |");
  console.log("| --- | ---: |");
  for (const [figure, value] of rows) console.log(`| ${figure} | ${value} |`);
}

/** The mean of `xs`. */
export const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
