#!/usr/bin/env bash
# Starts a disposable PostgreSQL server on 127.0.0.1 for the ledger's tests and
# benchmark, and prints its URL as the last line of stdout:
#
#   export RATEGUARD_PG_URL=$(bash scripts/postgres-start.sh | tail -n1)
#
# Idempotent: a server already running from the same directory is reused, so a
# second call costs a few milliseconds. The server runs with PostgreSQL's
# default (durable) settings, so the benchmark measures what production would.
#
# PostgreSQL refuses to run as root, and CI runs as root: then the data
# directory belongs to the `postgres` user (created by Debian's package) and
# the server runs as that user through runuser.
#
# Environment: RATEGUARD_PG_DIR (default: $TMPDIR/rateguard-pg) holds the data,
# the socket, the log and the URL. RATEGUARD_PG_INSTALL=1 lets the script
# install Debian's `postgresql` package when no server binaries are found
# (.ci/run sets it; a developer's machine is left alone).
set -euo pipefail

dir=${RATEGUARD_PG_DIR:-${TMPDIR:-/tmp}/rateguard-pg}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd) # absolute: the tools run from elsewhere
data=$dir/data

find_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }

bindir=$(find_bindir)
if [ -z "$bindir" ] && [ "${RATEGUARD_PG_INSTALL:-}" = 1 ]; then
  echo "installing PostgreSQL from Debian's packages..." >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bindir=$(find_bindir)
fi
if [ -z "$bindir" ]; then
  echo "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2
  exit 1
fi

as_owner() { # the server's user runs the PostgreSQL tools, from a directory it may read
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

if [ -f "$dir/url" ] && as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  cat "$dir/url"
  exit 0
fi

if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
if [ ! -f "$data/PG_VERSION" ]; then
  # Trust on loopback only: a throwaway server that listens nowhere else.
  as_owner "$bindir/initdb" -D "$data" -U rateguard --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
fi

port=$(node -e 'const s = require("node:net").createServer();
s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
  -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=100" start >&2 ||
  { tail -n 20 "$dir/server.log" >&2; exit 1; }

echo "postgres://rateguard@127.0.0.1:$port/postgres" >"$dir/url.tmp"
mv "$dir/url.tmp" "$dir/url"
cat "$dir/url"
