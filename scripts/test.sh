#!/usr/bin/env bash
# The whole test suite, as CI runs it (make test). On a fresh Debian machine
# with Go it installs and starts everything the tests need: a throwaway
# PostgreSQL server on loopback for the PostgreSQL store tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# 3 s of fuzzing per target (40 targets, each with about 2.7 s of start
# and baseline around it) keeps make test under 15 minutes on 2 cores;
# FUZZTIME=30s make test fuzzes longer.
FUZZTIME=${FUZZTIME:-3s}
# elapsed is the time since the start, for the phase lines.
elapsed() { printf '%dm%02ds' $((SECONDS / 60)) $((SECONDS % 60)); }

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

echo "== test packages (MPICH for the MPI test, Chromium for the report layout test)"
eval "$(./scripts/test-deps.sh)"

echo "== go test -race ($(elapsed))"
# This includes test/multihost, the multi-host test bed (a controller, three
# node hosts and a login host, each in network and mount namespaces of its
# own; about 15 s): it needs root and says it skipped otherwise.
if [ "$(id -u)" != 0 ]; then echo "(not root: test/multihost, the multi-host test bed, will skip)"; fi
# -parallel 4: the controller's and the commands' tests that start
# clusters mostly wait on them (about a fifth of a core each), and run four
# at a time.
go test -race -count=1 -timeout 20m -parallel 4 $(go list ./... | grep -v '/test/oracle$')


# run_fuzz fuzzes one target. Two ways a run can fail that are the
# fuzzing harness, not the code, and write no failing input; such a run is
# tried again, up to three times in all:
#  - Go's fuzzer sometimes ends a run with a bare "context deadline
#    exceeded" line when its -fuzztime deadline races its own shutdown
#    (golang/go#75804, fixed in Go 1.27);
#  - a worker killed by a signal that no input causes (the OOM killer
#    taking another process's memory, SIGHUP): Go says "no crash will be
#    recorded".
# A real failure writes and names its failing input and fails at once.
run_fuzz() {
  local log why
  log=$(mktemp)
  for attempt in 1 2 3; do
    if go test -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" "$1" >"$log" 2>&1; then
      rm -f "$log"; return 0
    fi
    grep -q 'Failing input written' "$log" && break
    why=$(grep -E -m1 '^[[:space:]]*context deadline exceeded$|no crash will be recorded' "$log" | sed 's/^[[:space:]]*//') || break
    [ "$attempt" = 3 ] && break
    echo "   (fuzzer stopped without a failing input: \"$why\"; again)"
  done
  cat "$log"; rm -f "$log"
  exit 1
}

# The differential suite plays every scenario on `sluice up` and compares
# it with real Slurm's recorded output (test/oracle/golden); alone, after
# the race tests, so that nothing competes with its timing (its scenarios
# read a scheduling pass's outcome seconds after a submission).
echo "== differential suite (Sluice against Slurm 24.11's golden files) ($(elapsed))"
go test -count=1 -timeout 15m -v ./test/oracle 2>&1 | grep --line-buffered -v '^=== RUN\|^=== PAUSE\|^=== CONT'

echo "== fuzz (${FUZZTIME} each, $(elapsed))"
# The targets are found in the test sources: go test -list would link a
# test binary for each of the 27 packages first (minutes with a cold
# build cache, as on a fresh CI machine).
for line in $(go list -f '{{.ImportPath}}={{.Dir}}' ./...); do
  pkg=${line%%=*}
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${line#*=}"/*_test.go 2>/dev/null | sed 's/^func //' || true); do
    echo "-- $pkg $f"
    run_fuzz "$pkg" "$f"
  done
done
echo "== all tests passed ($(elapsed))"
