package acct

import (
	"fmt"
	"sort"
	"strings"
)

// Actor is who runs a command, as the kernel (or a verified token)
// identified it: UID 0 is root; otherwise Name is looked up in the users
// table for its AdminLevel. Callers must never fill it from a claim.
type Actor struct {
	Name string
	UID  int
}

// ExecEnv is what Exec needs besides the state and the command.
type ExecEnv struct {
	Actor Actor
	// DefaultCluster is the ClusterName of slurm.conf: registered on first
	// use when the database has no cluster yet, as slurmctld's
	// registration with slurmdbd does.
	DefaultCluster string
	// ReadFile reads the file of `load` (nil: load is refused).
	ReadFile func(name string) ([]byte, error)
	// Control, when its Name is set, is the running controller of that
	// cluster: `show cluster` prints its ControlHost, ControlPort and RPC.
	Control Cluster
	// ActiveJobs are the controller's pending and running jobs: an
	// association they bill cannot be deleted (slurmdbd asks slurmctld).
	ActiveJobs []ActiveJob

	// bulk defers the consistency check to the end of a script
	// (ApplyScript), which keeps loading a 10,000-user script linear.
	bulk bool
}

// ActiveJob is a pending or running job as a delete checks it.
type ActiveJob struct {
	ID                                uint32
	Cluster, Account, User, Partition string
}

// Result is what a successful command printed and whether it changed
// anything (a change is what the caller commits).
type Result struct {
	// Out are the messages sacctmgr prints on stdout.
	Out strings.Builder
	// Warnings are printed as `sacctmgr: warning: ...` on stderr.
	Warnings []string
	// Changed reports whether the state was modified.
	Changed bool
}

func (r *Result) printf(format string, a ...any) { fmt.Fprintf(&r.Out, format, a...) }

// Exec runs a modifying command (add, modify, delete, load) against st,
// in place. Run it on a clone: on error st may be half changed and must
// be discarded, which is how "a failed command changes nothing" is kept.
// Show and dump do not go through Exec (see Show and Dump).
func Exec(st *State, cmd *Command, env ExecEnv) (*Result, error) {
	if err := authorize(st, env.Actor, cmd); err != nil {
		return nil, deniedAs(st, cmd, env, err)
	}
	r := &Result{}
	var err error
	switch cmd.Verb {
	case VerbAdd:
		err = execAdd(st, cmd, env, r)
	case VerbModify:
		err = execModify(st, cmd, env, r)
	case VerbDelete:
		err = execDelete(st, cmd, env, r)
	case VerbLoad:
		err = execLoad(st, cmd, env, r)
	default:
		err = errorf("%s is not a modifying command", verbName(cmd.Verb))
	}
	if err != nil {
		return nil, err
	}
	if env.bulk {
		return r, nil
	}
	if err := st.Check(); err != nil {
		return nil, errorf("refusing change that would leave the database inconsistent: %v", err)
	}
	return r, nil
}

func verbName(v Verb) string {
	return [...]string{"", "add", "modify", "delete", "show", "dump", "load"}[v]
}

// adminLevel returns the privilege of the actor: uid 0 is Administrator,
// others have their user's AdminLevel (the root user is an Administrator).
func adminLevel(st *State, a Actor) AdminLevel {
	if a.UID == 0 {
		return AdminAdministrator
	}
	if u := st.Users[a.Name]; u != nil {
		return u.AdminLevel
	}
	return AdminNone
}

// errDenied is Slurm's message for a change by an unprivileged user.
const errDenied = "Your user doesn't have privilege to perform this action"

// deniedAs words a refusal as sacctmgr does for that command: add account
// and add user fail before asking slurmdbd, add qos prints what it would
// add before slurmdbd refuses, modify and delete add slurmdbd's answer.
func deniedAs(st *State, cmd *Command, env ExecEnv, err error) error {
	const perm = "Access/permission denied"
	switch {
	case cmd.Verb == VerbAdd && cmd.Entity == EntAccount:
		return plainErr(" error: Only admins/operators/coordinators can add accounts")
	case cmd.Verb == VerbAdd && cmd.Entity == EntUser:
		return plainErr(" error: Problem adding user associations: %s", perm)
	case cmd.Verb == VerbAdd && cmd.Entity == EntQOS:
		r := &Result{}
		if aerr := addQOS(st.Clone(), cmd, r); aerr != nil {
			return aerr
		}
		return &Error{Verbatim: true, Stdout: r.Out.String(), Msg: " Problem adding QOS: " + perm}
	case cmd.Verb == VerbModify || cmd.Verb == VerbDelete:
		return errorf("%s\n Error with request: %s", errDenied, perm)
	}
	return err
}

// authorize applies Slurm's rules: everyone may show; root and
// Administrators may do everything; Operators may add, modify and delete
// any object but may not grant or touch Administrator rights, nor dump
// and load whole clusters.
func authorize(st *State, a Actor, cmd *Command) error {
	if cmd.Verb == VerbShow {
		return nil
	}
	switch adminLevel(st, a) {
	case AdminAdministrator:
		return nil
	case AdminOperator:
		if cmd.Verb == VerbDump || cmd.Verb == VerbLoad {
			return errorf(errDenied)
		}
		for _, s := range cmd.Set {
			if s.Key == "AdminLevel" && strings.HasPrefix(strings.ToLower(s.Value), "a") {
				return errorf(errDenied)
			}
		}
		if cmd.Entity == EntUser && cmd.Verb != VerbAdd {
			for _, n := range cmd.Names {
				if u := st.Users[n]; u != nil && u.AdminLevel == AdminAdministrator {
					return errorf(errDenied)
				}
			}
		}
		return nil
	}
	return errorf(errDenied)
}

// clustersFor returns the clusters a command applies to: those named by
// Cluster= (which must exist), else every cluster, registering the
// configured default cluster when there is none yet.
func clustersFor(st *State, specs []Spec, env ExecEnv) ([]string, error) {
	var named []string
	for _, s := range specs {
		if s.Key == "Cluster" {
			named = append(named, splitList(strings.ToLower(s.Value))...)
		}
	}
	if len(named) > 0 {
		for _, c := range named {
			if st.Clusters[c] == nil {
				return nil, errorf("This cluster %s hasn't been added to accounting yet", c)
			}
		}
		return named, nil
	}
	if len(st.Clusters) == 0 {
		if env.DefaultCluster == "" {
			return nil, errorf("No cluster in the accounting database; add one with 'sacctmgr add cluster NAME'")
		}
		st.AddCluster(strings.ToLower(env.DefaultCluster))
	}
	out := make([]string, 0, len(st.Clusters))
	for c := range st.Clusters {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}

// specValues returns the values of every spec with that key, split on commas.
func specValues(specs []Spec, key string, lower bool) []string {
	var out []string
	for _, s := range specs {
		if s.Key == key {
			v := s.Value
			if lower {
				v = strings.ToLower(v)
			}
			out = append(out, splitList(v)...)
		}
	}
	return out
}

// specValue returns the last value given for key and whether it was given.
func specValue(specs []Spec, key string) (string, bool) {
	v, ok := "", false
	for _, s := range specs {
		if s.Key == key {
			v, ok = s.Value, true
		}
	}
	return v, ok
}

// lowerNames lower-cases names, as slurmdbd stores accounts, clusters and QOS.
func lowerNames(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strings.ToLower(n)
	}
	return out
}

// findAssoc returns the association with that key, or nil.
func findAssoc(st *State, cluster, account, user, partition string) *Association {
	return st.FindAssoc(cluster, account, user, partition)
}

// newAssoc returns an association with nothing set, under parent.
func newAssoc(cluster, account, user, partition string, parent int64) *Association {
	return &Association{Cluster: cluster, Account: account, User: user, Partition: partition,
		ParentID: parent, Shares: DefaultShares, Priority: Unset, AssocLimits: NoAssocLimits()}
}

// isAssocKey reports whether key is an association attribute (limits,
// shares, QOS) rather than an identity or entity field.
func isAssocKey(key string) bool {
	if _, ok := assocCountFields()[key]; ok {
		return true
	}
	if _, ok := assocWallFields()[key]; ok {
		return true
	}
	if _, ok := assocTRESFields()[key]; ok {
		return true
	}
	switch key {
	case "Shares", "QOS", "DefaultQOS", "Priority":
		return true
	}
	return false
}

// checkKeys rejects specs whose key is neither an association attribute
// nor one of allowed.
func checkKeys(specs []Spec, assocOK bool, allowed ...string) error {
	for _, s := range specs {
		if assocOK && isAssocKey(s.Key) {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == s.Key
		}
		if !ok {
			return errorf("Unknown option: %s=%s", s.Key, s.Value)
		}
	}
	return nil
}
