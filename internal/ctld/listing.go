package ctld

import (
	"bufio"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// listJobs answers a JobQuery: the jobs named by ids (scontrol show job
// N), else those the squeue filter selects, else every job. Like
// slurmctld, which answers squeue's filtered requests with the matching
// jobs only, the controller renders just what the listing will print:
// squeue -j ID at 100,000 jobs renders one job, not 100,000.
func (ls *loopState) listJobs(ids []string, detail, brief bool, f api.ListFilter) (api.JobsResponse, error) {
	var out api.JobsResponse
	err := ls.eachListed(ids, detail, brief, f, func(now time.Time, n int) { out = api.JobsResponse{Now: now, Jobs: make([]api.JobInfo, 0, n)} },
		func(info *api.JobInfo) { out.Jobs = append(out.Jobs, *info) })
	return out, err
}

// rowsListing is a brief listing already encoded (api.RowsContentType).
type rowsListing struct{ body []byte }

// listRows encodes a brief listing while the loop holds the state: the
// rows are the snapshot, and nothing per job outlives the call.
func (ls *loopState) listRows(f api.ListFilter) (rowsListing, error) {
	var rows []byte
	var now time.Time
	count := 0
	err := ls.eachListed(nil, false, true, f, func(t time.Time, n int) { now, rows = t, make([]byte, 0, 160*n) },
		func(info *api.JobInfo) { rows = api.AppendRow(rows, info); count++ })
	if err != nil {
		return rowsListing{}, err
	}
	body := api.AppendRowsHeader(make([]byte, 0, 16+len(rows)), now, count)
	return rowsListing{append(body, rows...)}, nil
}

// eachListed calls start with the clock and the expected size, then add
// with each job listed.
func (ls *loopState) eachListed(ids []string, detail, brief bool, f api.ListFilter, start func(time.Time, int), add func(*api.JobInfo)) error {
	if len(ids) > 0 || f.IsZero() && !brief {
		res, err := ls.queryJobs(ids, detail)
		start(res.Now, len(res.Jobs))
		for i := range res.Jobs {
			add(&res.Jobs[i])
		}
		return err
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
			return &apiErr{status: http.StatusBadRequest, msg: err.Error()}
		}
	}
	now := ls.c.now()
	jobs := ls.candidates(f)
	start(now, listSize(m, len(jobs)))
	// One record reused for every job (add copies or encodes it): a
	// listing of 100,000 jobs leaves no 100,000 records to collect.
	var key, info api.JobInfo
	for _, j := range jobs {
		if m != nil {
			if ls.listKey(j, &key, f.Nodes != ""); !m.Match(&key) {
				continue
			}
		}
		if !brief {
			info = ls.jobInfo(j, now, detail)
			add(&info)
			continue
		}
		// squeue's usual columns only (api.JobQuery.Brief).
		info = ls.briefInfo(j, now)
		ls.resvJobInfo(j, &info)
		add(&info)
	}
	return nil
}

// candidates are the jobs a filter can match: those of the -j ids when
// each names a plain job the controller holds (squeue -j ID at 100,000
// jobs looks at one), else every job.
func (ls *loopState) candidates(f api.ListFilter) []*sched.Job {
	if f.Jobs == "" {
		return ls.st.Jobs()
	}
	var out []*sched.Job
	for _, id := range api.SplitList(f.Jobs) {
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return ls.st.Jobs() // an array task, or left to the matcher
		}
		j := ls.st.Job(sched.JobID(n))
		if j == nil || j.Array != nil {
			return ls.st.Jobs() // an array's tasks, or an id only a scan can rule out
		}
		if !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	return out
}

// listSize is the room to make for a listing: every job when nothing
// filters.
func listSize(m *api.JobMatcher, n int) int {
	if m == nil {
		return n
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
	if rows, ok := res.(rowsListing); ok {
		rw.Header().Set("Content-Type", api.RowsContentType)
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write(rows.body)
		return true
	}
	jobs, ok := res.(api.JobsResponse)
	if !ok || !strings.Contains(r.Header.Get("Accept"), api.ListContentType) {
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
