package restd

import "github.com/sluice-hpc/sluice/internal/dataparser"

// wckeyOps are slurmdbd's wckey reads and removal. Sluice has no
// wckeys: the list is empty, as slurmdbd's with none, and only
// administrators may read or remove them (others: 2002, HTTP 500).
func wckeyOps() []op {
	id := param{"id", "path", "wckey id"}
	return []op{
		{method: "GET", path: "/slurmdb/VERSION/wckeys/", summary: "get wckeys (Sluice has none)", resp: "v0.0.42_openapi_wckey_resp", h: getWckeys},
		{method: "GET", path: "/slurmdb/VERSION/wckey/{id}", summary: "get a wckey (Sluice has none)", resp: "v0.0.42_openapi_wckey_resp",
			params: []param{id}, h: getWckeys},
		{method: "DELETE", path: "/slurmdb/VERSION/wckey/{id}", summary: "delete a wckey (Sluice has none)", resp: "v0.0.42_openapi_wckey_removed_resp",
			params: []param{id}, h: deleteWckey},
	}
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
