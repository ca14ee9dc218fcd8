package ctld

import (
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// SubmitKeyWindow is how long the controller remembers a submission's
// SubmitKey: longer than sbatch's retries after a lost answer take.
const SubmitKeyWindow = 10 * time.Minute

// submitKeys maps the recent submissions' keys to their jobs (issue 17,
// finding 8): a retry of a submission whose answer was lost gets the
// job made the first time. Rebuilt from the stored specs at recovery,
// so a retry to a restarted controller is recognised too.
type submitKeys struct {
	byKey map[string]sched.JobID
	order []keyEntry // oldest first, to forget
}

type keyEntry struct {
	key string
	at  time.Time
}

// keyedJob returns the job an earlier submission with spec's key made,
// when it was w's (root may repeat anyone's) and is still known.
func (ls *loopState) keyedJob(w Who, spec *api.JobSpec) (api.SubmitResponse, bool) {
	if spec.SubmitKey == "" || ls.keys.byKey == nil {
		return api.SubmitResponse{}, false
	}
	id, ok := ls.keys.byKey[spec.SubmitKey]
	if !ok {
		return api.SubmitResponse{}, false
	}
	j := ls.st.Job(id)
	if j == nil || w.UID != 0 && j.UID != w.UID {
		return api.SubmitResponse{}, false
	}
	ls.c.log.Info("submission repeated with the same key; answering the job it made", "job", id, "user", w.User)
	return api.SubmitResponse{JobID: uint32(id), Cluster: ls.st.Cluster.Name}, true
}

// rememberKey records that key made job id at time at, forgetting the
// keys older than SubmitKeyWindow.
func (ls *loopState) rememberKey(key string, id sched.JobID, at time.Time) {
	if key == "" {
		return
	}
	k := &ls.keys
	if k.byKey == nil {
		k.byKey = map[string]sched.JobID{}
	}
	k.byKey[key] = id
	k.order = append(k.order, keyEntry{key, at})
	cut := 0
	for cut < len(k.order) && ls.c.now().Sub(k.order[cut].at) > SubmitKeyWindow {
		if old := k.order[cut].key; old != key {
			delete(k.byKey, old)
		}
		cut++
	}
	if cut > 0 {
		k.order = append(k.order[:0], k.order[cut:]...)
	}
}
