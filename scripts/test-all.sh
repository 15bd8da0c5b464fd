#!/usr/bin/env bash
# Runs the one test suite under Deno, Bun and Node (via tsx), each writing a
# JUnit report, the Go client's tests against a sidecar on Deno and on Bun
# (scripts/go-test.sh), the npm package's test (tests/package/npm_pack.ts) and
# the dashboard's browser test on Node, then prints a single total line:
# "N passed, N failed, N skipped".
# Exit status is non-zero when any test failed or any runner crashed.
set -u
cd "$(dirname "$0")/.."
bin=node_modules/.bin
out=.test-results
[ -n "${KEEP_RESULTS:-}" ] || rm -rf "$out"
mkdir -p "$out"
mapfile -t files < <(find tests -name '*_test.ts' | sort)
if [ "${#files[@]}" -eq 0 ]; then echo "no test files under tests/" >&2; exit 1; fi
printf '%s\n' "${files[@]}" >"$out/files.txt"

run() { # name, command...
  local name=$1; shift
  echo "── $name ──"
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$rc" >"$out/$name.rc"
  tail -n 5 "$out/$name.log"
  [ "$rc" -eq 0 ] || { echo "($name exited with $rc; full log: $out/$name.log)"; grep -nE 'FAIL|fail|Error' "$out/$name.log" | head -n 40; }
}

run deno "$bin/deno" test -A --reporter=dot --junit-path="$out/deno.xml" "${files[@]}"
run bun "$bin/bun" test --timeout 60000 --reporter=junit --reporter-outfile="$out/bun.xml" "${files[@]}"
run node "$bin/tsx" --test --test-concurrency=1 --test-reporter=spec --test-reporter=junit \
  --test-reporter-destination=stdout --test-reporter-destination="$out/node.xml" "${files[@]}"

run go-deno bash scripts/go-test.sh deno "$out/go-deno.xml"
run go-bun bash scripts/go-test.sh bun "$out/go-bun.xml"

# The npm package, packed and installed outside the repository, used there on
# all three runtimes: one file, run once (it drives each runtime itself).
run package "$bin/tsx" --test --test-reporter=spec --test-reporter=junit \
  --test-reporter-destination=stdout --test-reporter-destination="$out/package.xml" \
  tests/package/npm_pack.ts

# The dashboard in a real browser, once, on Node: three sidecars and Debian's
# Chromium are enough to run it once, not three times.
run browser "$bin/tsx" --test --test-concurrency=1 --test-reporter=spec --test-reporter=junit \
  --test-reporter-destination=stdout --test-reporter-destination="$out/browser.xml" \
  tests/browser/dashboard_browser.ts

node scripts/junit-total.mjs "$out" deno bun node go-deno go-bun package browser
