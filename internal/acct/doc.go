// Package acct is Sluice's accounting policy: clusters, the account tree,
// users, associations, QOS and their limits, as Slurm keeps them in
// slurmdbd, plus the sacctmgr command language that edits them.
//
// The package is pure: plain data types (Cluster, Account, User,
// Association, QOS), a mutable State that the stores persist, and a
// read-only Policy snapshot with the lookups the scheduler and the priority
// code need (association by user/account/partition, the chain up to root,
// effective limits with Slurm's inheritance). It imports no database code;
// the SQL stores live in the sqlstore sub-package and implement Store.
//
// The sacctmgr language (add/modify/delete/show/dump/load over cluster,
// account, user, qos, association and tres) is parsed and executed here,
// against a State, so the command line tool and the controller serve the
// very same commands. Authorization (root, AdminLevel Administrator and
// Operator) is enforced by Exec, not by the callers.
package acct
