package sched

// counter is what a limit counts for one entity (an association, a QOS, a
// QOS-user or QOS-account pair): running jobs, submitted jobs (pending and
// running, every array task counted) and the TRES held by running jobs.
type counter struct {
	runJobs    int64
	submitJobs int64
	runTRES    []int64
}

type qosOwnerKey struct {
	qos  int32
	name string
}

// usage holds the counters the limits gate compares with the limits. It is
// updated by the lifecycle methods and copied into a cycle's scratch space
// so Schedule can count the jobs it decides to start.
type usage struct {
	assoc   []counter
	qos     []counter
	qosUser map[qosOwnerKey]*counter
	qosAcct map[qosOwnerKey]*counter
}

func (u *usage) init() {
	u.qosUser = map[qosOwnerKey]*counter{}
	u.qosAcct = map[qosOwnerKey]*counter{}
}
