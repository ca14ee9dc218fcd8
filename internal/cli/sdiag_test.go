package cli

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestSdiagGolden pins sdiag's layout: counters, the main scheduler's
// means (total/cycles) and the backfill section.
func TestSdiagGolden(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	s := api.SdiagResponse{Now: at, StartTime: at.Add(-2 * time.Hour), ResetTime: at.Add(-12 * time.Hour),
		ServerThreads: 12, JobsSubmitted: 40, JobsStarted: 35, JobsCompleted: 30, JobsCanceled: 2, JobsFailed: 1,
		JobsPending: 5, JobsRunning: 3, Cycles: 10, LastCycleUS: 120, MaxCycleUS: 900, TotalCycleUS: 3000,
		TotalDepth: 55, LastQueueLen: 8, CyclesPerMin: 1, BfTotalJobs: 7, BfJobsSinceReset: 4, BfCycles: 4,
		BfLastCycleWhen: at.Add(-time.Minute), BfLastCycleUS: 300, BfMaxCycleUS: 800, BfTotalCycleUS: 2000,
		BfLastDepth: 6, BfTotalDepth: 20, BfLastQueueLen: 8, BfTotalQueueLen: 30,
		RPCTypes: []api.RPCStat{{Name: "REQUEST_JOB_INFO", ID: 2003, Count: 12, TotalUS: 3600},
			{Name: "REQUEST_SUBMIT_BATCH_JOB", ID: 4003, Count: 40, TotalUS: 52000}},
		RPCUsers: []api.RPCStat{{Name: "alice", ID: 1001, Count: 30, TotalUS: 40000}, {Name: "root", ID: 0, Count: 22, TotalUS: 15600}}}
	extCheckGolden(t, filepath.Join("testdata", "sdiag", "stats.golden"), RenderSdiag(&s, time.UTC, 25))
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
