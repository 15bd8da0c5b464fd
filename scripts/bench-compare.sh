#!/usr/bin/env bash
# Compares the request path of this tree with an earlier release on Deno, Bun
# and Node: bench/check_ab.ts runs both trees' checks in one process, in
# alternating slices, for one hot key and for 4096 keys in turn. One process's
# JIT can compile either tree a little better than the other, by a tenth
# either way, so each runtime and case runs in PROCS processes (default 7) and
# the median of their ratios is printed, with the lowest and highest.
# Usage: bash scripts/bench-compare.sh [REF] [PROCS]   (REF: e8fa97a, 0.1)
# The earlier tree is a temporary git worktree sharing this one's
# node_modules, removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-e8fa97a}
procs=${2:-7}
here=$PWD
there=$(mktemp -d)
git worktree add -q --detach "$there" "$ref"
ln -s "$here/node_modules" "$there/node_modules"
trap 'git worktree remove --force "$there"' EXIT
log=$(mktemp)
for p in $(seq "$procs"); do
  for c in hot turn; do
    ab=(bench/check_ab.ts --against "$there" --case "$c" --json)
    echo "bun $c $(node_modules/.bin/bun "${ab[@]}")" >>"$log"
    echo "deno $c $(node_modules/.bin/deno run -A "${ab[@]}")" >>"$log"
    echo "node $c $(node_modules/.bin/tsx "${ab[@]}")" >>"$log"
  done
  echo "process $p of $procs" >&2
done
node - "$log" "$ref" "$procs" <<'JS'
const [log, ref, procs] = process.argv.slice(2);
const runs = new Map();
for (const line of require("node:fs").readFileSync(log, "utf8").trim().split("\n")) {
  const [rt, c, json] = line.split(" ");
  runs.set(`${rt} ${c}`, [...(runs.get(`${rt} ${c}`) ?? []), JSON.parse(json).ratio]);
}
const pct = (r) => `${r >= 1 ? "+" : "−"}${Math.abs((r - 1) * 100).toFixed(1)}%`;
console.log(`| runtime, case | this tree against ${ref}: median of ${procs} processes | lowest, highest |`);
console.log("| --- | ---: | ---: |");
for (const rt of ["deno", "bun", "node"]) {
  for (const c of ["hot", "turn"]) {
    const xs = runs.get(`${rt} ${c}`).sort((a, b) => a - b);
    console.log(`| ${rt}, ${c} | ${pct(xs[xs.length >> 1])} | ${pct(xs[0])}, ${pct(xs.at(-1))} |`);
  }
}
JS
rm -f "$log"
