package sched

import (
	"testing"
	"time"
)

// TestLimitReasons checks every limit family against Slurm's exact reason
// strings, with the job's TRES request and the usage already counted.
func TestLimitReasons(t *testing.T) {
	// TRES indices: 0 cpu, 1 mem, 2 node, 3 billing, 4 gres/gpu.
	const cpu, mem, node, gpu = 0, 1, 2, 4
	lim := func(t int32, v int64) []TRESLimit { return []TRESLimit{{TRES: t, Value: v}} }
	newPolicy := func() *Policy {
		p := &Policy{TRES: []string{"cpu", "mem", "node", "billing", "gres/gpu"},
			QOS: []QOSPolicy{noLimitsQOS("q")}, Assocs: []AssocPolicy{noLimitsAssoc("root", "", -1), noLimitsAssoc("acme", "", 0), noLimitsAssoc("acme", "u", 1)}}
		return p
	}
	// The job asks for 4 CPUs, 4000 MB, 1 node, 2 GPUs, 2 hours.
	req := []int64{4, 4000, 1, 4, 2}
	cases := []struct {
		name  string
		setup func(p *Policy, u *usage)
		want  Reason
	}{
		{"nothing", func(p *Policy, u *usage) {}, ""},
		{"QOS GrpJobs", func(p *Policy, u *usage) { p.QOS[0].GrpJobs = 1; u.qos[0].runJobs = 1 }, "QOSGrpJobsLimit"},
		{"QOS MaxJobsPerUser", func(p *Policy, u *usage) { p.QOS[0].MaxJobsPerUser = 0 }, "QOSMaxJobsPerUserLimit"},
		{"QOS MaxJobsPerAccount", func(p *Policy, u *usage) { p.QOS[0].MaxJobsPerAccount = 0 }, "MaxJobsPerAccount"},
		{"QOS MaxWall", func(p *Policy, u *usage) { p.QOS[0].MaxWall = time.Hour }, "QOSMaxWallDurationPerJobLimit"},
		{"QOS GrpTRES cpu", func(p *Policy, u *usage) { p.QOS[0].GrpTRES = lim(cpu, 10); u.qos[0].runTRES[cpu] = 7 }, "QOSGrpCpuLimit"},
		{"QOS GrpTRES mem", func(p *Policy, u *usage) { p.QOS[0].GrpTRES = lim(mem, 1000) }, "QOSGrpMemLimit"},
		{"QOS GrpTRES node", func(p *Policy, u *usage) { p.QOS[0].GrpTRES = lim(node, 0) }, "QOSGrpNodeLimit"},
		{"QOS GrpTRES gpu", func(p *Policy, u *usage) { p.QOS[0].GrpTRES = lim(gpu, 1) }, "QOSGrpGRES"},
		{"QOS MaxTRESPerJob cpu", func(p *Policy, u *usage) { p.QOS[0].MaxTRESPerJob = lim(cpu, 2) }, "QOSMaxCpuPerJobLimit"},
		{"QOS MaxTRESPerJob mem", func(p *Policy, u *usage) { p.QOS[0].MaxTRESPerJob = lim(mem, 2) }, "QOSMaxMemoryPerJob"},
		{"QOS MaxTRESPerNode gpu", func(p *Policy, u *usage) { p.QOS[0].MaxTRESPerNode = lim(gpu, 1) }, "QOSMaxGRESPerNode"},
		{"QOS MaxTRESPerUser gpu", func(p *Policy, u *usage) {
			p.QOS[0].MaxTRESPerUser = lim(gpu, 3)
			u.owner(false, 0, "u").runTRES[gpu] = 2
		}, "QOSMaxGRESPerUser"},
		{"QOS MaxTRESPerAccount cpu", func(p *Policy, u *usage) { p.QOS[0].MaxTRESPerAccount = lim(cpu, 3) }, "MaxCpuPerAccount"},
		{"QOS MinTRESPerJob cpu", func(p *Policy, u *usage) { p.QOS[0].MinTRESPerJob = lim(cpu, 8) }, "QOSMinCpuNotSatisfied"},
		{"QOS MaxTRESMinsPerJob cpu", func(p *Policy, u *usage) { p.QOS[0].MaxTRESMinsPerJob = lim(cpu, 479) }, "QOSMaxCpuMinutesPerJobLimit"},
		{"assoc MaxJobs", func(p *Policy, u *usage) { p.Assocs[2].MaxJobs = 2; u.assoc[2].runJobs = 2 }, "AssocMaxJobsLimit"},
		{"assoc MaxWall", func(p *Policy, u *usage) { p.Assocs[2].MaxWall = time.Hour }, "AssocMaxWallDurationPerJobLimit"},
		{"parent account GrpJobs", func(p *Policy, u *usage) { p.Assocs[1].GrpJobs = 3; u.assoc[1].runJobs = 3 }, "AssocGrpJobsLimit"},
		{"root GrpTRES cpu", func(p *Policy, u *usage) { p.Assocs[0].GrpTRES = lim(cpu, 3) }, "AssocGrpCpuLimit"},
		{"assoc GrpTRES gpu", func(p *Policy, u *usage) { p.Assocs[2].GrpTRES = lim(gpu, 1) }, "AssocGrpGRES"},
		{"assoc MaxTRESPerJob node", func(p *Policy, u *usage) { p.Assocs[2].MaxTRESPerJob = lim(node, 0) }, "AssocMaxNodePerJobLimit"},
		{"assoc MaxTRESPerNode mem", func(p *Policy, u *usage) { p.Assocs[2].MaxTRESPerNode = lim(mem, 100) }, "AssocMaxMemPerNode"},
		{"assoc MaxTRESMins gpu", func(p *Policy, u *usage) { p.Assocs[2].MaxTRESMins = lim(gpu, 60) }, "AssocMaxGRESMinutesPerJob"},
		{"QOS GrpTRESRunMins cpu", func(p *Policy, u *usage) {
			p.QOS[0].GrpTRESRunMins = lim(cpu, 1000)
			u.qos[0].addMins([]int64{4, 0, 0, 0, 0}, 130) // 520 cpu-minutes left + 480 asked = 1000
		}, ""},
		{"QOS GrpTRESRunMins cpu over", func(p *Policy, u *usage) {
			p.QOS[0].GrpTRESRunMins = lim(cpu, 999)
			u.qos[0].addMins([]int64{4, 0, 0, 0, 0}, 130)
		}, "QOSGrpCPURunMinutesLimit"},
		{"QOS MaxTRESRunMinsPerUser gpu", func(p *Policy, u *usage) { p.QOS[0].MaxTRESRunMinsPerUser = lim(gpu, 100) }, "MaxGRESRunMinsPerUser"},
		{"QOS MaxTRESRunMinsPerAccount node", func(p *Policy, u *usage) { p.QOS[0].MaxTRESRunMinsPerAccount = lim(node, 60) }, "MaxNodeRunMinsPerAccount"},
		{"account GrpTRESRunMins mem", func(p *Policy, u *usage) { p.Assocs[1].GrpTRESRunMins = lim(mem, 1000) }, "AssocGrpMemRunMinutes"},
		{"QOS limit hides the assoc one (first definer wins)", func(p *Policy, u *usage) {
			p.QOS[0].GrpTRES = lim(cpu, 100)
			p.Assocs[0].GrpTRES = lim(cpu, 1)
		}, ""},
		{"QOS MaxJobsPerUser hides assoc MaxJobs", func(p *Policy, u *usage) {
			p.QOS[0].MaxJobsPerUser = 10
			p.Assocs[2].MaxJobs = 0
		}, ""},
		{"job counts before TRES", func(p *Policy, u *usage) {
			p.QOS[0].GrpTRES = lim(cpu, 1)
			p.Assocs[2].MaxJobs = 0
		}, "AssocMaxJobsLimit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPolicy()
			var u usage
			u.reset(p)
			c.setup(p, &u)
			lc := limitCheck{p: p, use: &u, qos: [2]int32{-1, 0}, assoc: 2, user: "u", account: "acme",
				req: req, perNode: req, wall: 2 * time.Hour, tasks: 1}
			if got := lc.runnable(); got != c.want {
				t.Fatalf("reason %q, want %q", got, c.want)
			}
		})
	}
}

func TestSubmitCountReasons(t *testing.T) {
	cases := []struct {
		name  string
		setup func(p *Policy, u *usage)
		tasks int64
		want  Reason
	}{
		{"QOS GrpSubmitJobs counts array tasks", func(p *Policy, u *usage) { p.QOS[0].GrpSubmitJobs = 10; u.qos[0].submitJobs = 5 }, 6, "QOSGrpSubmitJobsLimit"},
		{"QOS MaxSubmitJobsPerUser", func(p *Policy, u *usage) {
			p.QOS[0].MaxSubmitJobsPerUser = 1
			u.owner(false, 0, "u").submitJobs = 1
		}, 1, "QOSMaxSubmitJobPerUserLimit"},
		{"QOS MaxSubmitJobsPerAccount", func(p *Policy, u *usage) { p.QOS[0].MaxSubmitJobsPerAccount = 3 }, 4, "MaxSubmitJobsPerAccount"},
		{"assoc MaxSubmitJobs", func(p *Policy, u *usage) { p.Assocs[2].MaxSubmitJobs = 2 }, 3, "AssocMaxSubmitJobLimit"},
		{"account GrpSubmitJobs", func(p *Policy, u *usage) { p.Assocs[1].GrpSubmitJobs = 2; u.assoc[1].submitJobs = 2 }, 1, "AssocGrpSubmitJobsLimit"},
		{"within limits", func(p *Policy, u *usage) { p.QOS[0].MaxSubmitJobsPerUser = 10 }, 10, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Policy{TRES: []string{"cpu", "mem", "node", "billing"}, QOS: []QOSPolicy{noLimitsQOS("q")},
				Assocs: []AssocPolicy{noLimitsAssoc("root", "", -1), noLimitsAssoc("acme", "", 0), noLimitsAssoc("acme", "u", 1)}}
			var u usage
			u.reset(p)
			c.setup(p, &u)
			lc := limitCheck{p: p, use: &u, qos: [2]int32{0, -1}, assoc: 2, user: "u", account: "acme", tasks: c.tasks}
			if got := lc.submitCounts(); got != c.want {
				t.Fatalf("reason %q, want %q", got, c.want)
			}
		})
	}
}

func noLimitsQOS(name string) QOSPolicy {
	return QOSPolicy{Name: name, GrpJobs: -1, GrpSubmitJobs: -1, GrpWall: -1, MaxJobsPerUser: -1, MaxJobsPerAccount: -1,
		MaxSubmitJobsPerUser: -1, MaxSubmitJobsPerAccount: -1, MaxWall: -1, MinPrioThreshold: -1, PreemptExemptTime: -1}
}

func noLimitsAssoc(account, user string, parent int32) AssocPolicy {
	return AssocPolicy{Account: account, User: user, Parent: parent, DefaultQOS: -1, GrpJobs: -1, GrpSubmitJobs: -1,
		GrpWall: -1, MaxJobs: -1, MaxSubmitJobs: -1, MaxWall: -1}
}

// TestGrpTRESRunMinsInScheduling: running jobs' remaining CPU-minutes
// count against GrpTRESRunMins, so a new job waits until enough has run
// down.
func TestGrpTRESRunMinsInScheduling(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(2, 4, "AccountingStorageEnforce=limits")))
	h.sacctmgr(`sacctmgr -i add account acme GrpTRESRunMins=cpu=600
sacctmgr -i add user u DefaultAccount=acme`)
	first := h.mustSubmit("u", "-n 4 --time=100") // 400 cpu-minutes
	second := h.mustSubmit("u", "-n 4 --time=100")
	h.expectState(first.ID, JobRunning, "")
	h.expectState(second.ID, JobPending, "AssocGrpCPURunMinutesLimit")
	h.advance(50 * time.Minute) // first has 200 cpu-minutes left: 200 + 400 <= 600
	h.expectState(second.ID, JobRunning, "")
}

// fakeUsage is a UsageSource with fixed numbers.
type fakeUsage struct {
	assoc map[string]map[string]float64 // by account
	wall  map[string]float64            // by account
}

func (f fakeUsage) AssocUsage(account, user, _ string) (map[string]float64, float64, bool) {
	if user != "" {
		return nil, 0, false
	}
	return f.assoc[account], f.wall[account], true
}

func (f fakeUsage) QOSUsage(string) (map[string]float64, float64, bool) { return nil, 0, false }

// TestGrpTRESMinsAndGrpWall: an account whose decayed usage reached its
// GrpTRESMins or GrpWall runs nothing more; with safe enforcement a job
// also waits when its whole request would cross the limit.
func TestGrpTRESMinsAndGrpWall(t *testing.T) {
	for _, c := range []struct {
		enforce, acct string
		used          float64
		wall          float64
		want          Reason
	}{
		{"limits", "GrpTRESMins=cpu=1000", 999, 0, ""},
		{"limits", "GrpTRESMins=cpu=1000", 1000, 0, "AssocGrpCPUMinutesLimit"},
		{"safe", "GrpTRESMins=cpu=1000", 700, 0, "AssocGrpCPUMinutesLimit"}, // 700 + 4 cpu x 100 min > 1000
		{"safe", "GrpTRESMins=cpu=1100", 700, 0, ""},
		{"limits", "GrpWall=60", 0, 60, "AssocGrpWallLimit"},
		{"limits", "GrpWall=60", 0, 59, ""},
	} {
		h := noBackfill(newHarness(t, cpuConf(1, 4, "AccountingStorageEnforce="+c.enforce)))
		h.sacctmgr("sacctmgr -i add account acme " + c.acct + "\nsacctmgr -i add user u DefaultAccount=acme")
		h.st.Usage = fakeUsage{assoc: map[string]map[string]float64{"acme": {"cpu": c.used}}, wall: map[string]float64{"acme": c.wall}}
		j := h.mustSubmit("u", "-n 4 --time=100")
		if c.want == "" {
			h.expectState(j.ID, JobRunning, "")
		} else {
			h.expectState(j.ID, JobPending, c.want)
		}
	}
}

// TestPartitionAssociationLimits: a job that may run in two partitions is
// held, in each, by its user's association for that partition, or by the
// one without a partition. Here u's association for partition small has
// MaxJobs=1 and runs one job; batch is full, so u's job for batch or
// small waits although small has room. Without an
// association naming a partition (assocFor then skips the lookup:
// Policy.partAssocs) the job runs in small.
func TestPartitionAssociationLimits(t *testing.T) {
	conf := `ClusterName=test
SlurmctldHost=head
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=limits
NodeName=node[1-2] CPUs=4 RealMemory=16000
PartitionName=batch Nodes=node1 Default=YES MaxTime=INFINITE State=UP
PartitionName=small Nodes=node2 MaxTime=INFINITE State=UP
`
	for _, c := range []struct {
		name, script string
		state        JobState // of u's job for batch or small
	}{
		{"association of the partition", `sacctmgr -i add account acme
sacctmgr -i add user u,v Account=acme
sacctmgr -i add user u Account=acme Partition=small MaxJobs=1`, JobPending},
		{"no association names a partition", `sacctmgr -i add account acme
sacctmgr -i add user u,v Account=acme`, JobRunning},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := noBackfill(newHarness(t, conf))
			h.sacctmgr(c.script)
			full := h.mustSubmit("v", "-p batch -n 4")
			inSmall := h.mustSubmit("u", "-p small -n 1")
			either := h.mustSubmit("u", "-p batch,small -n 1")
			h.expectState(full.ID, JobRunning, "")
			h.expectState(inSmall.ID, JobRunning, "")
			// (which reason a job pending in two partitions shows is not
			// this test's matter)
			if got := h.st.Job(either.ID).State; got != c.state {
				t.Errorf("u's job for batch or small: %v, want %v", got, c.state)
			}
		})
	}
}
