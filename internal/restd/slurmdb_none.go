package restd

import (
	"net/http"

	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// noneOps are slurmdbd's operations on what Sluice does not have: wckeys
// (the list is empty, as slurmdbd's with none, and only administrators
// may read or remove them; others: 2002, HTTP 500), cloud instances, and
// new TRES, which slurmdbd 24.11 refuses to anyone.
func noneOps() []op {
	id := param{"id", "path", "wckey id"}
	return []op{
		{method: "GET", path: "/slurmdb/VERSION/wckeys/", summary: "get wckeys (Sluice has none)", resp: "v0.0.42_openapi_wckey_resp", h: getWckeys},
		{method: "GET", path: "/slurmdb/VERSION/wckey/{id}", summary: "get a wckey (Sluice has none)", resp: "v0.0.42_openapi_wckey_resp",
			params: []param{id}, h: getWckeys},
		{method: "DELETE", path: "/slurmdb/VERSION/wckey/{id}", summary: "delete a wckey (Sluice has none)", resp: "v0.0.42_openapi_wckey_removed_resp",
			params: []param{id}, h: deleteWckey},
		{method: "GET", path: "/slurmdb/VERSION/instances/", summary: "get cloud instances (Sluice has none)", resp: "v0.0.42_openapi_instances_resp", h: getInstances},
		{method: "GET", path: "/slurmdb/VERSION/instance/", summary: "get a cloud instance (Sluice has none)", resp: "v0.0.42_openapi_instances_resp", h: getInstances},
		{method: "POST", path: "/slurmdb/VERSION/tres/", summary: "add TRES (refused, as slurmdbd 24.11 does)", body: "v0.0.42_openapi_tres_resp", resp: "v0.0.42_openapi_resp", h: postTRES},
	}
}

// getInstances is slurmdbd's answer with no instances: a warning and no
// "instances" member at all, for every user (oracle).
func getInstances(c *call) reply {
	return reply{data: dataparser.Obj{}, warns: []dataparser.Warning{{Description: "slurmdb_instances_get() found nothing", Source: "_dump_instance_cond"}}}
}

// postTRES is slurmrestd 24.11's refusal to add TRES (oracle: 2036,
// HTTP 500, for root too).
func postTRES(c *call) reply {
	return reply{status: http.StatusInternalServerError, errs: []dataparser.Error{{Description: "Updating TRES is not currently supported",
		Number: 2036, Error: "Requested operation not supported on this system", Source: "op_handler_tres"}}}
}

// getWckeys is slurmdbd's answer with no wckeys: an empty list and its
// warning (oracle).
func getWckeys(c *call) reply {
	if !c.isAdmin() {
		return failed(nil, errDenied("slurmdb_wckeys_get() failed", "_dump_wckeys"))
	}
	return reply{data: dataparser.Obj{{Key: "wckeys", Val: []any{}}},
		warns: []dataparser.Warning{{Description: "slurmdb_wckeys_get() found nothing", Source: "_dump_wckeys"}}}
}

// deleteWckey finds nothing to remove.
func deleteWckey(c *call) reply {
	empty := dataparser.Obj{{Key: "deleted_wckeys", Val: []any{}}}
	if !c.isAdmin() {
		return failed(empty, errDenied("slurmdb_wckeys_remove() failed", "_delete_wckey"))
	}
	return reply{data: empty, warns: []dataparser.Warning{{Description: "slurmdb_wckeys_remove() found nothing", Source: "_delete_wckey"}}}
}
