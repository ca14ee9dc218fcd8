package sched

var jobStateNames = [...]struct{ long, short string }{
	JobPending: {"PENDING", "PD"}, JobRunning: {"RUNNING", "R"}, JobSuspended: {"SUSPENDED", "S"},
	JobCompleted: {"COMPLETED", "CD"}, JobCancelled: {"CANCELLED", "CA"}, JobFailed: {"FAILED", "F"},
	JobTimeout: {"TIMEOUT", "TO"}, JobNodeFail: {"NODE_FAIL", "NF"}, JobPreempted: {"PREEMPTED", "PR"},
	JobBootFail: {"BOOT_FAIL", "BF"}, JobDeadline: {"DEADLINE", "DL"}, JobOutOfMemory: {"OUT_OF_MEMORY", "OOM"},
	JobRequeued: {"REQUEUED", "RQ"},
}

// String returns the state as squeue %T / scontrol print it: COMPLETING
// while the completing flag is set, else the base state's name.
func (s JobState) String() string {
	if s&JobFlagCompleting != 0 {
		return "COMPLETING"
	}
	if b := int(s.Base()); b < len(jobStateNames) {
		return jobStateNames[b].long
	}
	return "UNKNOWN"
}

// Short returns squeue's compact state (%t): PD, R, CG, CD, CA, ...
func (s JobState) Short() string {
	if s&JobFlagCompleting != 0 {
		return "CG"
	}
	if b := int(s.Base()); b < len(jobStateNames) {
		return jobStateNames[b].short
	}
	return "?"
}

var nodeBaseNames = [...]string{NodeUnknown: "UNKNOWN", NodeDown: "DOWN", NodeIdle: "IDLE",
	NodeAllocated: "ALLOCATED", NodeMixed: "MIXED", NodeFuture: "FUTURE"}

// String returns the state as scontrol show node prints it: the base
// state, then +DRAIN, +COMPLETING, +FAIL, +NOT_RESPONDING, +PLANNED flags.
func (s NodeState) String() string {
	out := "UNKNOWN"
	if b := int(s.Base()); b < len(nodeBaseNames) {
		out = nodeBaseNames[b]
	}
	for _, f := range []struct {
		flag NodeState
		name string
	}{{NodeFlagCompleting, "+COMPLETING"}, {NodeFlagDrain, "+DRAIN"}, {NodeFlagFail, "+FAIL"},
		{NodeFlagMaint, "+MAINTENANCE"}, {NodeFlagNoRespond, "+NOT_RESPONDING"}, {NodeFlagPlanned, "+PLANNED"}} {
		if s.Has(f.flag) {
			out += f.name
		}
	}
	return out
}

// Short returns sinfo's compact state (%t): idle, mix, alloc, down, drain
// (drained, no job left), drng (draining), fail, failg, comp, futr, unk,
// with '*' when not responding and '-' when planned by backfill.
func (s NodeState) Short() string {
	busy := s.Base() == NodeAllocated || s.Base() == NodeMixed
	var out string
	switch {
	case s.Base() == NodeDown:
		out = "down"
	case s.Has(NodeFlagFail) && busy:
		out = "failg"
	case s.Has(NodeFlagFail):
		out = "fail"
	case s.Has(NodeFlagDrain) && busy:
		out = "drng"
	case s.Has(NodeFlagDrain):
		out = "drain"
	case s.Has(NodeFlagCompleting):
		out = "comp"
	default:
		out = map[NodeState]string{NodeIdle: "idle", NodeMixed: "mix", NodeAllocated: "alloc",
			NodeFuture: "futr", NodeUnknown: "unk"}[s.Base()]
	}
	if s.Has(NodeFlagNoRespond) {
		out += "*"
	} else if s.Has(NodeFlagPlanned) {
		out += "-"
	}
	return out
}

// DisplayReason is what squeue prints in parentheses for a pending job
// (%R, %r): the state description when one is set (for example
// "ReqNodeNotAvail, UnavailableNodes:node[1-2]"), else the reason.
func (j *Job) DisplayReason() string {
	if j.StateDesc != "" {
		return j.StateDesc
	}
	if j.Reason == "" {
		return string(ReasonNone)
	}
	return string(j.Reason)
}
