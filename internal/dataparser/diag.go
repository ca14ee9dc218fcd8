package dataparser

import "github.com/sluice-hpc/sluice/internal/api"

// Diag is the data of `sdiag --json` (v0.0.42's STATS_MSG): the
// controller's scheduling statistics, in Slurm's field order. Counters
// Sluice has no equivalent of (agent threads, DBD queue, backfill table
// size) print 0 or the closest figure sdiag's text shows.
func Diag(s *api.SdiagResponse, latencyUS int64) Obj {
	return Obj{{"statistics", append(append(diagMain(s, latencyUS), diagBackfill(s)...),
		Field{"rpcs_by_message_type", rpcsByType(s.RPCTypes)},
		Field{"rpcs_by_user", rpcsByUser(s.RPCUsers)},
		Field{"pending_rpcs", []any{}},
		Field{"pending_rpcs_by_hostlist", []any{}},
	)}}
}

func diagMain(s *api.SdiagResponse, latencyUS int64) Obj {
	return Obj{
		{"parts_packed", 1},
		{"req_time", Time(s.Now)},
		{"req_time_start", Time(s.ResetTime)},
		{"server_thread_count", s.ServerThreads},
		{"agent_queue_size", s.AgentQueue},
		{"agent_count", s.AgentQueue},
		{"agent_thread_count", s.AgentQueue},
		{"dbd_agent_queue_size", 0},
		{"gettimeofday_latency", latencyUS},
		{"schedule_cycle_max", s.MaxCycleUS},
		{"schedule_cycle_last", s.LastCycleUS},
		{"schedule_cycle_sum", s.TotalCycleUS},
		{"schedule_cycle_total", s.Cycles},
		{"schedule_cycle_mean", mean(s.TotalCycleUS, s.Cycles)},
		{"schedule_cycle_mean_depth", mean(s.TotalDepth, s.Cycles)},
		{"schedule_cycle_per_minute", s.CyclesPerMin},
		{"schedule_cycle_depth", s.TotalDepth},
		{"schedule_exit", Obj{{"end_job_queue", s.Cycles}, {"default_queue_depth", 0}, {"max_job_start", 0},
			{"max_rpc_cnt", 0}, {"max_sched_time", 0}, {"licenses", 0}}},
		{"schedule_queue_length", s.LastQueueLen},
		{"jobs_submitted", s.JobsSubmitted},
		{"jobs_started", s.JobsStarted},
		{"jobs_completed", s.JobsCompleted},
		{"jobs_canceled", s.JobsCanceled},
		{"jobs_failed", s.JobsFailed},
		{"jobs_pending", s.JobsPending},
		{"jobs_running", s.JobsRunning},
		{"job_states_ts", Time(s.Now)},
	}
}

func diagBackfill(s *api.SdiagResponse) Obj {
	return Obj{
		{"bf_backfilled_jobs", s.BfTotalJobs},
		{"bf_last_backfilled_jobs", s.BfJobsSinceReset},
		{"bf_backfilled_het_jobs", 0},
		{"bf_cycle_counter", s.BfCycles},
		{"bf_cycle_mean", mean(s.BfTotalCycleUS, s.BfCycles)},
		{"bf_depth_mean", mean(s.BfTotalDepth, s.BfCycles)},
		{"bf_depth_mean_try", mean(s.BfTotalDepth, s.BfCycles)},
		{"bf_cycle_sum", s.BfTotalCycleUS},
		{"bf_cycle_last", s.BfLastCycleUS},
		{"bf_cycle_max", s.BfMaxCycleUS},
		{"bf_exit", Obj{{"end_job_queue", s.BfCycles}, {"bf_max_job_start", 0}, {"bf_max_job_test", 0},
			{"bf_max_time", 0}, {"bf_node_space_size", 0}, {"state_changed", 0}}},
		{"bf_last_depth", s.BfLastDepth},
		{"bf_last_depth_try", s.BfLastDepth},
		{"bf_depth_sum", s.BfTotalDepth},
		{"bf_depth_try_sum", s.BfTotalDepth},
		{"bf_queue_len", s.BfLastQueueLen},
		{"bf_queue_len_mean", mean(s.BfTotalQueueLen, s.BfCycles)},
		{"bf_queue_len_sum", s.BfTotalQueueLen},
		{"bf_table_size", s.BfLastDepth},
		{"bf_table_size_sum", s.BfTotalDepth},
		{"bf_table_size_mean", mean(s.BfTotalDepth, s.BfCycles)},
		{"bf_when_last_cycle", Time(s.BfLastCycleWhen)},
		{"bf_active", false},
	}
}

func mean(total int64, n int) int64 {
	if n == 0 {
		return 0
	}
	return total / int64(n)
}

func rpcsByType(rows []api.RPCStat) []any {
	out := []any{}
	for _, r := range rows {
		out = append(out, Obj{{"type_id", r.ID}, {"message_type", r.Name}, {"count", r.Count}, {"queued", 0},
			{"dropped", 0}, {"cycle_last", 0}, {"cycle_max", 0}, {"total_time", r.TotalUS},
			{"average_time", N(mean(r.TotalUS, int(r.Count)))}})
	}
	return out
}

func rpcsByUser(rows []api.RPCStat) []any {
	out := []any{}
	for _, r := range rows {
		out = append(out, Obj{{"user_id", r.ID}, {"user", r.Name}, {"count", r.Count}, {"total_time", r.TotalUS},
			{"average_time", N(mean(r.TotalUS, int(r.Count)))}})
	}
	return out
}
