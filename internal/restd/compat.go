package restd

import (
	"fmt"
	"strings"
)

// slurmrestdOps are the operations slurmrestd 24.11 serves under
// v0.0.42 (its -d v0.0.42 -s slurmctld,slurmdbd description): the
// reference CompatibilityMarkdown compares the route table with.
var slurmrestdOps = []string{
	"GET /slurm/v0.0.42/diag/", "POST /slurm/v0.0.42/job/allocate", "POST /slurm/v0.0.42/job/submit",
	"DELETE /slurm/v0.0.42/job/{job_id}", "GET /slurm/v0.0.42/job/{job_id}", "POST /slurm/v0.0.42/job/{job_id}",
	"DELETE /slurm/v0.0.42/jobs/", "GET /slurm/v0.0.42/jobs/", "GET /slurm/v0.0.42/jobs/state/",
	"GET /slurm/v0.0.42/licenses/", "DELETE /slurm/v0.0.42/node/{node_name}", "GET /slurm/v0.0.42/node/{node_name}",
	"POST /slurm/v0.0.42/node/{node_name}", "GET /slurm/v0.0.42/nodes/", "POST /slurm/v0.0.42/nodes/",
	"GET /slurm/v0.0.42/partition/{partition_name}", "GET /slurm/v0.0.42/partitions/", "GET /slurm/v0.0.42/ping/",
	"GET /slurm/v0.0.42/reconfigure/", "GET /slurm/v0.0.42/reservation/{reservation_name}",
	"GET /slurm/v0.0.42/reservations/", "GET /slurm/v0.0.42/shares",
	"DELETE /slurmdb/v0.0.42/account/{account_name}", "GET /slurmdb/v0.0.42/account/{account_name}",
	"GET /slurmdb/v0.0.42/accounts/", "POST /slurmdb/v0.0.42/accounts/", "POST /slurmdb/v0.0.42/accounts_association/",
	"DELETE /slurmdb/v0.0.42/association/", "GET /slurmdb/v0.0.42/association/",
	"DELETE /slurmdb/v0.0.42/associations/", "GET /slurmdb/v0.0.42/associations/", "POST /slurmdb/v0.0.42/associations/",
	"DELETE /slurmdb/v0.0.42/cluster/{cluster_name}", "GET /slurmdb/v0.0.42/cluster/{cluster_name}",
	"GET /slurmdb/v0.0.42/clusters/", "POST /slurmdb/v0.0.42/clusters/", "GET /slurmdb/v0.0.42/config",
	"POST /slurmdb/v0.0.42/config", "GET /slurmdb/v0.0.42/diag/", "GET /slurmdb/v0.0.42/instance/",
	"GET /slurmdb/v0.0.42/instances/", "GET /slurmdb/v0.0.42/job/{job_id}", "GET /slurmdb/v0.0.42/jobs/",
	"GET /slurmdb/v0.0.42/ping/", "GET /slurmdb/v0.0.42/qos/", "POST /slurmdb/v0.0.42/qos/",
	"DELETE /slurmdb/v0.0.42/qos/{qos}", "GET /slurmdb/v0.0.42/qos/{qos}", "GET /slurmdb/v0.0.42/tres/",
	"POST /slurmdb/v0.0.42/tres/", "DELETE /slurmdb/v0.0.42/user/{name}", "GET /slurmdb/v0.0.42/user/{name}",
	"GET /slurmdb/v0.0.42/users/", "POST /slurmdb/v0.0.42/users/", "POST /slurmdb/v0.0.42/users_association/",
	"DELETE /slurmdb/v0.0.42/wckey/{id}", "GET /slurmdb/v0.0.42/wckey/{id}", "GET /slurmdb/v0.0.42/wckeys/",
	"POST /slurmdb/v0.0.42/wckeys/",
}

// CompatibilityMarkdown is the REST API's section of
// docs/compatibility.md: what Sluice serves of slurmrestd 24.11's
// v0.0.42 operations, from the route table, and what it does not.
func CompatibilityMarkdown() string {
	served := map[string]string{}
	for _, o := range operations() {
		served[o.method+" "+strings.Replace(o.path, "VERSION", "v0.0.42", 1)] = o.summary
	}
	var b strings.Builder
	n := 0
	var rows []string
	for _, op := range slurmrestdOps {
		status := "not served"
		if s, ok := served[op]; ok {
			status, n = "served: "+s, n+1
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s |", op, status))
	}
	fmt.Fprintf(&b, `
## REST API (slurmrestd)

`+"`sluice ctld --rest-listen ADDR`"+` (and `+"`sluice up --rest-listen ADDR`"+`) serves slurmrestd's
REST API from the controller; `+"`sluice restd --listen ADDR`"+` serves it as a separate daemon.
ADDR is host:port (X-SLURM-USER-NAME and X-SLURM-USER-TOKEN headers, tokens from `+"`scontrol token`"+`)
or unix:/path (the local user, by SO_PEERCRED). Generated from internal/restd's route table.
The same operations are served under v0.0.41 and v0.0.40 (v0.0.40's nodes without gpu_spec and res_cores_per_gpu).
/openapi/v3 describes exactly these routes.

Of slurmrestd's %d v0.0.42 operations: %d served, %d not served.

| operation | status |
|---|---|
%s
`, len(slurmrestdOps), n, len(slurmrestdOps)-n, strings.Join(rows, "\n"))
	return b.String()
}
