package ctld

import (
	"net/http"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// listJobs answers a JobQuery: the jobs named by ids (scontrol show job
// N), else those the squeue filter selects, else every job. Like
// slurmctld, which answers squeue's filtered requests with the matching
// jobs only, the controller renders just what the listing will print:
// squeue -j ID at 100,000 jobs renders one job, not 100,000.
func (ls *loopState) listJobs(ids []string, detail bool, f api.ListFilter) (api.JobsResponse, error) {
	if len(ids) > 0 || f.IsZero() {
		return ls.queryJobs(ids, detail)
	}
	if f.SingleJob() {
		// squeue -j ID tells an unknown id (an error) from a job its
		// other filters leave out (an empty listing): the id's records
		// come back whatever their state, and the client filters them.
		f = api.ListFilter{Jobs: f.Jobs, States: "ALL"}
	}
	m, err := f.Matcher()
	if err != nil {
		return api.JobsResponse{}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
	}
	now := ls.c.now()
	out := api.JobsResponse{Now: now, Jobs: []api.JobInfo{}}
	var key api.JobInfo
	for _, j := range ls.st.Jobs() {
		ls.listKey(j, &key, f.Nodes != "")
		if m.Match(&key) {
			out.Jobs = append(out.Jobs, ls.jobInfo(j, now, detail))
		}
	}
	return out, nil
}

// listKey fills what api.JobMatcher looks at, as jobInfo renders it, at
// a fraction of jobInfo's cost (no TRES, paths or priority terms; the
// node list only for -w).
func (ls *loopState) listKey(j *sched.Job, k *api.JobInfo, nodes bool) {
	*k = api.JobInfo{JobID: uint32(j.ID), ArrayTaskID: -1, Name: j.Req.Name, User: j.User, UID: j.UID,
		Account: j.Account, QOS: j.QOS, Partition: ls.partitionName(j), State: j.State.String(),
		Reservation: j.Req.Reservation}
	if j.Array != nil {
		k.ArrayJobID, k.ArrayTaskID = uint32(j.Array.JobID), j.Array.TaskID
		if j.Array.TaskID < 0 {
			k.ArrayTasks = sched.FormatArrayTasks(j.Array.Tasks, j.Array.Throttle)
		}
	}
	if nodes && len(j.Alloc.Nodes) > 0 {
		k.NodeList = compressNodes(ls.st.Cluster, j.Alloc.Nodes)
	}
	ls.resvJobInfo(j, k) // Licenses, Reservation as jobInfo sets them
}
