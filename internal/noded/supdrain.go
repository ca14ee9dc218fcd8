package noded

// A node whose agent cannot reach its job supervisor fails every launch
// while it looks idle (issue 17, finding 4): the agent says so in its
// heartbeats and the controller drains the node with the reason, as
// slurmd failures drain a node in Slurm.

// supervisorFailed records why the supervisor could not be reached.
func (a *Agent) supervisorFailed(err error) {
	msg := err.Error()
	if old := a.supFailure.Swap(&msg); old == nil {
		a.log.Error("cannot reach the job supervisor; asking the controller to drain the node", "err", err)
	}
}

// drainReason is the reason a heartbeat carries ("" when the supervisor
// works). While one is set each heartbeat tries the supervisor again.
func (a *Agent) drainReason() string {
	if a.supFailure.Load() == nil {
		return ""
	}
	if _, err := a.supervisor(); err == nil {
		return ""
	}
	if p := a.supFailure.Load(); p != nil {
		return "Job supervisor unreachable: " + *p
	}
	return ""
}
