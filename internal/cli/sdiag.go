package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

func init() {
	Register(Command{Name: "sdiag", Summary: "scheduler statistics (cycles, depth, backfill, job counters)", Link: true, Run: runSdiag})
}

const sdiagUsage = `Usage: sdiag [-r] [-i|-t|-T] [--json]
Prints the controller's statistics: job counters and the main scheduler's
and backfill's cycle times and depths since the last reset (midnight UTC
or sdiag -r), then the calls it served by message type and by user since
it started or sdiag -r. -r resets them (operators and administrators only).
  -i, --sort-by-id     sort the call tables by message type and user id
  -t, --sort-by-time   sort them by total time
  -T, --sort-by-time2  sort them by average time
(the default sorts them by count)
`

// sdiagOpts are sdiag's options.
type sdiagOpts struct {
	reset, help, byID, byTime, byAvg bool
	// dp is --json/--yaml (cli/dataparser.go).
	dp *dpFlags
}

func parseSdiag(args []string) (*sdiagOpts, error) {
	o := &sdiagOpts{}
	fs := pflag.NewFlagSet("sdiag", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&o.reset, "reset", "r", false, "")
	o.dp = addDataParserFlags(fs)
	fs.BoolVarP(&o.help, "help", "h", false, "")
	fs.BoolVar(&o.help, "usage", false, "")
	fs.BoolP("all", "a", false, "")
	fs.BoolVarP(&o.byID, "sort-by-id", "i", false, "")
	fs.BoolVarP(&o.byTime, "sort-by-time", "t", false, "")
	fs.BoolVarP(&o.byAvg, "sort-by-time2", "T", false, "")
	return o, fs.Parse(args)
}

func runSdiag(ctx context.Context, env *Env, args []string) int {
	o, err := parseSdiag(args)
	if err != nil {
		return OptionError(env, "sdiag", err)
	}
	if o.help {
		fmt.Fprint(env.Stdout, sdiagUsage)
		return 0
	}
	// An unknown data_parser makes sdiag exit 253 (oracle).
	if _, ok, rc := dpStart(env, "sdiag", o.dp, 253); ok && rc >= 0 {
		return rc
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sdiag", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if o.reset {
		if err := cl.SdiagReset(ctx); err != nil {
			return clientError(env, "sdiag", err)
		}
		fmt.Fprintln(env.Stdout, "Reset scheduling statistics")
		return 0
	}
	st, err := cl.Sdiag(ctx)
	if err != nil {
		return clientError(env, "sdiag", err)
	}
	order := rpcByCount
	switch {
	case o.byID:
		order = rpcByID
	case o.byTime:
		order = rpcByTotal
	case o.byAvg:
		order = rpcByAverage
	}
	sortRPCStats(st.RPCTypes, order)
	sortRPCStats(st.RPCUsers, order)
	if f, ok := o.dp.format(); ok {
		dpWrite(env, f, dataparser.Diag(&st, gettimeofdayLatency()), dpMeta(ctx, env, cl, clientCommand("sdiag", args)...))
		return 0
	}
	fmt.Fprint(env.Stdout, RenderSdiag(&st, time.Local, gettimeofdayLatency()))
	return 0
}

// sdiagTime prints a time as sdiag does: "Sun Nov 22 21:40:00 2026 (1795470000)".
func sdiagTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "N/A"
	}
	return fmt.Sprintf("%s (%d)", t.In(loc).Format("Mon Jan 02 15:04:05 2006"), t.Unix())
}

func sdiagMean(total int64, n int) int64 {
	if n == 0 {
		return 0
	}
	return total / int64(n)
}

// RenderSdiag prints the statistics in sdiag's layout (sdiag.1). Sluice
// has no RPC or agent threads of Slurm's kind: the thread count is the
// controller's goroutines and the agent queue its pending agent calls.
func RenderSdiag(s *api.SdiagResponse, loc *time.Location, latencyUS int64) string {
	var b strings.Builder
	stars := strings.Repeat("*", 55)
	fmt.Fprintln(&b, stars)
	fmt.Fprintf(&b, "sdiag output at %s\n", sdiagTime(s.Now, loc))
	fmt.Fprintf(&b, "Data since      %s\n", sdiagTime(s.ResetTime, loc))
	fmt.Fprintln(&b, stars)
	if s.StateSave != "" {
		// A Sluice addition, only while the store refuses writes.
		fmt.Fprintf(&b, "State save:           FAILING, %s\n", s.StateSave)
	}
	fmt.Fprintf(&b, "Server thread count:  %d\n", s.ServerThreads)
	fmt.Fprintf(&b, "RPC queue enabled:    %d\n", 0)
	fmt.Fprintf(&b, "Agent queue size:     %d\n", s.AgentQueue)
	fmt.Fprintf(&b, "Agent count:          %d\n", s.AgentQueue)
	fmt.Fprintf(&b, "Agent thread count:   %d\n", s.AgentQueue)
	fmt.Fprintf(&b, "DBD Agent queue size: %d\n\n", 0)
	fmt.Fprintf(&b, "Jobs submitted: %d\n", s.JobsSubmitted)
	fmt.Fprintf(&b, "Jobs started:   %d\n", s.JobsStarted)
	fmt.Fprintf(&b, "Jobs completed: %d\n", s.JobsCompleted)
	fmt.Fprintf(&b, "Jobs canceled:  %d\n", s.JobsCanceled)
	fmt.Fprintf(&b, "Jobs failed:    %d\n\n", s.JobsFailed)
	fmt.Fprintf(&b, "Job states ts:  %s\n", sdiagTime(s.Now, loc))
	fmt.Fprintf(&b, "Jobs pending:   %d\n", s.JobsPending)
	fmt.Fprintf(&b, "Jobs running:   %d\n\n", s.JobsRunning)
	fmt.Fprintln(&b, "Main schedule statistics (microseconds):")
	fmt.Fprintf(&b, "\tLast cycle:   %d\n", s.LastCycleUS)
	fmt.Fprintf(&b, "\tMax cycle:    %d\n", s.MaxCycleUS)
	fmt.Fprintf(&b, "\tTotal cycles: %d\n", s.Cycles)
	fmt.Fprintf(&b, "\tMean cycle:   %d\n", sdiagMean(s.TotalCycleUS, s.Cycles))
	fmt.Fprintf(&b, "\tMean depth cycle:  %d\n", sdiagMean(s.TotalDepth, s.Cycles))
	fmt.Fprintf(&b, "\tCycles per minute: %d\n", s.CyclesPerMin)
	fmt.Fprintf(&b, "\tLast queue length: %d\n\n", s.LastQueueLen)
	sdiagMainExits(&b, s)
	fmt.Fprintln(&b, "Backfilling stats")
	fmt.Fprintf(&b, "\tTotal backfilled jobs (since last slurm start): %d\n", s.BfTotalJobs)
	fmt.Fprintf(&b, "\tTotal backfilled jobs (since last stats cycle start): %d\n", s.BfJobsSinceReset)
	fmt.Fprintf(&b, "\tTotal backfilled heterogeneous job components: %d\n", 0)
	fmt.Fprintf(&b, "\tTotal cycles: %d\n", s.BfCycles)
	fmt.Fprintf(&b, "\tLast cycle when: %s\n", sdiagTime(s.BfLastCycleWhen, loc))
	fmt.Fprintf(&b, "\tLast cycle: %d\n", s.BfLastCycleUS)
	fmt.Fprintf(&b, "\tMax cycle:  %d\n", s.BfMaxCycleUS)
	fmt.Fprintf(&b, "\tMean cycle: %d\n", sdiagMean(s.BfTotalCycleUS, s.BfCycles))
	fmt.Fprintf(&b, "\tLast depth cycle: %d\n", s.BfLastDepth)
	fmt.Fprintf(&b, "\tLast depth cycle (try sched): %d\n", s.BfLastDepth)
	fmt.Fprintf(&b, "\tDepth Mean: %d\n", sdiagMean(s.BfTotalDepth, s.BfCycles))
	fmt.Fprintf(&b, "\tDepth Mean (try depth): %d\n", sdiagMean(s.BfTotalDepth, s.BfCycles))
	fmt.Fprintf(&b, "\tLast queue length: %d\n", s.BfLastQueueLen)
	fmt.Fprintf(&b, "\tQueue length mean: %d\n", sdiagMean(s.BfTotalQueueLen, s.BfCycles))
	fmt.Fprintf(&b, "\tLast table size: %d\n", s.BfLastDepth)
	fmt.Fprintf(&b, "\tMean table size: %d\n\n", sdiagMean(s.BfTotalDepth, s.BfCycles))
	sdiagBackfillExits(&b, s)
	fmt.Fprintf(&b, "Latency for 1000 calls to gettimeofday(): %d microseconds\n", latencyUS)
	renderRPCs(&b, s)
	return b.String()
}

// sdiagMainExits is Slurm 24.11's "Main scheduler exit:" section: why
// each cycle ended. Sluice's cycles always reach the end of the queue.
func sdiagMainExits(b *strings.Builder, s *api.SdiagResponse) {
	fmt.Fprintln(b, "Main scheduler exit:")
	fmt.Fprintf(b, "\tEnd of job queue:%d\n", s.Cycles) // no blank after the colon, as Slurm
	for _, l := range []string{"Hit default_queue_depth", "Hit sched_max_job_start", "Blocked on licenses",
		"Hit max_rpc_cnt", "Timeout (max_sched_time)"} {
		fmt.Fprintf(b, "\t%s: 0\n", l)
	}
	fmt.Fprintln(b)
}

// sdiagBackfillExits is Slurm 24.11's "Backfill exit" section; Sluice's
// backfill cycles always reach the end of the queue.
func sdiagBackfillExits(b *strings.Builder, s *api.SdiagResponse) {
	fmt.Fprintln(b, "Backfill exit")
	fmt.Fprintf(b, "\tEnd of job queue: %d\n", s.BfCycles)
	for _, l := range []string{"Hit bf_max_job_start", "Hit bf_max_job_test", "System state changed",
		"Hit table size limit (bf_node_space_size)", "Timeout (bf_max_time)"} {
		fmt.Fprintf(b, "\t%s: 0\n", l)
	}
	fmt.Fprintln(b)
}

// renderRPCs writes sdiag's call tables in its columns (name padded to
// 40 and id to 5 for message types, 16 and 8 for users), which
// monitoring exporters parse.
func renderRPCs(b *strings.Builder, s *api.SdiagResponse) {
	fmt.Fprintln(b, "\nRemote Procedure Call statistics by message type")
	for _, r := range s.RPCTypes {
		fmt.Fprintf(b, "\t%-40s(%5d) count:%-6d ave_time:%-6d total_time:%d\n", r.Name, r.ID, r.Count, rpcAverage(r), r.TotalUS)
	}
	fmt.Fprintln(b, "\nRemote Procedure Call statistics by user")
	for _, r := range s.RPCUsers {
		fmt.Fprintf(b, "\t%-16s(%8d) count:%-6d ave_time:%-6d total_time:%d\n", r.Name, r.ID, r.Count, rpcAverage(r), r.TotalUS)
	}
	fmt.Fprintln(b, "\nPending RPC statistics")
	if s.AgentQueue == 0 {
		fmt.Fprintln(b, "\tNo pending RPCs")
		return
	}
	fmt.Fprintf(b, "\t%-40s(%5d) count:%-6d\n", "SLUICE_AGENT_CALL", 0, s.AgentQueue)
}

func rpcAverage(r api.RPCStat) int64 { return sdiagMean(r.TotalUS, int(r.Count)) }

// rpcOrder is how sdiag sorts its call tables.
type rpcOrder int

const (
	rpcByCount   rpcOrder = iota // the default: most calls first
	rpcByID                      // -i: message type number or uid
	rpcByTotal                   // -t: most total time first
	rpcByAverage                 // -T: highest average time first
)

// sortRPCStats orders a call table; ties go by id, then name, so the
// output is stable.
func sortRPCStats(rows []api.RPCStat, order rpcOrder) {
	key := func(r api.RPCStat) int64 {
		switch order {
		case rpcByTotal:
			return r.TotalUS
		case rpcByAverage:
			return rpcAverage(r)
		case rpcByID:
			return 0
		}
		return r.Count
	}
	slices.SortStableFunc(rows, func(a, b api.RPCStat) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Name, b.Name))
	})
}

// gettimeofdayLatency times 1000 clock reads, as sdiag reports.
func gettimeofdayLatency() int64 {
	t0 := time.Now()
	for i := 0; i < 1000; i++ {
		_ = time.Now()
	}
	return time.Since(t0).Microseconds()
}
