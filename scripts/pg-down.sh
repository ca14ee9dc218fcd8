#!/usr/bin/env bash
# Stops the server started by pg-up.sh.
set -u
DIR=${SLUICE_PG_DIR:-/tmp/sluice-pg}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$BIN" ] && [ -d "$DIR" ] || exit 0
if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR" -m fast stop >/dev/null 2>&1
else "$BIN/pg_ctl" -D "$DIR" -m fast stop >/dev/null 2>&1; fi
exit 0
