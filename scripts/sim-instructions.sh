#!/bin/bash
# Instructions executed by a simulator replay, counted by valgrind's
# callgrind: on this shared 2-core machine CPU seconds vary by 25% from run
# to run with the load, the instruction count by about 0.05%, so it is the
# figure to compare two builds by (docs/simulator-validation.md). GC off,
# one thread and no asynchronous preemption make the count repeatable
# (callgrind stops on Go's preemption signal otherwise); the replay is the
# same as without them.
#
#   scripts/sim-instructions.sh BINARY [sluice sim options...]
#   scripts/sim-instructions.sh ./bin/sluice --to 60d     # 20 s
#   scripts/sim-instructions.sh ./bin/sluice              # whole trace, 4 min
#
# Default workload: SDSC-SP2 with backfill and Fair Tree
# (examples/traces/sp2-128-backfill.conf). Prints the count and the
# callgrind file (callgrind_annotate FILE lists the functions).
set -euo pipefail
bin=${1:?usage: $0 BINARY [sim options...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
traces=${SLUICE_TRACES:-$here/../shared/traces}
out=$(mktemp /tmp/sim-callgrind.XXXXXX)
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
	"$bin" sim -q --trace "$traces/SDSC-SP2-1998-4.2-cln.swf.gz" \
	--conf "$here/examples/traces/sp2-128-backfill.conf" "$@" 2>&1 |
	sed -n 's/^==[0-9]*== I *refs: *//p'
echo "$out"
