// Package noded is Sluice's node agent, the part Slurm calls slurmd (plus
// slurmstepd for batch jobs). It registers its node's resources (CPUs,
// memory, GPUs) with the controller, launches batch jobs as their users,
// tracks them, signals, suspends and resumes them, enforces time limits and
// reports how each job ended. It makes no scheduling decisions.
//
// Every job runs under a small supervisor, the shim (`sluice noded-shim`),
// started in its own session so that it outlives the agent. The shim starts
// the job in its own process group (and, for a root agent with cgroup v2,
// its own cgroup), waits for it and records the exit status in the job's
// spool directory. The agent keeps a record per job on disk (pids with their
// /proc start times, start time, time limit, suspended time, the kill
// sequence in progress), so a restarted agent re-reads the records, checks
// the processes are still the same ones, and carries on tracking, enforcing
// limits and reporting.
//
// Layout of the spool directory:
//
//	SPOOL/jobs/ID/record.json   the agent's record (agent writes)
//	SPOOL/jobs/ID/launch.json   what the shim must start (agent writes)
//	SPOOL/jobs/ID/slurm_script  the batch script, owned by the job's user
//	SPOOL/jobs/ID/pids.json     shim and job pids (shim writes)
//	SPOOL/jobs/ID/exit.json     the job's wait status (shim writes)
//	SPOOL/jobs/ID/shim.log      the shim's own diagnostics
package noded
