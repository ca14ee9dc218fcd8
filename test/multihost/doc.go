// Package multihost is the multi-host test bed: it proves that Sluice works
// when the controller, each node agent and the user's login host are
// separate machines that share no network stack, no /tmp and no state
// directory (DESIGN.md, "Clusters are multi-host").
//
// Each host of a bed is a named network namespace (ip netns) with its own
// address on 10.200.0.0/24, joined by a veth pair to a bridge that lives in
// a namespace of its own (the machine's root namespace is not touched),
// plus a mount and UTS namespace held by a small holder process: a private
// tmpfs on /tmp, its own state directory at BED/local (the slurm.conf's
// StateSaveLocation and SlurmdSpoolDir point there, so the same path is a
// different directory on every host), the other hosts' directories hidden,
// its own host name and an /etc/hosts naming every host. Only the binary
// and slurm.conf (BED/shared) are common, as on a real cluster where they
// are installed on every machine. The hosts are:
//
//	ctl    10.200.0.2       sluice ctld (SlurmctldHost=ctl(10.200.0.2))
//	n1..n3 10.200.0.11..13  sluice noded, one per host (NodeAddr in slurm.conf)
//	login  10.200.0.100     the user's commands, with SLURM_JWT from
//	                        `scontrol token` (no controller socket there)
//
// The end-to-end paths it covers, each from the login host:
//
//   - sbatch -N3: the script runs on n1 (its output in n1's own /tmp), srun
//     inside it reaches the controller with the job's token and runs a task
//     on each node host (TestMultiHostSbatchN3);
//   - salloc -N2 srun -l hostname, and an allocation that outlives a slow
//     command with a late step in it (TestMultiHostSallocSrun,
//     TestMultiHostSallocHolds);
//   - srun outside an allocation: -N3 -l hostname, stdin forwarded to tasks on
//     two hosts, the highest exit code returned (TestMultiHostSrunLogin);
//   - salloc killed with SIGKILL: its allocation ends within 60 s
//     (TestMultiHostSallocKilled);
//   - a node host cut off from the network (its veth link down): set DOWN
//     after SlurmdTimeout, its --no-requeue job ends NODE_FAIL and its other
//     job is requeued, the first run recorded NODE_FAIL; when the link comes
//     back the stale runs are killed and the requeued job runs there again
//     (TestMultiHostNodeFail);
//   - issue 17's chaos test, cut-network rounds: under a load of short batch
//     jobs, a node host's link down for longer than SlurmdTimeout and back,
//     three times; no job runs twice at once or more often than requeued,
//     every acknowledged job ends COMPLETED (TestMultiHostChaosNetCut);
//   - the controller killed with SIGKILL and restarted: the agents register
//     again over the network, a running job ends COMPLETED, another is
//     cancelled from the login host and its processes leave the node hosts
//     (TestMultiHostControllerRestart);
//   - a user's job (alice, with her own token on the login host) runs as her
//     on both node hosts, its srun too, its output file hers (TestMultiHostUser);
//   - srun --pty, which should run on the first allocated node: it still runs
//     on the submit host, and the test skips naming that known gap
//     (TestMultiHostSrunPty).
//
// The single-machine end-to-end tests of internal/cli and internal/ctld
// (sluice up, in-process agents) stay where they are: they need no root and
// run everywhere; the bed repeats their multi-host paths above.
//
// The bed needs root (namespaces, veth, mounts): without it every test
// skips, saying so. A bed removes itself when its test ends, passed or
// failed (t.Cleanup kills every process in its namespaces and deletes
// them); a run that crashed leaves namespaces named sluicemh-PID-..., which
// the next run deletes when that PID is gone.
package multihost
