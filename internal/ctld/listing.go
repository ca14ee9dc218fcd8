package ctld

import (
	"bufio"
	"net/http"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// listJobs answers a JobQuery: the jobs named by ids (scontrol show job
// N), else those the squeue filter selects, else every job. Like
// slurmctld, which answers squeue's filtered requests with the matching
// jobs only, the controller renders just what the listing will print:
// squeue -j ID at 100,000 jobs renders one job, not 100,000.
func (ls *loopState) listJobs(ids []string, detail, brief bool, f api.ListFilter) (api.JobsResponse, error) {
	if len(ids) > 0 || f.IsZero() && !brief {
		return ls.queryJobs(ids, detail)
	}
	if f.SingleJob() {
		// squeue -j ID tells an unknown id (an error) from a job its
		// other filters leave out (an empty listing): the id's records
		// come back whatever their state, and the client filters them.
		f = api.ListFilter{Jobs: f.Jobs, States: "ALL"}
	}
	var m *api.JobMatcher
	if !f.IsZero() {
		var err error
		if m, err = f.Matcher(); err != nil {
			return api.JobsResponse{}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
		}
	}
	now := ls.c.now()
	out := api.JobsResponse{Now: now, Jobs: make([]api.JobInfo, 0, ls.listSize(m))}
	var key api.JobInfo
	for _, j := range ls.st.Jobs() {
		if m != nil {
			if ls.listKey(j, &key, f.Nodes != ""); !m.Match(&key) {
				continue
			}
		}
		if !brief {
			out.Jobs = append(out.Jobs, ls.jobInfo(j, now, detail))
			continue
		}
		// squeue's usual columns only (api.JobQuery.Brief).
		info := ls.briefInfo(j, now)
		ls.resvJobInfo(j, &info)
		out.Jobs = append(out.Jobs, info)
	}
	return out, nil
}

// listSize is the room to make for a listing: every job when nothing
// filters.
func (ls *loopState) listSize(m *api.JobMatcher) int {
	if m == nil {
		return len(ls.st.Jobs())
	}
	return 0
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

// writeListing answers a job listing in the compact encoding when the
// client asks for it (api.ListContentType: Sluice's own commands), off
// the event loop like every answer.
func writeListing(rw http.ResponseWriter, r *http.Request, res any) bool {
	jobs, ok := res.(api.JobsResponse)
	if !ok || r.Header.Get("Accept") != api.ListContentType {
		return false
	}
	rw.Header().Set("Content-Type", api.ListContentType)
	rw.WriteHeader(http.StatusOK)
	w := bufio.NewWriterSize(rw, 64<<10)
	if api.EncodeJobs(w, &jobs) == nil {
		w.Flush()
	}
	return true
}
