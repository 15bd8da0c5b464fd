#!/usr/bin/env bash
# The ledger's benchmark, as docs/exact-quotas.md quotes it: starts (or
# reuses) the disposable server of scripts/postgres-start.sh, then runs
# bench/postgres_bench.ts on Deno. Arguments go to the benchmark (seconds
# per scenario, default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
RATEGUARD_PG_URL=${RATEGUARD_PG_URL:-$(bash scripts/postgres-start.sh | tail -n1)}
export RATEGUARD_PG_URL
exec node_modules/.bin/deno run -A bench/postgres_bench.ts "$@"
