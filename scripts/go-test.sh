#!/usr/bin/env bash
# The Go client's tests (sdk/go) against a sidecar on one runtime, as a JUnit
# report for scripts/junit-total.mjs:
#
#   bash scripts/go-test.sh deno .test-results/go-deno.xml
#
# The tests start the sidecar themselves (RATEGUARD_RUNTIME: deno, bun or
# node). Without a Go toolchain the report holds one skipped case, so the
# total says so; .ci/run installs Debian's golang-go, so CI runs them.
set -u
cd "$(dirname "$0")/.."
runtime=${1:?runtime: deno, bun or node}
xml=$(realpath -m "${2:?the JUnit report to write}")
if ! command -v go >/dev/null; then
  printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' '<testsuites><testsuite name="sdk/go">' \
    '<testcase classname="sdk/go" name="go test"><skipped message="no Go toolchain (apt-get install golang-go)"/></testcase>' \
    '</testsuite></testsuites>' >"$xml"
  echo "sdk/go on $runtime: skipped, no Go toolchain"
  exit 0
fi
# The standard library only: nothing to download, no toolchain switch.
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
[ -n "${HOME:-}" ] || export GOCACHE=${GOCACHE:-${TMPDIR:-/tmp}/rateguard-go-cache}
cd sdk/go
RATEGUARD_RUNTIME=$runtime go test -count=1 -json -timeout 120s ./... |
  node ../../scripts/go-junit.mjs "$xml" "sdk/go on $runtime"
exit "${PIPESTATUS[0]}"
