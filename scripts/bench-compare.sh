#!/usr/bin/env bash
# Compares the request path of this tree with an earlier release on Deno, Bun
# and Node: bench/check_ab.ts runs both trees' checks in one process, in
# alternating slices, for one hot key and for 4096 keys in turn. One process's
# JIT can compile either tree a little better than the other, by a tenth
# either way, and the tree imported first runs a little slower on Bun, so each
# runtime and case runs in PROCS processes each way round (default 6, with and
# without --swap); the figure is the geometric mean of the two ways' medians,
# printed with the lowest and highest single ratio.
# Usage: bash scripts/bench-compare.sh [REF] [PROCS]   (REF: e8fa97a, 0.1)
# The earlier tree is a temporary git worktree sharing this one's
# node_modules, removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-e8fa97a}
procs=${2:-6}
here=$PWD
there=$(mktemp -d)
git worktree add -q --detach "$there" "$ref"
ln -s "$here/node_modules" "$there/node_modules"
trap 'git worktree remove --force "$there"' EXIT
log=$(mktemp)
for p in $(seq "$procs"); do
  for c in hot turn; do
    for way in plain swap; do
      ab=(bench/check_ab.ts --against "$there" --case "$c" --json)
      [ "$way" = swap ] && ab+=(--swap)
      echo "bun $c $way $(node_modules/.bin/bun "${ab[@]}")" >>"$log"
      echo "deno $c $way $(node_modules/.bin/deno run -A "${ab[@]}")" >>"$log"
      echo "node $c $way $(node_modules/.bin/tsx "${ab[@]}")" >>"$log"
    done
  done
  echo "process $p of $procs" >&2
done
node - "$log" "$ref" "$procs" <<'JS'
const [log, ref, procs] = process.argv.slice(2);
const runs = new Map();
for (const line of require("node:fs").readFileSync(log, "utf8").trim().split("\n")) {
  const [rt, c, way, json] = line.split(" ");
  const k = `${rt} ${c} ${way}`;
  runs.set(k, [...(runs.get(k) ?? []), JSON.parse(json).ratio]);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};
const pct = (r) => `${r >= 1 ? "+" : "−"}${Math.abs((r - 1) * 100).toFixed(1)}%`;
console.log(`| runtime, case | this tree against ${ref}, ${procs} processes each way | lowest, highest |`);
console.log("| --- | ---: | ---: |");
for (const rt of ["deno", "bun", "node"]) {
  for (const c of ["hot", "turn"]) {
    const plain = runs.get(`${rt} ${c} plain`), swap = runs.get(`${rt} ${c} swap`);
    const all = [...plain, ...swap].sort((a, b) => a - b);
    const figure = Math.sqrt(median(plain) * median(swap));
    console.log(`| ${rt}, ${c} | ${pct(figure)} | ${pct(all[0])}, ${pct(all.at(-1))} |`);
  }
}
JS
rm -f "$log"
