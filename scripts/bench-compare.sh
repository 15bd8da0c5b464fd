#!/usr/bin/env bash
# Compares the request path of this tree with an earlier release, on Deno,
# Bun and Node: bench/check_bench.ts --case hot and --case turn, alternating
# the two trees ROUNDS times (default 7), then the median ratio to the floor of
# each and the change. Usage: bash scripts/bench-compare.sh [REF] [ROUNDS]
# (REF defaults to e8fa97a, release 0.1). The earlier tree is a temporary
# git worktree sharing this one's node_modules, removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-e8fa97a}
rounds=${2:-7}
here=$PWD
there=$(mktemp -d)
git worktree add -q --detach "$there" "$ref"
ln -s "$here/node_modules" "$there/node_modules"
trap 'git worktree remove --force "$there"' EXIT
log=$(mktemp)
for r in $(seq "$rounds"); do
  for c in hot turn; do
    for tree in before after; do
      dir=$there; [ "$tree" = after ] && dir=$here
      (cd "$dir" &&
        echo "$c $tree bun $(node_modules/.bin/bun bench/check_bench.ts --case $c --json | tail -n1)" &&
        echo "$c $tree deno $(node_modules/.bin/deno run -A bench/check_bench.ts --case $c --json | tail -n1)" &&
        echo "$c $tree node $(node_modules/.bin/tsx bench/check_bench.ts --case $c --json | tail -n1)") >>"$log"
    done
  done
  echo "round $r of $rounds" >&2
done
node - "$log" "$ref" <<'JS'
const [log, ref] = process.argv.slice(2);
const runs = new Map();
for (const line of require("node:fs").readFileSync(log, "utf8").trim().split("\n")) {
  const [c, tree, rt, json] = line.split(" ");
  const { ns, floorNs } = JSON.parse(json);
  const k = `${rt} ${c} ${tree}`;
  runs.set(k, [...(runs.get(k) ?? []), ns / floorNs]);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| runtime, case | ${ref}: ratio to the floor | this tree | change |`);
console.log("| --- | ---: | ---: | ---: |");
for (const rt of ["deno", "bun", "node"]) {
  for (const c of ["hot", "turn"]) {
    const b = median(runs.get(`${rt} ${c} before`)), a = median(runs.get(`${rt} ${c} after`));
    const change = `${a >= b ? "+" : "−"}${Math.round(Math.abs(a / b - 1) * 100)}%`;
    console.log(`| ${rt}, ${c} | ${b.toFixed(2)}× | ${a.toFixed(2)}× | ${change} |`);
  }
}
JS
rm -f "$log"
