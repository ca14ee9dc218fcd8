// Package api holds Sluice's wire types and clients, shared by the
// commands, the controller and the node agents (JSON over net/http):
//
//   - job.go: JobSpec, one sbatch submission (also what the simulator's
//     trace readers produce).
//   - ctl.go and client.go: the client <-> controller API (submit, query
//     jobs, nodes, partitions and configuration, cancel/signal, hold and
//     release, requeue, suspend/resume, update job and node, tokens) and
//     the Client the commands use. On the controller's Unix socket the
//     caller is identified by the kernel (SO_PEERCRED); on its TCP port by
//     a JWT (Authorization: Bearer). A request never says who sends it.
//   - listfilter.go, listwire.go and rows.go: job listings. squeue's
//     filters travel with the query and the controller sends only the
//     jobs they select; Sluice's commands ask for a compact encoding
//     (gob for full records, hand-written rows for squeue's usual
//     columns), other clients get JSON.
//   - agent.go: the controller <-> node agent protocol (registration,
//     heartbeats, job events; launch, signal, suspend, resume, terminate),
//     every request signed with the cluster key (HMAC-SHA256).
//   - agenttls.go and enroll.go: the cluster CA, the agents' joining with
//     the cluster key, and the mutual TLS every agent connection uses.
//
// Errors travel as {"error": "<Slurm's message>", "reason": "<reason>"}
// with a 4xx/5xx status; the commands print the message the way Slurm's
// clients do.
package api

// SlurmRelease is the Slurm release whose behaviour Sluice reproduces
// (the commands' -V, data_parser's meta.slurm.release).
const SlurmRelease = "24.11.5"
