package ctld

import "github.com/sluice-hpc/sluice/internal/sched"

// maxAgentReason bounds a drain reason an agent sends.
const maxAgentReason = 256

// agentDrain drains node with the reason its agent's heartbeat gives
// (its job supervisor cannot be reached: every launch there would fail
// while the node looks idle; issue 17, finding 4), as checkResources
// drains a node that registers with less than slurm.conf says. An
// operator resumes it (scontrol update NodeName=... State=RESUME).
func (ls *loopState) agentDrain(node, reason string) {
	if reason == "" {
		return
	}
	i := ls.st.Cluster.NodeIndex(node)
	if i < 0 || !ls.nodes[i].registered {
		return
	}
	n := &ls.st.Cluster.Nodes[i]
	if n.State.Has(sched.NodeFlagDrain) {
		return
	}
	if len(reason) > maxAgentReason {
		reason = reason[:maxAgentReason]
	}
	n.State |= sched.NodeFlagDrain
	n.Reason, n.ReasonTime, n.ReasonUser = reason, ls.c.now(), "slurm"
	ls.nodeDirty[i] = struct{}{}
	ls.c.log.Warn("draining a node at its agent's request", "node", node, "reason", reason)
}
