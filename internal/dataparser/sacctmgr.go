package dataparser

import "strings"

// AccountFields are the sacctmgr show account fields Accounts reads, in
// this order.
var AccountFields = []string{"Account", "Descr", "Org"}

// Accounts is the data of slurmrestd's /slurmdb/v0.0.42/accounts (v0.0.42's
// ACCOUNT records) from sacctmgr -P show account rows of AccountFields.
// Associations and coordinators print empty, as slurmrestd lists them
// without the with_assocs and with_coords flags.
func Accounts(rows [][]string) Obj {
	list := []any{}
	for _, r := range rows {
		list = append(list, Obj{
			{"associations", []any{}},
			{"coordinators", []any{}},
			{"description", r[1]},
			{"name", r[0]},
			{"organization", r[2]},
			{"flags", []any{}},
		})
	}
	return Obj{{"accounts", list}}
}

// UserFields are the sacctmgr show user fields Users reads.
var UserFields = []string{"User", "DefaultAccount", "AdminLevel"}

// Users is the data of /slurmdb/v0.0.42/users (USER records) from
// sacctmgr -P show user rows of UserFields.
func Users(rows [][]string) Obj {
	list := []any{}
	for _, r := range rows {
		admin := r[2]
		if admin == "" {
			admin = "None"
		}
		list = append(list, Obj{
			{"administrator_level", Strings(strings.Split(admin, ",")...)},
			{"associations", []any{}},
			{"coordinators", []any{}},
			{"default", Obj{{"account", r[1]}, {"wckey", ""}}},
			{"flags", Strings("NONE")},
			{"name", r[0]},
			{"old_name", ""},
			{"wckeys", []any{}},
		})
	}
	return Obj{{"users", list}}
}
