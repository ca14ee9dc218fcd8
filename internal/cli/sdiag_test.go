package cli

import (
	"path/filepath"
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
		BfLastDepth: 6, BfTotalDepth: 20, BfLastQueueLen: 8, BfTotalQueueLen: 30}
	extCheckGolden(t, filepath.Join("testdata", "sdiag", "stats.golden"), RenderSdiag(&s, time.UTC, 25))
}
