package ctld

import (
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// interner shares equal strings and environments among the jobs the
// controller holds. Every pending job keeps its submission in memory
// (the store rewrites a job's whole record, submission included, each
// time the job changes), and most of a submission repeats from job to
// job: the user, account, partition, QOS, working directory, output
// pattern, the script of a submission loop and, above all, the
// submitting shell's environment (one to several kilobytes). Sharing
// them is what keeps a pending job near 2 KB of controller memory, where
// slurmctld needs about 5.7 KB (it keeps the environment and script in
// files). Shared values are never changed in place: a job that changes
// one gets a value of its own.
type interner struct {
	strs map[string]string
	envs map[string][]string
}

// internLimit is the least number of distinct values the tables hold
// before they may start over.
const internLimit = 4096

func (in *interner) str(s string) string {
	if s == "" {
		return s
	}
	if v, ok := in.strs[s]; ok {
		return v
	}
	if in.strs == nil {
		in.strs = map[string]string{}
	}
	in.strs[s] = s
	return s
}

// env returns the shared copy of an environment equal to e (each
// variable shared too, so that environments that differ in PWD share
// the rest).
func (in *interner) env(e []string) []string {
	if len(e) == 0 {
		return e
	}
	key := strings.Join(e, "\x00") // a variable cannot contain NUL
	if v, ok := in.envs[key]; ok {
		return v
	}
	v := make([]string, len(e)) // no spare capacity from decoding
	for i, s := range e {
		v[i] = in.str(s)
	}
	if in.envs == nil {
		in.envs = map[string][]string{}
	}
	in.envs[key] = v
	return v
}

// trim starts the tables over once they hold far more values than there
// are live jobs: values already shared stay shared, and values no job
// uses any more are freed with the old tables.
func (in *interner) trim(live int) {
	limit := max(internLimit, 2*live)
	if len(in.strs) > 8*limit {
		in.strs = nil
	}
	if len(in.envs) > limit {
		in.envs = nil
	}
}

// spec shares s's repeated values.
func (in *interner) spec(s *api.JobSpec) {
	for _, p := range []*string{&s.Name, &s.Account, &s.QOS, &s.User, &s.Group, &s.Gres, &s.GPUs,
		&s.GPUsPerNode, &s.GPUsPerTask, &s.Licenses, &s.Begin, &s.Dependency, &s.Exclusive, &s.Constraint,
		&s.NodeList, &s.Exclude, &s.Array, &s.Reservation, &s.WCKey, &s.Comment, &s.AllocNode, &s.Output,
		&s.Error, &s.Input, &s.OpenMode, &s.WorkDir, &s.Export, &s.MailType, &s.MailUser, &s.Wrap,
		&s.Script, &s.ScriptName} {
		*p = in.str(*p)
	}
	for i := range s.Partitions {
		s.Partitions[i] = in.str(s.Partitions[i])
	}
	s.Environment = in.env(s.Environment)
}

// internSpec shares what a submission (new or recovered) repeats.
func (ls *loopState) internSpec(s *api.JobSpec) {
	ls.intern.trim(len(ls.specs))
	ls.intern.spec(s)
}
