package priority

import (
	"fmt"
	"math"

	"github.com/sluice-hpc/sluice/internal/acct"
)

// FromPolicy builds the fair-share tree of one cluster from an accounting
// snapshot: every association under the cluster's root with its Fairshare
// (or FS=parent), its priority (inherited as slurmdbd does; unset = 0),
// GrpTRESMins and id, plus every QOS with its priority, UsageFactor and
// NoDecay flag. Usage starts at 0: carry it over with CopyUsageFrom or set
// it from the store.
func FromPolicy(p *acct.Policy, cluster string) (*Tree, error) {
	root := p.Root(cluster)
	if root == nil {
		return nil, fmt.Errorf("fair-share tree: cluster %q has no root association", cluster)
	}
	t := NewTree()
	t.Assocs[0].ID = uint32(root.ID)
	t.Assocs[0].Priority = assocPriority(p, root)
	if err := t.addPolicyChildren(p, root); err != nil {
		return nil, err
	}
	for _, name := range p.QOSNames() {
		q := p.QOS(name)
		t.AddQOS(q.Name, clampU32(q.Priority), q.UsageFactor, q.Flags.Has(acct.FlagNoDecay))
	}
	return t, nil
}

func (t *Tree) addPolicyChildren(p *acct.Policy, parent *acct.Association) error {
	for _, a := range p.Children(parent) {
		shares := SharesParent
		if a.Shares != acct.SharesParent {
			shares = clampU32(a.Shares)
		}
		var i int
		var err error
		switch {
		case a.IsUser():
			i, err = t.AddUserPartition(a.User, a.Account, a.Partition, shares)
		default:
			i, err = t.AddAccount(a.Account, parent.Account, shares)
		}
		if err != nil {
			return fmt.Errorf("fair-share tree: %w", err)
		}
		t.Assocs[i].ID = uint32(a.ID)
		t.Assocs[i].Priority = assocPriority(p, a)
		t.Assocs[i].GrpTRESMins = a.GrpTRESMins
		if !a.IsUser() {
			if err := t.addPolicyChildren(p, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// assocPriority is the effective association priority; unset and
// INFINITE count as 0, as in Slurm's _set_assoc_norm_priority.
func assocPriority(p *acct.Policy, a *acct.Association) uint32 {
	pr := p.Effective(a).Priority
	if !pr.IsSet() || int64(pr) >= math.MaxUint32-1 {
		return 0
	}
	return uint32(pr)
}

func clampU32(v int64) uint32 {
	switch {
	case v < 0:
		return 0
	case v > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(v)
}
