#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on loopback for the test suite and
# prints the DSN to use. Installs Debian's postgresql package when the server
# binaries are missing. The server runs as the unprivileged 'postgres' user
# (PostgreSQL refuses to run as root).
set -euo pipefail
PORT=${SLUICE_PG_PORT:-55432}
DIR=${SLUICE_PG_DIR:-/tmp/sluice-pg}

find_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}
BIN=$(find_bin || true)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "pg-up: installing postgresql (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  BIN=$(find_bin)
fi
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
  RUNAS=(runuser -u postgres --)
fi
if [ -f "$DIR/postmaster.pid" ] && "${RUNAS[@]}" "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  echo "postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
  exit 0
fi
rm -rf "$DIR"
mkdir -p "$DIR"
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
"${RUNAS[@]}" "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 >/dev/null
"${RUNAS[@]}" "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off -c max_connections=200" start >/dev/null
echo "postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
