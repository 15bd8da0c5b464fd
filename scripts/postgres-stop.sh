#!/usr/bin/env bash
# Stops the server that scripts/postgres-start.sh started (same RATEGUARD_PG_DIR).
# Its data stays, so the next start is quick; a server that is not running is
# not an error.
set -uo pipefail
dir=${RATEGUARD_PG_DIR:-${TMPDIR:-/tmp}/rateguard-pg}
[ -d "$dir" ] && dir=$(cd "$dir" && pwd)
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -n "$bindir" ] && [ -f "$dir/data/PG_VERSION" ] || exit 0
if [ "$(id -u)" = 0 ]; then
  (cd / && runuser -u postgres -- "$bindir/pg_ctl" -D "$dir/data" -m fast stop) >&2 || true
else
  "$bindir/pg_ctl" -D "$dir/data" -m fast stop >&2 || true
fi
rm -f "$dir/url"
