#!/usr/bin/env bash
# The whole test suite, as CI runs it (make test). On a fresh Debian machine
# with Go it installs and starts everything the tests need: a throwaway
# PostgreSQL server on loopback for the PostgreSQL store tests.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-5s}

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "gofmt needed on:"; echo "$bad"; exit 1; fi

echo "== go vet"
go vet ./...

echo "== PostgreSQL"
export SLUICE_TEST_PG_DSN=${SLUICE_TEST_PG_DSN:-$(./scripts/pg-up.sh)}
trap './scripts/pg-down.sh' EXIT
echo "using $SLUICE_TEST_PG_DSN"
# Tests that need PostgreSQL fail (not skip) when this is set and it is unreachable.
export SLUICE_REQUIRE_PG=1

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...

echo "== fuzz (${FUZZTIME} each)"
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "-- $pkg $f"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$FUZZTIME" "$pkg" >/tmp/fuzz.log 2>&1 || { cat /tmp/fuzz.log; exit 1; }
  done
done
echo "== all tests passed"
