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
// wait status in the node's exit journal and pushes it to the agent over
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
//	SPOOL/records.log                  the agents' job records (JSON lines)
//	SPOOL/exits.log                    jobs' wait statuses (the supervisor's)
//	SPOOL/scripts/UID_GID_HASH         batch scripts, owned by the jobs' user
//	SPOOL/supervisor.log               the supervisor's own diagnostics
//
// The two journals are appended to (one line per change) rather than one
// file per job, because creating and deleting small files is what a queue
// of short jobs would otherwise spend most of its node-side time on (see
// journal.go). A job of an older agent's per-job shim keeps its pids.json
// and exit.json in SPOOL/jobs/ID; the agent still reads them.
package noded
