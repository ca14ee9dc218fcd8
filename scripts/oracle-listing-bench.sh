#!/bin/bash
# The Slurm side of `sluice bench list` (README, Performance): on a running
# oracle (../shared/oracle), fill held jobs with individual `sbatch -H`
# calls, then time squeue (full and -j) and sbatch, idle and under 4
# concurrent full listings. slurmctld's CPU comes from /proc (10 ms ticks).
#
#   ORACLE_SH=../shared/oracle/oracle.sh   # or a wrapper with its own state
#   $ORACLE_SH up --conf-extra <(echo MaxJobCount=300000)
#   scripts/oracle-listing-bench.sh rss       # before the fill
#   scripts/oracle-listing-bench.sh fill 10000
#   scripts/oracle-listing-bench.sh squeue
#   scripts/oracle-listing-bench.sh fill 20000
#   scripts/oracle-listing-bench.sh sbatch
#   scripts/oracle-listing-bench.sh rest      # GET /slurm/v0.0.42/jobs via slurmrestd
set -euo pipefail
O=${ORACLE_SH:-../shared/oracle/oracle.sh}
ST=${ORACLE_STATE:-/var/tmp/slurm-oracle}
pid=$(cat "$ST/run/slurmctld.pid")
cpu_ms() { awk '{print ($14+$15)*10}' "/proc/$pid/stat"; }
rss_kb() { awk '/VmRSS/{print $2}' "/proc/$pid/status"; }
count() { $O exec -- bash -c 'squeue -h -t PD | wc -l'; }
fill() {
	local need=$(($1 - $(count)))
	if [ "$need" -gt 0 ]; then
		$O exec -- bash -c "for i in \$(seq $need); do sbatch -H -o /dev/null --wrap true >/dev/null || exit 1; done"
	fi
}
# time_squeue LABEL ARGS...: 5 runs; the client's wall, user and system
# seconds (bash's time), its output bytes and slurmctld's CPU meanwhile.
time_squeue() {
	local label=$1
	shift
	for r in 1 2 3 4 5; do
		local c0 t c1
		c0=$(cpu_ms)
		t=$($O exec -- bash -c "TIMEFORMAT='%R %U %S'; { time squeue $* >/tmp/sq.out; } 2>&1; wc -c </tmp/sq.out")
		c1=$(cpu_ms)
		echo "$label run $r: wall/user/sys/bytes $(echo $t) slurmctld_cpu_ms $((c1 - c0))"
	done
}
case ${1:-} in
rss) echo "slurmctld rss_kb $(rss_kb)" ;;
fill)
	t0=$(date +%s.%N)
	fill "$2"
	echo "pending $(count), filled in $(echo "$(date +%s.%N) - $t0" | bc) s, slurmctld rss_kb $(rss_kb)"
	;;
squeue)
	n=$(count)
	time_squeue "squeue@$n"
	time_squeue "squeue -j 5@$n" -j 5
	;;
sbatch)
	$O exec -- bash -c 'TIMEFORMAT=%R; for i in $(seq 10); do { time sbatch -H -o /dev/null --wrap true >/dev/null; } 2>&1; done' |
		sort -n | tr '\n' ' ' | sed 's/^/idle sbatch seconds: /'
	echo
	$O exec -- bash -c 'rm -f /tmp/stop.listers; pids=""
		for k in 1 2 3 4; do (n=0; while [ ! -e /tmp/stop.listers ]; do squeue >/dev/null; n=$((n+1)); done; echo "lister $k: $n listings") & pids="$pids $!"; done
		sleep 1; TIMEFORMAT=%R; ts=""
		for i in $(seq 10); do ts="$ts $( { time sbatch -H -o /dev/null --wrap true >/dev/null; } 2>&1 )"; done
		touch /tmp/stop.listers; wait $pids; rm -f /tmp/stop.listers
		echo "sbatch seconds under 4 listings: $(echo $ts | tr " " "\n" | sort -n | tr "\n" " ")"'
	;;
rest)
	# slurmrestd's side of BenchmarkRESTJobs10k (internal/restd): the
	# same GET as root, 5 runs, curl's total time and the answer's size.
	eval "$($O token root)"
	for r in 1 2 3 4 5; do
		curl -s -o /dev/null -w "rest jobs@$(count) run $r: seconds %{time_total} bytes %{size_download} http %{http_code}\n" \
			-H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $SLURM_JWT" "$SLURM_REST_URL/slurm/v0.0.42/jobs"
	done
	;;
*) echo "usage: $0 rss|fill N|squeue|sbatch|rest" >&2; exit 2 ;;
esac
