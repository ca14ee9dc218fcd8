// Package noded is Sluice's node agent, the part Slurm calls slurmd (plus
// slurmstepd for batch jobs). It registers its node's resources (CPUs,
// memory, GPUs) with the controller, launches batch jobs as their users,
// tracks them, signals, suspends and resumes them, enforces time limits and
// reports how each job ended. It makes no scheduling decisions.
//
// Jobs run under the node's resident supervisor (`sluice noded-shim serve
// SPOOL`, the part slurmstepd plays), one process per node started in its
// own session so that it outlives the agent. It forks each batch script
// directly (credentials, process group, cgroup, output files opened with
// the user's identity), reaps it, kills what it left behind, records its
// wait status in the job's spool directory and pushes it to the agent over
// a Unix socket. One supervisor instead of one shim exec per job: an exec
// of the sluice binary costs ~20 ms on a small VM, the whole budget of a
// queue of short jobs. The agent keeps a record per job on disk (pids with
// their /proc start times, start time, time limit, suspended time, the
// kill sequence in progress), so a restarted agent re-reads the records,
// reconnects to the supervisor (or checks /proc when it is gone) and
// carries on tracking, enforcing limits and reporting. A job whose
// supervisor died keeps being tracked through /proc and ends FAILED once
// its processes are gone (its exit status is lost with the supervisor).
//
// Layout of the spool directory:
//
//	SPOOL/jobs/ID/record.json   the agent's record (agent writes)
//	SPOOL/jobs/ID/slurm_script  the batch script, owned by the job's user
//	SPOOL/jobs/ID/exit.json     the job's wait status (supervisor writes)
//	SPOOL/supervisor.log        the supervisor's own diagnostics
//
// Records of an older agent may also hold launch.json, pids.json and
// shim.log (its per-job shims); the agent still reads their pids.json.
package noded
