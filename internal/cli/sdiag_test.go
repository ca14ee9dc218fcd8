package cli

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestSdiagOracle: sdiag's report as Slurm 24.11 printed it (sdiag on
// the oracle of oracleQueueFixture, after sacct's captures), the
// figures it showed in the fixture. Two lines are normalised where Sluice
// keeps no such figure: "Job states ts" (Slurm's last job count, 22:52:29;
// Sluice counts when asked) and backfill's try-sched depths (Slurm 0;
// Sluice reports its one depth, 1).
func TestSdiagOracle(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2026, 11, 26, h, m, s, 0, time.UTC) }
	s := api.SdiagResponse{Now: at(22, 52, 40), StartTime: at(22, 50, 29), ResetTime: at(22, 50, 29),
		ServerThreads: 1, JobsSubmitted: 12, JobsStarted: 6, JobsCompleted: 3, JobsPending: 7, JobsRunning: 3,
		Cycles: 11, LastCycleUS: 33, MaxCycleUS: 1556, TotalCycleUS: 386 * 11, TotalDepth: 11, LastQueueLen: 1,
		CyclesPerMin: 5, BfCycles: 3, BfLastCycleWhen: at(22, 52, 29), BfLastCycleUS: 40, BfMaxCycleUS: 296,
		BfTotalCycleUS: 125 * 3, BfLastDepth: 1, BfTotalDepth: 3, BfLastQueueLen: 1, BfTotalQueueLen: 3,
		RPCTypes: []api.RPCStat{{Name: "REQUEST_PARTITION_INFO", ID: 2009, Count: 63, TotalUS: 3923},
			{Name: "REQUEST_NODE_INFO", ID: 2007, Count: 36, TotalUS: 13665},
			{Name: "REQUEST_JOB_INFO", ID: 2003, Count: 22, TotalUS: 2506},
			{Name: "MESSAGE_NODE_REGISTRATION_STATUS", ID: 1002, Count: 11, TotalUS: 1284},
			{Name: "REQUEST_SUBMIT_BATCH_JOB", ID: 4003, Count: 8, TotalUS: 6665},
			{Name: "ACCOUNTING_UPDATE_MSG", ID: 10001, Count: 7, TotalUS: 279},
			{Name: "REQUEST_FED_INFO", ID: 2049, Count: 6, TotalUS: 337},
			{Name: "REQUEST_JOB_INFO_SINGLE", ID: 2021, Count: 5, TotalUS: 378},
			{Name: "REQUEST_COMPLETE_BATCH_SCRIPT", ID: 5018, Count: 3, TotalUS: 1766},
			{Name: "REQUEST_PING", ID: 1008, Count: 2, TotalUS: 821},
			{Name: "MESSAGE_EPILOG_COMPLETE", ID: 6012, Count: 2, TotalUS: 1375},
			{Name: "REQUEST_PERSIST_INIT", ID: 6500, Count: 1, TotalUS: 131},
			{Name: "REQUEST_UPDATE_NODE", ID: 3002, Count: 1, TotalUS: 134},
			{Name: "REQUEST_HET_JOB_ALLOC_INFO", ID: 4027, Count: 1, TotalUS: 169},
			{Name: "REQUEST_JOB_STEP_CREATE", ID: 5001, Count: 1, TotalUS: 416},
			{Name: "REQUEST_STEP_COMPLETE", ID: 5016, Count: 1, TotalUS: 226},
			{Name: "REQUEST_JOB_USER_INFO", ID: 2039, Count: 1, TotalUS: 71},
			{Name: "REQUEST_STATS_INFO", ID: 2035, Count: 1, TotalUS: 119},
			{Name: "REQUEST_UPDATE_JOB", ID: 3001, Count: 1, TotalUS: 217}},
		RPCUsers: []api.RPCStat{{Name: "root", ID: 0, Count: 163, TotalUS: 27232},
			{Name: "alice", ID: 1001, Count: 5, TotalUS: 3560},
			{Name: "bob", ID: 1002, Count: 2, TotalUS: 1427},
			{Name: "dave", ID: 1004, Count: 2, TotalUS: 1515},
			{Name: "charlie", ID: 1003, Count: 1, TotalUS: 748}}}
	want := "*******************************************************\n" +
		"sdiag output at Thu Nov 26 22:52:40 2026 (1795733560)\n" +
		"Data since      Thu Nov 26 22:50:29 2026 (1795733429)\n" +
		"*******************************************************\nServer thread count:  1\n" +
		"RPC queue enabled:    0\nAgent queue size:     0\nAgent count:          0\nAgent thread count:   0\n" +
		"DBD Agent queue size: 0\n\nJobs submitted: 12\nJobs started:   6\nJobs completed: 3\n" +
		"Jobs canceled:  0\nJobs failed:    0\n\nJob states ts:  Thu Nov 26 22:52:40 2026 (1795733560)\n" +
		"Jobs pending:   7\nJobs running:   3\n\nMain schedule statistics (microseconds):\n\tLast cycle:   33\n" +
		"\tMax cycle:    1556\n\tTotal cycles: 11\n\tMean cycle:   386\n\tMean depth cycle:  1\n" +
		"\tCycles per minute: 5\n\tLast queue length: 1\n\nMain scheduler exit:\n\tEnd of job queue:11\n" +
		"\tHit default_queue_depth: 0\n\tHit sched_max_job_start: 0\n\tBlocked on licenses: 0\n" +
		"\tHit max_rpc_cnt: 0\n\tTimeout (max_sched_time): 0\n\nBackfilling stats\n" +
		"\tTotal backfilled jobs (since last slurm start): 0\n" +
		"\tTotal backfilled jobs (since last stats cycle start): 0\n" +
		"\tTotal backfilled heterogeneous job components: 0\n\tTotal cycles: 3\n" +
		"\tLast cycle when: Thu Nov 26 22:52:29 2026 (1795733549)\n\tLast cycle: 40\n\tMax cycle:  296\n" +
		"\tMean cycle: 125\n\tLast depth cycle: 1\n\tLast depth cycle (try sched): 1\n\tDepth Mean: 1\n" +
		"\tDepth Mean (try depth): 1\n\tLast queue length: 1\n\tQueue length mean: 1\n\tLast table size: 1\n" +
		"\tMean table size: 1\n\nBackfill exit\n\tEnd of job queue: 3\n\tHit bf_max_job_start: 0\n" +
		"\tHit bf_max_job_test: 0\n\tSystem state changed: 0\n\tHit table size limit (bf_node_space_size): 0\n" +
		"\tTimeout (bf_max_time): 0\n\nLatency for 1000 calls to gettimeofday(): 39 microseconds\n\n" +
		"Remote Procedure Call statistics by message type\n" +
		"\tREQUEST_PARTITION_INFO                  ( 2009) count:63     ave_time:62     total_time:3923\n" +
		"\tREQUEST_NODE_INFO                       ( 2007) count:36     ave_time:379    total_time:13665\n" +
		"\tREQUEST_JOB_INFO                        ( 2003) count:22     ave_time:113    total_time:2506\n" +
		"\tMESSAGE_NODE_REGISTRATION_STATUS        ( 1002) count:11     ave_time:116    total_time:1284\n" +
		"\tREQUEST_SUBMIT_BATCH_JOB                ( 4003) count:8      ave_time:833    total_time:6665\n" +
		"\tACCOUNTING_UPDATE_MSG                   (10001) count:7      ave_time:39     total_time:279\n" +
		"\tREQUEST_FED_INFO                        ( 2049) count:6      ave_time:56     total_time:337\n" +
		"\tREQUEST_JOB_INFO_SINGLE                 ( 2021) count:5      ave_time:75     total_time:378\n" +
		"\tREQUEST_COMPLETE_BATCH_SCRIPT           ( 5018) count:3      ave_time:588    total_time:1766\n" +
		"\tREQUEST_PING                            ( 1008) count:2      ave_time:410    total_time:821\n" +
		"\tMESSAGE_EPILOG_COMPLETE                 ( 6012) count:2      ave_time:687    total_time:1375\n" +
		"\tREQUEST_PERSIST_INIT                    ( 6500) count:1      ave_time:131    total_time:131\n" +
		"\tREQUEST_UPDATE_NODE                     ( 3002) count:1      ave_time:134    total_time:134\n" +
		"\tREQUEST_HET_JOB_ALLOC_INFO              ( 4027) count:1      ave_time:169    total_time:169\n" +
		"\tREQUEST_JOB_STEP_CREATE                 ( 5001) count:1      ave_time:416    total_time:416\n" +
		"\tREQUEST_STEP_COMPLETE                   ( 5016) count:1      ave_time:226    total_time:226\n" +
		"\tREQUEST_JOB_USER_INFO                   ( 2039) count:1      ave_time:71     total_time:71\n" +
		"\tREQUEST_STATS_INFO                      ( 2035) count:1      ave_time:119    total_time:119\n" +
		"\tREQUEST_UPDATE_JOB                      ( 3001) count:1      ave_time:217    total_time:217\n\n" +
		"Remote Procedure Call statistics by user\n" +
		"\troot            (       0) count:163    ave_time:167    total_time:27232\n" +
		"\talice           (    1001) count:5      ave_time:712    total_time:3560\n" +
		"\tbob             (    1002) count:2      ave_time:713    total_time:1427\n" +
		"\tdave            (    1004) count:2      ave_time:757    total_time:1515\n" +
		"\tcharlie         (    1003) count:1      ave_time:748    total_time:748\n\nPending RPC statistics\n" +
		"\tNo pending RPCs\n"
	if got := RenderSdiag(&s, time.UTC, 39); got != want {
		t.Errorf("got:\n%s\nwant (Slurm 24.11):\n%s", got, want)
	}
}

// TestSdiagRPCOrder checks sdiag's orders of the call tables: by count
// (the default), -i by id, -t by total time, -T by average time.
func TestSdiagRPCOrder(t *testing.T) {
	rows := []api.RPCStat{
		{Name: "REQUEST_JOB_INFO", ID: 2003, Count: 50, TotalUS: 5000},          // avg 100
		{Name: "REQUEST_SUBMIT_BATCH_JOB", ID: 4003, Count: 10, TotalUS: 20000}, // avg 2000
		{Name: "REQUEST_PING", ID: 1008, Count: 20, TotalUS: 8000},              // avg 400
		{Name: "SLUICE_ACCOUNTING", ID: 0, Count: 3, TotalUS: 9000},             // avg 3000
	}
	for _, tc := range []struct {
		order rpcOrder
		want  string
	}{
		{rpcByCount, "2003 1008 4003 0"},
		{rpcByID, "0 1008 2003 4003"},
		{rpcByTotal, "4003 0 1008 2003"},
		{rpcByAverage, "0 4003 1008 2003"},
	} {
		r := slices.Clone(rows)
		sortRPCStats(r, tc.order)
		var got []string
		for _, x := range r {
			got = append(got, strconv.Itoa(int(x.ID)))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("order %d: %s, want %s", tc.order, g, tc.want)
		}
	}
}
