#!/usr/bin/env bash
# The one gate: format, lint, type check (the sans-I/O core against ES2022
# alone), a grep for runtime globals in the core, the documentation lint
# (scripts/doc_lint.ts), the suite on Deno, Bun and
# Node, and `deno publish --dry-run`. Each check counts as one test in the
# final "N passed, N failed, N skipped" line, so a lint error cannot hide behind a green
# suite.
set -u
cd "$(dirname "$0")/.."
deno=node_modules/.bin/deno
out=.test-results
rm -rf "$out" && mkdir -p "$out/checks"

check() { # name, command...
  local name=$1; shift
  if "$@" >"$out/checks/$name.log" 2>&1; then
    echo "ok   $name"; echo 0 >"$out/checks/$name.rc"
  else
    echo "FAIL $name"; echo 1 >"$out/checks/$name.rc"; tail -n 30 "$out/checks/$name.log"
  fi
}

core_dirs=(src/core src/proto)
pure() { # no runtime globals in the sans-I/O layers (comments excepted)
  local hits
  hits=$(grep -rnE '\b(Date|performance|Math\.random|setTimeout|setInterval|queueMicrotask|crypto|Deno|Bun|process|globalThis|require)\b' \
    "${core_dirs[@]}" --include='*.ts' | grep -vE '^[^:]+:[0-9]+:\s*(//|\*|/\*)' |
    grep -vE 'Symbol\.for\("(Deno|nodejs)\.' || true)
  if [ -n "$hits" ]; then echo "runtime globals in the sans-I/O core:"; echo "$hits"; return 1; fi
  local imports
  imports=$(grep -rnE "from \"(\.\./)+(runtime|http|sim|postgres|metrics|client)/|from \"(node:|npm:|hono)" "${core_dirs[@]}" --include='*.ts' |
    grep -vE '^[^:]+:[0-9]+:\s*(//|\*|/\*)' || true)
  if [ -n "$imports" ]; then echo "the core imports outside itself:"; echo "$imports"; return 1; fi
}
core_files() { find "${core_dirs[@]}" -name '*.ts' | sort; }

check fmt "$deno" fmt --check
check lint "$deno" lint
check types "$deno" check mod.ts cli.ts src tests bench
mapfile -t pure_files < <(core_files)
if [ "${#pure_files[@]}" -gt 0 ]; then check core-es2022 "$deno" check --config .ci/core.json "${pure_files[@]}"; fi
check core-pure pure
check publish "$deno" publish --dry-run --allow-dirty
# The accuracy table is generated: fail when README or docs/accuracy.md
# disagree with a fresh run (deterministic; run on Deno only, once).
check accuracy "$deno" run -A src/sim/accuracy/cli.ts --check
# The 200-instance rows too, on Bun as `deno task accuracy:large` writes them;
# the 1000-instance table is a task of its own (`deno task accuracy:large
# --sizes 1000`; its cost is in docs/accuracy.md).
check accuracy-200 node_modules/.bin/bun src/sim/accuracy/cli.ts --large --sizes 200 --check
check doc-examples "$deno" test --doc -A mod.ts src README.md docs/*.md
# deno doc --lint over every entry point of deno.json at once, plus @param and
# @returns on every public function and method, and one meaning per exported name.
check doc-lint "$deno" run -A scripts/doc_lint.ts
# The Go client: gofmt and go vet (its tests run in scripts/test-all.sh).
if command -v go >/dev/null; then
  check go-vet bash -c 'cd sdk/go && test -z "$(gofmt -l .)" && GOTOOLCHAIN=local GOPROXY=off go vet ./...'
fi

KEEP_RESULTS=1 bash scripts/test-all.sh
