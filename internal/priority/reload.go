package priority

// ContinueFrom makes t, a tree just built from a new accounting snapshot
// (FromPolicy), continue where old left off, as slurmctld does when
// slurmdbd pushes an association change: the usage carries over
// (CopyUsageFrom), the shares take effect at once (NormShares and
// LevelShares are recomputed from t's RawShares, as Slurm renormalises
// shares on every association update), but the fair-share factors
// (NormUsage, EffectvUsage, LevelFS, FairShare) stay those of old's last
// PriorityCalcPeriod pass. An association that old did not have has no
// factors until the next pass: FairShare 0 (sprio FAIRSHARE 0),
// EffectvUsage and LevelFS 0, and AwaitingPass set (sshare prints its
// NormUsage empty). The driver's next Pass computes everything.
func (t *Tree) ContinueFrom(old *Tree, cfg *Config) {
	t.CopyUsageFrom(old)
	t.Recompute(cfg) // the shares; the factors are replaced below
	if old == nil {
		return
	}
	t.TRESNames = old.TRESNames
	old.syncRecords()
	for i := 1; i < len(t.Assocs); i++ {
		a := &t.Assocs[i]
		j, ok := old.byKey[assocKey{a.Account, a.User, a.Partition}]
		if !ok {
			a.NormUsage, a.EffectvUsage, a.FairShare, a.AwaitingPass = 0, 0, 0, true
			if !a.SharesFromParent() {
				a.LevelFS = 0
			}
			continue
		}
		o := &old.Assocs[j]
		a.NormUsage, a.EffectvUsage, a.FairShare = o.NormUsage, o.EffectvUsage, o.FairShare
		a.LevelFS, a.AwaitingPass = o.LevelFS, o.AwaitingPass
	}
	t.refreshHot()
}
