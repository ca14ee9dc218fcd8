package sched

import (
	"math"
	"strings"
	"time"
)

// limitKind names one family of limits for the "first definer wins" rule
// (SEMANTICS §5.2): once a QOS earlier in the precedence order sets a
// limit of a kind (for a TRES), later QOS and the associations do not
// enforce theirs.
type limitKind uint8

const (
	lkGrpJobs limitKind = iota
	lkGrpSubmit
	lkMaxJobsPU
	lkMaxJobsPA
	lkMaxSubmitPU
	lkMaxSubmitPA
	lkMaxWall
	lkGrpTRES
	lkMaxTRESPJ
	lkMaxTRESPN
	lkMaxTRESPU
	lkMaxTRESPA
	lkMinTRESPJ
	lkMaxTRESMinsPJ
	lkGrpTRESRunMins
	lkGrpTRESMins
	lkGrpWall
	lkMaxTRESRunMinsPU
	lkMaxTRESRunMinsPA
	nLimitKinds
)

// claims records which limits an earlier QOS already set: bit t of
// claims[k] is TRES t for kind k (bit 0 for scalar kinds).
type claims [nLimitKinds]uint64

func (c *claims) claim(k limitKind, t int32) bool {
	bit := uint64(1) << uint(t&63)
	if c[k]&bit != 0 {
		return false
	}
	c[k] |= bit
	return true
}

func (c *claims) has(k limitKind, t int32) bool { return c[k]&(uint64(1)<<uint(t&63)) != 0 }

// TRES families of Slurm's per-TRES reason strings.
const (
	famCPU = iota
	famMem
	famNode
	famGRES
	famLicense
	famBB
	famEnergy
	famBilling
	famUnknown
	nFamilies
)

func tresFamily(name string) int {
	switch {
	case name == "cpu":
		return famCPU
	case name == "mem":
		return famMem
	case name == "node":
		return famNode
	case name == "energy":
		return famEnergy
	case name == "billing":
		return famBilling
	case strings.HasPrefix(name, "gres/"):
		return famGRES
	case strings.HasPrefix(name, "license/"):
		return famLicense
	case strings.HasPrefix(name, "bb/"):
		return famBB
	}
	return famUnknown
}

// Reason strings per limit and TRES family, as Slurm spells them
// (job_state_reason.c): irregular on purpose (AssocGrpCpuLimit but
// AssocGrpGRES, QOSMaxMemoryPerJob but AssocMaxMemPerJob).
var (
	reasonsAssocGrpTRES = [nFamilies]Reason{"AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit",
		"AssocGrpGRES", "AssocGrpLicense", "AssocGrpBB", "AssocGrpEnergy", "AssocGrpBilling", "AssocGrpUnknown"}
	reasonsAssocMaxTRESPJ = [nFamilies]Reason{"AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob",
		"AssocMaxNodePerJobLimit", "AssocMaxGRESPerJob", "AssocMaxLicensePerJob", "AssocMaxBBPerJob",
		"AssocMaxEnergyPerJob", "AssocMaxBillingPerJob", "AssocMaxUnknownPerJob"}
	reasonsAssocMaxTRESPN = [nFamilies]Reason{"AssocMaxCpuPerNode", "AssocMaxMemPerNode", "AssocMaxNodePerNode",
		"AssocMaxGRESPerNode", "AssocMaxLicensePerNode", "AssocMaxBBPerNode", "AssocMaxEnergyPerNode",
		"AssocMaxBillingPerNode", "AssocMaxUnknownPerNode"}
	reasonsAssocMaxTRESMinsPJ = [nFamilies]Reason{"AssocMaxCpuMinutesPerJobLimit", "AssocMaxMemMinutesPerJob",
		"AssocMaxNodeMinutesPerJob", "AssocMaxGRESMinutesPerJob", "AssocMaxLicenseMinutesPerJob",
		"AssocMaxBBMinutesPerJob", "AssocMaxEnergyMinutesPerJob", "AssocMaxBillingMinutesPerJob",
		"AssocMaxUnknownMinutesPerJob"}
	reasonsQOSGrpTRES = [nFamilies]Reason{"QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpGRES",
		"QOSGrpLicense", "QOSGrpBB", "QOSGrpEnergy", "QOSGrpBilling", "QOSGrpUnknown"}
	reasonsQOSMaxTRESPJ = [nFamilies]Reason{"QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "QOSMaxNodePerJobLimit",
		"QOSMaxGRESPerJob", "QOSMaxLicensePerJob", "QOSMaxBBPerJob", "QOSMaxEnergyPerJob", "QOSMaxBillingPerJob",
		"QOSMaxUnknownPerJob"}
	reasonsQOSMaxTRESPN = [nFamilies]Reason{"QOSMaxCpuPerNode", "QOSMaxMemoryPerNode", "QOSMaxNodePerNode",
		"QOSMaxGRESPerNode", "QOSMaxLicensePerNode", "QOSMaxBBPerNode", "QOSMaxEnergyPerNode",
		"QOSMaxBillingPerNode", "QOSMaxUnknownPerNode"}
	reasonsQOSMaxTRESPU = [nFamilies]Reason{"QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser",
		"QOSMaxNodePerUserLimit", "QOSMaxGRESPerUser", "QOSMaxLicensePerUser", "QOSMaxBBPerUser",
		"QOSMaxEnergyPerUser", "QOSMaxBillingPerUser", "QOSMaxUnknownPerUser"}
	reasonsQOSMaxTRESPA = [nFamilies]Reason{"MaxCpuPerAccount", "MaxMemoryPerAccount", "MaxNodePerAccount",
		"MaxGRESPerAccount", "MaxLicensePerAccount", "MaxBBPerAccount", "MaxEnergyPerAccount",
		"MaxBillingPerAccount", "MaxUnknownPerAccount"}
	reasonsQOSGrpTRESRunMins = [nFamilies]Reason{"QOSGrpCPURunMinutesLimit", "QOSGrpMemoryRunMinutes",
		"QOSGrpNodeRunMinutes", "QOSGrpGRESRunMinutes", "QOSGrpLicenseRunMinutes", "QOSGrpBBRunMinutes",
		"QOSGrpEnergyRunMinutes", "QOSGrpBillingRunMinutes", "QOSGrpUnknownRunMinutes"}
	reasonsQOSMaxTRESRunMinsPU = [nFamilies]Reason{"MaxCpuRunMinsPerUser", "MaxMemRunMinsPerUser",
		"MaxNodeRunMinsPerUser", "MaxGRESRunMinsPerUser", "MaxLicenseRunMinsPerUser", "MaxBBRunMinsPerUser",
		"MaxEnergyRunMinsPerUser", "MaxBillingRunMinsPerUser", "MaxUnknownRunMinsPerUser"}
	reasonsQOSMaxTRESRunMinsPA = [nFamilies]Reason{"MaxCpuRunMinsPerAccount", "MaxMemRunMinsPerAccount",
		"MaxNodeRunMinsPerAccount", "MaxGRESRunMinsPerAccount", "MaxLicenseRunMinsPerAccount",
		"MaxBBRunMinsPerAccount", "MaxEnergyRunMinsPerAccount", "MaxBillingRunMinsPerAccount",
		"MaxUnknownRunMinsPerAccount"}
	reasonsAssocGrpTRESRunMins = [nFamilies]Reason{"AssocGrpCPURunMinutesLimit", "AssocGrpMemRunMinutes",
		"AssocGrpNodeRunMinutes", "AssocGrpGRESRunMinutes", "AssocGrpLicenseRunMinutes", "AssocGrpBBRunMinutes",
		"AssocGrpEnergyRunMinutes", "AssocGrpBillingRunMinutes", "AssocGrpUnknownRunMinutes"}
	reasonsQOSGrpTRESMins = [nFamilies]Reason{"QOSGrpCPUMinutesLimit", "QOSGrpMemoryMinutes", "QOSGrpNodeMinutes",
		"QOSGrpGRESMinutes", "QOSGrpLicenseMinutes", "QOSGrpBBMinutes", "QOSGrpEnergyMinutes", "QOSGrpBillingMinutes",
		"QOSGrpUnknownMinutes"}
	reasonsAssocGrpTRESMins = [nFamilies]Reason{"AssocGrpCPUMinutesLimit", "AssocGrpMemMinutes", "AssocGrpNodeMinutes",
		"AssocGrpGRESMinutes", "AssocGrpLicenseMinutes", "AssocGrpBBMinutes", "AssocGrpEnergyMinutes",
		"AssocGrpBillingMinutes", "AssocGrpUnknownMinutes"}
	reasonsQOSMinTRES = [nFamilies]Reason{"QOSMinCpuNotSatisfied", "QOSMinMemory", "QOSMinNode", "QOSMinGRES",
		"QOSMinLicense", "QOSMinBB", "QOSMinEnergy", "QOSMinBilling", "QOSMinUnknown"}
	reasonsQOSMaxTRESMinsPJ = [nFamilies]Reason{"QOSMaxCpuMinutesPerJobLimit", "QOSMaxMemoryMinutesPerJob",
		"QOSMaxNodeMinutesPerJob", "QOSMaxGRESMinutesPerJob", "QOSMaxLicenseMinutesPerJob",
		"AssocMaxBBMinutesPerJob", // Slurm's own table has this copy-paste quirk
		"QOSMaxEnergyMinutesPerJob", "QOSMaxBillingMinutesPerJob", "QOSMaxUnknownMinutesPerJob"}
)

// limitCheck is one evaluation of a job against the QOS and association
// limits, in Slurm's precedence order.
type limitCheck struct {
	p       *Policy
	use     *usage // nil: the job alone (submit-time strict checking)
	qos     [2]int32
	assoc   int32
	user    string
	account string
	req     []int64 // the job's TRES (Policy.TRES order)
	perNode []int64 // the most of each TRES on one node
	wall    time.Duration
	tasks   int64 // jobs the check adds (array tasks at submit)
	safe    bool  // AccountingStorageEnforce=safe
}

var zeroCounter = counter{}

func (lc *limitCheck) qosCounter(q int32) *counter {
	if lc.use == nil || int(q) >= len(lc.use.qos) {
		return &zeroCounter
	}
	return lc.use.qosR(q)
}

func (lc *limitCheck) ownerCounter(acct bool, q int32, name string) *counter {
	if lc.use == nil {
		return &zeroCounter
	}
	if ct := lc.use.ownerR(acct, q, name); ct != nil {
		return ct
	}
	return &zeroCounter
}

func (lc *limitCheck) assocCounter(a int32) *counter {
	if lc.use == nil || int(a) >= len(lc.use.assoc) {
		return &zeroCounter
	}
	return lc.use.assocR(a)
}

func runTRES(ct *counter, t int32) int64 {
	if int(t) < len(ct.runTRES) {
		return ct.runTRES[t]
	}
	return 0
}

// runnable checks the limits that keep a pending job from starting, in
// slurmctld's order: the counts checked before node selection
// (acct_policy_job_runnable_pre_select: QOS then association job counts
// and wall time), then the TRES limits checked after it (post_select: a
// QOS's per-job and per-node TRES, its group and per-user TRES, then the
// association's). It returns the first limit's reason, or "". (oracle,
// partition-qos: a -n 6 job over MaxTRESPerJob=cpu=4 shows
// QOSMaxJobsPerUserLimit while the user's one allowed job runs, and
// QOSMaxCpuPerJobLimit once it ended, or when the pass that judged it ran
// before that job started.)
func (lc *limitCheck) runnable() Reason {
	var cl claims
	for _, q := range lc.qos {
		if q >= 0 {
			if r := lc.qosCounts(q, &cl); r != "" {
				return r
			}
		}
	}
	if r := lc.assocCounts(&cl); r != "" {
		return r
	}
	for _, q := range lc.qos {
		if q >= 0 {
			if r := lc.qosPerJobTRES(q, &cl); r != "" {
				return r
			}
			if r := lc.qosTRES(q, &cl); r != "" {
				return r
			}
		}
	}
	return lc.assocTRES(&cl)
}

// qosPerJobTRES checks QOS q's MaxTRESPerJob and MaxTRESPerNode.
func (lc *limitCheck) qosPerJobTRES(q int32, cl *claims) Reason {
	qp := &lc.p.QOS[q]
	for _, l := range qp.MaxTRESPerJob {
		if cl.claim(lkMaxTRESPJ, l.TRES) && lc.req[l.TRES] > l.Value {
			return reasonsQOSMaxTRESPJ[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range qp.MaxTRESPerNode {
		if cl.claim(lkMaxTRESPN, l.TRES) && lc.perNode[l.TRES] > l.Value {
			return reasonsQOSMaxTRESPN[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	return ""
}

func (lc *limitCheck) qosCounts(q int32, cl *claims) Reason {
	qp := &lc.p.QOS[q]
	if qp.GrpJobs >= 0 && cl.claim(lkGrpJobs, 0) && lc.qosCounter(q).runJobs+1 > qp.GrpJobs {
		return ReasonQOSGrpJobsLimit
	}
	if qp.MaxJobsPerUser >= 0 && cl.claim(lkMaxJobsPU, 0) &&
		lc.ownerCounter(false, q, lc.user).runJobs+1 > qp.MaxJobsPerUser {
		return ReasonQOSMaxJobsPerUserLimit
	}
	if qp.MaxJobsPerAccount >= 0 && cl.claim(lkMaxJobsPA, 0) &&
		lc.ownerCounter(true, q, lc.account).runJobs+1 > qp.MaxJobsPerAccount {
		return ReasonMaxJobsPerAccount
	}
	if qp.MaxWall >= 0 && cl.claim(lkMaxWall, 0) && lc.wall > qp.MaxWall {
		return ReasonQOSMaxWallDurationPerJobLimit
	}
	if qp.GrpWall >= 0 && cl.claim(lkGrpWall, 0) && lc.qosCounter(q).usedWall >= int64(qp.GrpWall/time.Minute) {
		return ReasonQOSGrpWallLimit
	}
	return ""
}

func (lc *limitCheck) assocCounts(cl *claims) Reason {
	if lc.assoc < 0 {
		return ""
	}
	ua := &lc.p.Assocs[lc.assoc]
	if ua.MaxJobs >= 0 && !cl.has(lkMaxJobsPU, 0) && lc.assocCounter(lc.assoc).runJobs+1 > ua.MaxJobs {
		return ReasonAssocMaxJobsLimit
	}
	if ua.MaxWall >= 0 && !cl.has(lkMaxWall, 0) && lc.wall > ua.MaxWall {
		return ReasonAssocMaxWallDurationPerJobLimit
	}
	for a := lc.assoc; a >= 0; a = lc.p.Assocs[a].Parent {
		ap := &lc.p.Assocs[a]
		if ap.GrpJobs >= 0 && !cl.has(lkGrpJobs, 0) && lc.assocCounter(a).runJobs+1 > ap.GrpJobs {
			return ReasonAssocGrpJobsLimit
		}
		if ap.GrpWall >= 0 && !cl.has(lkGrpWall, 0) && lc.assocCounter(a).usedWall >= int64(ap.GrpWall/time.Minute) {
			return ReasonAssocGrpWallLimit
		}
	}
	return ""
}

func (lc *limitCheck) qosTRES(q int32, cl *claims) Reason {
	qp := &lc.p.QOS[q]
	qc := lc.qosCounter(q)
	for _, l := range qp.GrpTRESMins {
		if cl.claim(lkGrpTRESMins, l.TRES) && lc.minsOver(qc, l) {
			return reasonsQOSGrpTRESMins[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range qp.GrpTRES {
		if cl.claim(lkGrpTRES, l.TRES) && runTRES(qc, l.TRES)+lc.req[l.TRES] > l.Value {
			return reasonsQOSGrpTRES[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	uc := lc.ownerCounter(false, q, lc.user)
	for _, l := range qp.MaxTRESPerUser {
		if cl.claim(lkMaxTRESPU, l.TRES) && runTRES(uc, l.TRES)+lc.req[l.TRES] > l.Value {
			return reasonsQOSMaxTRESPU[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	ac := lc.ownerCounter(true, q, lc.account)
	for _, l := range qp.MaxTRESPerAccount {
		if cl.claim(lkMaxTRESPA, l.TRES) && runTRES(ac, l.TRES)+lc.req[l.TRES] > l.Value {
			return reasonsQOSMaxTRESPA[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range qp.MinTRESPerJob {
		if cl.claim(lkMinTRESPJ, l.TRES) && lc.req[l.TRES] < l.Value {
			return reasonsQOSMinTRES[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range qp.MaxTRESMinsPerJob {
		if cl.claim(lkMaxTRESMinsPJ, l.TRES) && tresMinutes(lc.req[l.TRES], lc.wall) > l.Value {
			return reasonsQOSMaxTRESMinsPJ[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	return lc.qosRunMins(qp, qc, uc, ac, cl)
}

// qosRunMins checks the QOS TRES-run-minutes limits: what the running jobs
// still hold plus the job's whole request (tres × time limit).
func (lc *limitCheck) qosRunMins(qp *QOSPolicy, qc, uc, ac *counter, cl *claims) Reason {
	for _, l := range qp.GrpTRESRunMins {
		if cl.claim(lkGrpTRESRunMins, l.TRES) && lc.runMinsOver(qc, l) {
			return reasonsQOSGrpTRESRunMins[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range qp.MaxTRESRunMinsPerUser {
		if cl.claim(lkMaxTRESRunMinsPU, l.TRES) && lc.runMinsOver(uc, l) {
			return reasonsQOSMaxTRESRunMinsPU[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range qp.MaxTRESRunMinsPerAccount {
		if cl.claim(lkMaxTRESRunMinsPA, l.TRES) && lc.runMinsOver(ac, l) {
			return reasonsQOSMaxTRESRunMinsPA[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	return ""
}

// minsOver reports whether the historical usage has reached limit l; with
// AccountingStorageEnforce=safe the job's whole request (tres × time
// limit) must also fit, as Slurm's "safe" enforcement does.
func (lc *limitCheck) minsOver(ct *counter, l TRESLimit) bool {
	var used int64
	if int(l.TRES) < len(ct.usedMins) {
		used = ct.usedMins[l.TRES]
	}
	if lc.safe {
		return satAddMins(used, tresMinutes(lc.req[l.TRES], lc.wall)) > l.Value
	}
	return used >= l.Value
}

// runMinsOver reports whether the counter's run minutes plus the job's
// request exceed limit l.
func (lc *limitCheck) runMinsOver(ct *counter, l TRESLimit) bool {
	var used int64
	if int(l.TRES) < len(ct.runMins) {
		used = ct.runMins[l.TRES]
	}
	return satAddMins(used, tresMinutes(lc.req[l.TRES], lc.wall)) > l.Value
}

func (lc *limitCheck) assocTRES(cl *claims) Reason {
	if lc.assoc < 0 {
		return ""
	}
	ua := &lc.p.Assocs[lc.assoc]
	for _, l := range ua.MaxTRESPerJob {
		if !cl.has(lkMaxTRESPJ, l.TRES) && lc.req[l.TRES] > l.Value {
			return reasonsAssocMaxTRESPJ[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range ua.MaxTRESPerNode {
		if !cl.has(lkMaxTRESPN, l.TRES) && lc.perNode[l.TRES] > l.Value {
			return reasonsAssocMaxTRESPN[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for _, l := range ua.MaxTRESMins {
		if !cl.has(lkMaxTRESMinsPJ, l.TRES) && tresMinutes(lc.req[l.TRES], lc.wall) > l.Value {
			return reasonsAssocMaxTRESMinsPJ[tresFamily(lc.p.TRES[l.TRES])]
		}
	}
	for a := lc.assoc; a >= 0; a = lc.p.Assocs[a].Parent {
		ac := lc.assocCounter(a)
		for _, l := range lc.p.Assocs[a].GrpTRES {
			if !cl.has(lkGrpTRES, l.TRES) && runTRES(ac, l.TRES)+lc.req[l.TRES] > l.Value {
				return reasonsAssocGrpTRES[tresFamily(lc.p.TRES[l.TRES])]
			}
		}
		for _, l := range lc.p.Assocs[a].GrpTRESMins {
			if !cl.has(lkGrpTRESMins, l.TRES) && lc.minsOver(ac, l) {
				return reasonsAssocGrpTRESMins[tresFamily(lc.p.TRES[l.TRES])]
			}
		}
		for _, l := range lc.p.Assocs[a].GrpTRESRunMins {
			if !cl.has(lkGrpTRESRunMins, l.TRES) && lc.runMinsOver(ac, l) {
				return reasonsAssocGrpTRESRunMins[tresFamily(lc.p.TRES[l.TRES])]
			}
		}
	}
	return ""
}

// submitCounts checks the limits that always reject at submission
// (SEMANTICS §5.3): the submit-job counts, counting every array task.
func (lc *limitCheck) submitCounts() Reason {
	var cl claims
	for _, q := range lc.qos {
		if q < 0 {
			continue
		}
		qp := &lc.p.QOS[q]
		if qp.GrpSubmitJobs >= 0 && cl.claim(lkGrpSubmit, 0) && lc.qosCounter(q).submitJobs+lc.tasks > qp.GrpSubmitJobs {
			return ReasonQOSGrpSubmitJobsLimit
		}
		if qp.MaxSubmitJobsPerUser >= 0 && cl.claim(lkMaxSubmitPU, 0) &&
			lc.ownerCounter(false, q, lc.user).submitJobs+lc.tasks > qp.MaxSubmitJobsPerUser {
			return ReasonQOSMaxSubmitJobPerUserLimit
		}
		if qp.MaxSubmitJobsPerAccount >= 0 && cl.claim(lkMaxSubmitPA, 0) &&
			lc.ownerCounter(true, q, lc.account).submitJobs+lc.tasks > qp.MaxSubmitJobsPerAccount {
			return ReasonMaxSubmitJobsPerAccount
		}
	}
	if lc.assoc < 0 {
		return ""
	}
	ua := &lc.p.Assocs[lc.assoc]
	if ua.MaxSubmitJobs >= 0 && !cl.has(lkMaxSubmitPU, 0) && lc.assocCounter(lc.assoc).submitJobs+lc.tasks > ua.MaxSubmitJobs {
		return ReasonAssocMaxSubmitJobLimit
	}
	if cl.has(lkGrpSubmit, 0) {
		return ""
	}
	for a := lc.assoc; a >= 0; a = lc.p.Assocs[a].Parent {
		ap := &lc.p.Assocs[a]
		if ap.GrpSubmitJobs >= 0 && lc.assocCounter(a).submitJobs+lc.tasks > ap.GrpSubmitJobs {
			return ReasonAssocGrpSubmitJobsLimit
		}
	}
	return ""
}

// tresMinutes returns count × wall in minutes (saturating for UNLIMITED).
func tresMinutes(count int64, wall time.Duration) int64 {
	if count == 0 {
		return 0
	}
	if wall == Infinite {
		return math.MaxInt64
	}
	m := int64(wall / time.Minute)
	if m != 0 && count > math.MaxInt64/m {
		return math.MaxInt64
	}
	return count * m
}

// orderedQOS returns the job's QOS and the partition's QOS in Slurm's
// precedence: the partition QOS first unless the job QOS has OverPartQOS
// (a QOS appearing twice is checked once).
func orderedQOS(p *Policy, jobQOS, partQOS int32) [2]int32 {
	if partQOS == jobQOS {
		partQOS = -1
	}
	if jobQOS >= 0 && p.QOS[jobQOS].Flags&QOSOverPartQOS != 0 {
		return [2]int32{jobQOS, partQOS}
	}
	return [2]int32{partQOS, jobQOS}
}
