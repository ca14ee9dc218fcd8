#!/bin/bash
# Regenerates cmd/sluice/default.pgo, the CPU profile `go build` reads for
# profile-guided optimization (Go's -pgo=auto: a default.pgo in the main
# package's directory). It merges the profiles of the workloads whose speed
# the README quotes, so the compiler inlines what they spend their time in:
#
#   - the SDSC-SP2 replay with backfill and Fair Tree (the issue-16 figure);
#   - the deep-queue replay (SDSC-SP2 x64 on 8,192 nodes, 1.2x denser
#     arrivals, FCFS), its first 30 days of copies;
#   - the KTH-SP2 replay with backfill;
#   - the controller's listing and submission benchmark at 10,000 pending.
#
# The profiling binary is built with -pgo=off, so a stale profile does not
# shape the new one. Run it after a change to a hot path, then compare
# `scripts/sim-instructions.sh` with and without the new profile.
#
#   scripts/pgo-profile.sh          # about 2 minutes
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
traces=${SLUICE_TRACES:-$here/../shared/traces}
tmp=$(mktemp -d /tmp/sluice-pgo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$here"
go build -pgo=off -o "$tmp/sluice" ./cmd/sluice
sim() { "$tmp/sluice" sim -q "$@"; }
echo "pgo: SDSC-SP2 with backfill" >&2
sim --trace "$traces/SDSC-SP2-1998-4.2-cln.swf.gz" --conf examples/traces/sp2-128-backfill.conf --cpuprofile "$tmp/sdsc.prof"
echo "pgo: deep queue, FCFS" >&2
sim --trace "$traces/SDSC-SP2-1998-4.2-cln.swf.gz" --conf examples/traces/sp2-8192-fcfs.conf \
	--scale-cluster 64 --time-scale 1.2 --repeat 8 --to 30d --cpuprofile "$tmp/deep.prof"
echo "pgo: KTH-SP2 with backfill" >&2
sim --trace "$traces/KTH-SP2-1996-2.1-cln.swf.gz" --conf examples/traces/sp2-100-backfill.conf --cpuprofile "$tmp/kth.prof"
echo "pgo: controller listings at 10,000 pending" >&2
"$tmp/sluice" bench list --jobs 10000 --cpuprofile "$tmp/list.prof" >/dev/null
go tool pprof -proto "$tmp"/*.prof >"$tmp/default.pgo"
mv "$tmp/default.pgo" cmd/sluice/default.pgo
ls -l cmd/sluice/default.pgo
