// Package restd is Sluice's REST API, compatible with slurmrestd 24.11:
// the same paths (/slurm/v0.0.42/jobs, /slurm/v0.0.42/job/submit, ...),
// the same authentication (X-SLURM-USER-NAME and X-SLURM-USER-TOKEN
// headers, or a local Unix socket identified by SO_PEERCRED), the same
// data_parser v0.0.42 bodies the commands print with --json (package
// dataparser), and slurmrestd's error envelopes and HTTP status codes.
//
// The handlers hold no state: each request is carried out through the
// controller's client API (package api) as the authenticated caller, so a
// REST call is authorized exactly as the command it stands for. The
// controller serves it on its own listener (sluice ctld --rest-listen),
// handing the handlers a client that calls its API in process; the
// separate daemon (sluice restd) reaches the controller over its TCP
// port with the caller's token, or over its Unix socket. /openapi/v3 is
// generated from the route table (routes.go): it describes what Sluice
// serves, nothing more.
package restd
