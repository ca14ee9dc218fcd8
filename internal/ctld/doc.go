// Package ctld is Sluice's controller, the part Slurm calls slurmctld. It
// owns the cluster's live state, persists every change before it
// acknowledges it, drives the scheduling core (internal/sched) on events
// and timers, applies the core's plans by talking to the node agents
// (internal/noded), and serves the API the commands use.
//
// # One owner
//
// The live state (a sched.State plus the controller's own bookkeeping) is
// owned by one goroutine, the event loop. HTTP handlers never touch it:
// they send the loop a closure and wait for its answer. The loop takes
// every closure that is waiting, runs them one after the other, runs the
// scheduler if one of them asked for it, writes everything they changed to
// the store in one transaction (group commit), and only then answers them
// and sends the agents what the plan decided (launch, terminate, suspend).
// So a job id reaches sbatch only once the job is stored, and a job is
// launched only once its start is stored.
//
//	handlers --closure--> [ loop: run batch -> schedule -> commit ] --reply--> handlers
//	                                                  |
//	                                                  +--> outbox: launch/terminate/signal (agents)
//
// # Listings
//
// A listing is rendered by the loop, so it is a consistent snapshot by
// construction, and costs the loop as little as it can (listing.go):
// squeue's filters are applied before anything is rendered (squeue -j ID
// looks at that job only), squeue's usual columns are rendered as brief
// records and encoded straight into compact rows (about 1 µs per job,
// one reused record, no per-job garbage), full records are encoded (gob
// for Sluice's commands, JSON for others) after the loop has moved on.
// Submissions share the strings and environments they repeat (intern.go):
// a pending job costs about 2.5 KB of heap.
//
// # Identity
//
// Local commands connect to the Unix socket StateSaveLocation/sluice.sock;
// the controller reads the caller's uid and gid from the kernel
// (SO_PEERCRED). Remote commands use the TCP port with a JWT (HS256, the
// key in StateSaveLocation/jwt_hs256.key; `scontrol token` hands them
// out). Node agents sign every request with the cluster key
// (StateSaveLocation/cluster.key) and send it over mutual TLS with a
// certificate of the cluster CA (StateSaveLocation/ca.crt) naming their
// node, issued when they join with the cluster key (agenttls.go). Users act on their own jobs; root, the
// SlurmUser and accounting operators/administrators on every job.
//
// # Recovery
//
// Every job is stored as one row holding its whole record; on start the
// controller replays the rows into a fresh sched.State (a job keeps its id,
// a running job its allocation), then waits for the agents to register:
// a job an agent still runs is kept, a job it finished is ended with the
// agent's result, and a job recorded as started that no agent knows is
// launched again (launches are idempotent by job id and restart count, so
// nothing runs twice).
package ctld
