// Runs the check() benchmark on Deno, Bun and Node and prints the table of
// docs/performance.md; with --write, replaces the table there between its
// bench markers.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const bin = "node_modules/.bin";
const runs = [
  [`${bin}/deno`, ["run", "-A", "bench/check_bench.ts", "--json"]],
  [`${bin}/bun`, ["bench/check_bench.ts", "--json"]],
  [`${bin}/tsx`, ["bench/check_bench.ts", "--json"]],
].map(([cmd, args]) => {
  process.stderr.write(`running ${cmd} ${args.join(" ")}\n`);
  return JSON.parse(execFileSync(cmd, args, { encoding: "utf8" }).trim().split("\n").pop());
});

const rows = [
  ["hot", "`check()`, one hot key"],
  ["turn", "`check()`, 4096 keys in turn"],
  ["fresh", "`check()`, a fresh key per call, 1M distinct"],
  ["flexible", "`RateLimiterMemory.consume()`, one key"],
];
const f = (x) => x.toFixed(1);
const lines = [
  `| case: ns per operation (ratio to the floor) | ${runs.map((r) => r.runtime).join(" | ")} |`,
  `| --- |${runs.map(() => " ---: |").join("")}`,
  ...rows.map(([c, label]) =>
    `| ${label} | ${
      runs.map((r) =>
        `${f(r.results[c].ns)} (${(r.results[c].ns / r.results[c].floorNs).toFixed(2)}x)`
      ).join(" | ")
    } |`
  ),
  `| the floor: \`performance.now()\` + \`Map.get\`, median over the cases | ${
    runs.map((r) => f(median(Object.values(r.results).map((x) => x.floorNs)))).join(" | ")
  } |`,
  `| one hot key, times faster than \`RateLimiterMemory\` | ${
    runs.map((r) => `${(r.results.flexible.ns / r.results.hot.ns).toFixed(1)}x`).join(" | ")
  } |`,
];
const table = lines.join("\n");
console.log(table);

if (process.argv.includes("--write")) {
  const page = "docs/performance.md";
  const text = readFileSync(page, "utf8");
  const re = /(<!-- bench:start -->\n)[\s\S]*?(\n<!-- bench:end -->)/;
  if (!re.test(text)) throw new Error(`${page} has no bench markers`);
  writeFileSync(page, text.replace(re, `$1${table}$2`));
  console.error(`${page} updated`);
}

function median(xs) {
  return xs.sort((a, b) => a - b)[xs.length >> 1];
}
