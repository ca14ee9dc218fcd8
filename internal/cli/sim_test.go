package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// examples is the repository's examples/traces folder.
const examples = "../../examples/traces/"

// simRun runs `sluice sim args...` in-process and returns stdout.
func simRun(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: "."}
	if code := runSim(context.Background(), env, args); code != 0 {
		t.Fatalf("sluice sim %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

type jobLine struct {
	Policy string `json:"policy"`
	ID     int64  `json:"id"`
	Submit int64  `json:"submit"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	State  string `json:"state"`
	CPUs   int64  `json:"cpus"`
}

func readJobLines(t *testing.T, path string) []jobLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []jobLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var j jobLine
		if err := json.Unmarshal([]byte(l), &j); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// swfJob is one SWF record as the independent FCFS loop sees it.
type swfJob struct {
	id, submit, run, procs, limit int64
}

// readSWFForTest parses an SWF file with nothing from internal/sim: job
// number, submit, run time, processors (requested, else allocated) and
// requested time (else the run time); jobs that never ran are left out.
func readSWFForTest(t *testing.T, path string) (jobs []swfJob, maxProcs int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(gz)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "; MaxProcs:") {
			maxProcs, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "; MaxProcs:")), 10, 64)
		}
		if line == "" || line[0] == ';' {
			continue
		}
		v := make([]int64, 18)
		for i, x := range strings.Fields(line) {
			v[i], _ = strconv.ParseInt(x, 10, 64)
		}
		procs := v[7]
		if procs <= 0 {
			procs = v[4]
		}
		if v[3] < 0 || procs <= 0 {
			continue
		}
		limit := v[8]
		if limit <= 0 {
			limit = max(v[3], 1)
		}
		jobs = append(jobs, swfJob{id: v[0], submit: v[1], run: v[3], procs: procs, limit: limit})
	}
	sort.SliceStable(jobs, func(i, j int) bool {
		if jobs[i].submit != jobs[j].submit {
			return jobs[i].submit < jobs[j].submit
		}
		return jobs[i].id < jobs[j].id
	})
	return jobs, maxProcs
}

// fcfsStarts is the independent event loop: one pool of processors, jobs
// start strictly in submit order as soon as the oldest waiting one fits;
// at equal times ends are handled before submissions; runs are capped at
// the time limit.
func fcfsStarts(jobs []swfJob, procs int64) map[int64]int64 {
	starts := map[int64]int64{}
	type running struct{ end, procs int64 }
	var run []running
	free, next, t := procs, 0, int64(0)
	var queue []swfJob
	for next < len(jobs) || len(queue) > 0 {
		// next event time: earliest end or submit
		t = int64(1) << 62
		for _, r := range run {
			t = min(t, r.end)
		}
		if next < len(jobs) {
			t = min(t, jobs[next].submit)
		}
		kept := run[:0]
		for _, r := range run {
			if r.end == t {
				free += r.procs
			} else {
				kept = append(kept, r)
			}
		}
		run = kept
		for next < len(jobs) && jobs[next].submit == t {
			if jobs[next].procs <= procs {
				queue = append(queue, jobs[next])
			}
			next++
		}
		for len(queue) > 0 && queue[0].procs <= free {
			j := queue[0]
			queue = queue[1:]
			free -= j.procs
			starts[j.id] = t
			run = append(run, running{end: t + min(j.run, j.limit), procs: j.procs})
		}
	}
	return starts
}

// TestSimFCFSExactOnSDSC checks the exactness criterion: FCFS
// without backfill on one partition through `sluice sim` (the real
// scheduler core) gives every one of the first 5,000 SDSC-SP2 jobs the
// start time an independent event loop computes.
func TestSimFCFSExactOnSDSC(t *testing.T) {
	trace := examples + "sdsc-sp2-5k.swf.gz"
	out := filepath.Join(t.TempDir(), "jobs.jsonl")
	simRun(t, "--trace", trace, "--conf", examples+"sp2-128-fcfs.conf", "--jobs-out", out, "-q")
	got := readJobLines(t, out)
	jobs, procs := readSWFForTest(t, trace)
	want := fcfsStarts(jobs, procs)
	if len(got) != len(jobs) || len(want) != len(jobs) {
		t.Fatalf("simulated %d jobs, trace has %d usable, loop started %d", len(got), len(jobs), len(want))
	}
	diff := 0
	for _, j := range got {
		if w, ok := want[j.ID]; !ok || w != j.Start {
			if diff < 5 {
				t.Errorf("job %d: sluice sim start %d, independent FCFS %d", j.ID, j.Start, w)
			}
			diff++
		}
	}
	if diff > 0 {
		t.Fatalf("%d of %d jobs start at a different time", diff, len(got))
	}
	t.Logf("%d jobs: identical start times", len(got))
}

// TestSimFCFSExactDeepQueue is the exactness criterion on a deep queue
// on a large machine: the first 5,000 SDSC-SP2 jobs, twice, on 8,192
// nodes (--scale-cluster 64: every job 64 times wider), arrivals four
// times denser (--time-scale 4), so that thousands of jobs wait. Every
// start time must equal the independent FCFS loop's on the same
// transformed workload (computed here from the raw SWF records).
func TestSimFCFSExactDeepQueue(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a 10,000-job deep-queue replay (skipped with -short)")
	}
	trace := examples + "sdsc-sp2-5k.swf.gz"
	out := filepath.Join(t.TempDir(), "jobs.jsonl")
	jsonOut := filepath.Join(t.TempDir(), "run.json")
	simRun(t, "--trace", trace, "--conf", examples+"sp2-8192-fcfs.conf", "--scale-cluster", "64", "--time-scale", "4",
		"--repeat", "2", "--jobs-out", out, "--json", jsonOut, "-q")
	got := readJobLines(t, out)
	raw, procs := readSWFForTest(t, trace)
	jobs := deepQueueJobs(raw, 64, 4, 2)
	want := fcfsStarts(jobs, procs*64)
	if len(got) != len(jobs) || len(want) != len(jobs) {
		t.Fatalf("simulated %d jobs, workload has %d, loop started %d", len(got), len(jobs), len(want))
	}
	diff := 0
	for _, j := range got {
		if w, ok := want[j.ID]; !ok || w != j.Start {
			if diff < 5 {
				t.Errorf("job %d: sluice sim start %d, independent FCFS %d", j.ID, j.Start, w)
			}
			diff++
		}
	}
	if diff > 0 {
		t.Fatalf("%d of %d jobs start at a different time", diff, len(got))
	}
	peak := peakPending(t, jsonOut)
	if peak < 2000 {
		t.Errorf("peak queue %v jobs: the workload is not deep", peak)
	}
	t.Logf("%d jobs on %d CPUs, peak queue %.0f: identical start times", len(got), procs*64, peak)
}

// deepQueueJobs is --scale-cluster k, --time-scale f and --repeat n done
// independently of internal/sim: sizes times k, submits divided by f
// (rounded down, from the first submit), copies one span apart with ids
// offset by the largest id rounded up to a power of ten.
func deepQueueJobs(raw []swfJob, k int64, f float64, n int) []swfJob {
	first, last, top := raw[0].submit, raw[len(raw)-1].submit, int64(0)
	for _, j := range raw {
		top = max(top, j.id)
	}
	stride := int64(10)
	for stride <= top {
		stride *= 10
	}
	span := int64(math.Ceil(float64(last-first)/f)) + 1
	var out []swfJob
	for r := range int64(n) {
		for _, j := range raw {
			j.submit = first + int64(math.Floor(float64(j.submit-first)/f)) + r*span
			j.id += r * stride
			j.procs *= k
			out = append(out, j)
		}
	}
	return out
}

// peakPending reads the most jobs waiting at once from the --json output.
func peakPending(t *testing.T, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Policies []struct {
			Metrics struct {
				PeakPending float64 `json:"peak_pending"`
			} `json:"metrics"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Policies[0].Metrics.PeakPending
}

// wallKeys matches the two wall-clock fields of the JSON output.
var wallKeys = regexp.MustCompile(`"(wall_seconds|jobs_per_wall_second)": [0-9.e+-]+`)

func TestSimJSONIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"--trace", examples + "kth-sp2-5k.swf.gz", "--to", "10d", "--json", out, "-q",
			"--compare", examples + "sp2-100-fcfs.conf", examples + "sp2-100-backfill.conf"}
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	simRun(t, args(a)...)
	simRun(t, args(b)...)
	ja, _ := os.ReadFile(a)
	jb, _ := os.ReadFile(b)
	na, nb := wallKeys.ReplaceAll(ja, []byte(`"$1": 0`)), wallKeys.ReplaceAll(jb, []byte(`"$1": 0`))
	if !bytes.Equal(na, nb) {
		t.Error("two runs of the same inputs give different JSON (wall-clock fields aside)")
	}
	var doc map[string]any
	if err := json.Unmarshal(ja, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"jobs", "wall_seconds", "jobs_per_wall_second", "policies"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON output lacks top-level key %q", k)
		}
	}
	if p, _ := doc["policies"].([]any); len(p) != 2 {
		t.Errorf("--compare with two confs gave %d policies", len(p))
	}
}

func TestSimErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.swf")
	os.WriteFile(empty, []byte("; MaxProcs: 4\nnot a job\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--trace is required"},
		{[]string{"--trace", empty}, "no usable job"},
		{[]string{"--trace", examples + "sdsc-sp2-5k.swf.gz", "--conf", "a.conf", "--conf", "b.conf", "--accounts", "1", "--accounts", "2", "--accounts", "3"}, "one --accounts"},
		{[]string{"--trace", examples + "sdsc-sp2-5k.swf.gz", "--from", "yesterday"}, "--from"},
		{[]string{"--trace", examples + "sdsc-sp2-5k.swf.gz", "extra"}, "unexpected argument"},
	} {
		var out, errb bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: "."}
		if code := runSim(context.Background(), env, c.args); code != 1 || !strings.Contains(errb.String(), c.want) || !strings.HasPrefix(errb.String(), "sim: error: ") {
			t.Errorf("sluice sim %q: exit %d, stderr %q; want exit 1 mentioning %q", c.args, code, errb.String(), c.want)
		}
	}
}

func TestParseSimTime(t *testing.T) {
	for _, c := range []struct {
		in    string
		start int64
		want  int64
	}{{"3600", 0, 3600}, {"12h", 0, 43200}, {"30d", 0, 2592000}, {"90m", 0, 5400}, {"1998-04-26", 893466664, 893548800 - 893466664}} {
		if got, err := parseSimTime(c.in, c.start); err != nil || got != c.want {
			t.Errorf("parseSimTime(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if _, err := parseSimTime("2026-01-01", 0); err == nil {
		t.Error("a date on a trace without a start time must be an error")
	}
}

// gpuStreams writes a JSONL trace of two saturating streams of equal jobs
// (2 nodes x 8 A100s, 4 h, limit 5 h) on gpu-cluster's a100-training
// partition: alice (ml-research) every 46 min and bob (ml-platform) every
// 60 min, together about 1.15 times the partition's capacity, each more
// than its fair share, so both always have work waiting and the scheduler
// decides the split.
func gpuStreams(t *testing.T, days int) string {
	t.Helper()
	var b strings.Builder
	id := 0
	for _, s := range []struct {
		user, account string
		every         int
	}{{"alice", "ml-research", 46 * 60}, {"bob", "ml-platform", 60 * 60}} {
		for at := 0; at < days*86400; at += s.every {
			id++
			fmt.Fprintf(&b, `{"id":%d,"submit":%d,"runtime":14400,"user":%q,"account":%q,"qos":"standard","partitions":["a100-training"],"min_nodes":2,"max_nodes":2,"ntasks":2,"gres":"gpu:8","time_limit_s":18000}`+"\n", id, at, s.user, s.account)
		}
	}
	path := filepath.Join(t.TempDir(), "streams.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type simDoc struct {
	Policies []struct {
		Name    string `json:"name"`
		Metrics struct {
			Shares []struct {
				Account    string  `json:"account"`
				NormShares float64 `json:"norm_shares"`
				Delivered  float64 `json:"delivered"`
			} `json:"shares"`
			Started  int `json:"started"`
			Rejected int `json:"rejected"`
		} `json:"metrics"`
	} `json:"policies"`
}

func readSimDoc(t *testing.T, path string) simDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d simDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// delivered returns the account's delivered share and the sum of the
// two streams' shares.
func delivered(d simDoc, policy int, account string) float64 {
	for _, s := range d.Policies[policy].Metrics.Shares {
		if s.Account == account {
			return s.Delivered
		}
	}
	return -1
}

// TestSimS1SharesAreRelativeWeights is SCENARIOS.md S1 through sluice sim:
// ml-research (Share=40) and ml-platform (Share=30) both saturate the
// a100 partition for 70 days (10 x PriorityDecayHalfLife=7-0); ml-research
// must receive 40/70 = 57% of the GPU time, within 3 points.
func TestSimS1SharesAreRelativeWeights(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("70 simulated days (skipped with -short and -race)")
	}
	trace := gpuStreams(t, 70)
	out := filepath.Join(t.TempDir(), "s1.json")
	simRun(t, "--trace", trace, "--conf", "../../examples/gpu-cluster/slurm.conf", "--accounts", "../../examples/gpu-cluster/accounts.sacctmgr", "--json", out, "-q")
	d := readSimDoc(t, out)
	r, p := delivered(d, 0, "ml-research"), delivered(d, 0, "ml-platform")
	share := r / (r + p)
	t.Logf("ml-research %.1f%%, ml-platform %.1f%% of the GPU time: ml-research gets %.1f%% of the two (target 57.1%%); %d jobs started, %d rejected",
		100*r, 100*p, 100*share, d.Policies[0].Metrics.Started, d.Policies[0].Metrics.Rejected)
	if share < 40.0/70-0.03 || share > 40.0/70+0.03 {
		t.Errorf("ml-research received %.1f%% of the two accounts' GPU time, want 57.1%% +- 3", 100*share)
	}
}

// TestSimRaisingAShareRaisesDeliveredShare compares two accounting
// policies on the same trace: raising ml-platform's Share from 30 to 60
// must raise its delivered share.
func TestSimRaisingAShareRaisesDeliveredShare(t *testing.T) {
	trace := gpuStreams(t, 21)
	base, err := os.ReadFile("../../examples/gpu-cluster/accounts.sacctmgr")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	raised := filepath.Join(dir, "raised.sacctmgr")
	text := strings.Replace(string(base), "add account ml-platform Share=30", "add account ml-platform Share=60", 1)
	if text == string(base) {
		t.Fatal("fixture changed: no 'add account ml-platform Share=30' line")
	}
	os.WriteFile(raised, []byte(text), 0o644)
	out, report := filepath.Join(dir, "cmp.json"), filepath.Join(dir, "cmp.html")
	conf := "../../examples/gpu-cluster/slurm.conf"
	simRun(t, "--trace", trace, "--conf", conf, "--conf", conf, "--accounts", "../../examples/gpu-cluster/accounts.sacctmgr", "--accounts", raised,
		"--json", out, "--report", report, "-q")
	d := readSimDoc(t, out)
	before, after := delivered(d, 0, "ml-platform"), delivered(d, 1, "ml-platform")
	t.Logf("ml-platform delivered share: %.1f%% with Share=30, %.1f%% with Share=60", 100*before, 100*after)
	if after <= before+0.02 {
		t.Errorf("raising ml-platform's share from 30 to 60 moved its delivered share from %.3f to %.3f; want a clear rise", before, after)
	}
	html, _ := os.ReadFile(report)
	for _, want := range []string{"Delivered vs target share", "ml-platform", "<svg"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestSimUBMediumCluster replays the UB medium-cluster workload (5,000
// jobs with its slurm.conf, sacctmgr.script and five QOS) end to end and
// checks the report shows waits per QOS and per account. It needs
// ../shared/traces and takes minutes: set SLUICE_LONG=1.
func TestSimUBMediumCluster(t *testing.T) {
	if os.Getenv("SLUICE_LONG") == "" {
		t.Skip("set SLUICE_LONG=1 to replay the UB medium cluster (minutes)")
	}
	dir := "../../../shared/traces/ubccr-medium-cluster/"
	if d := os.Getenv("SLUICE_TRACES"); d != "" {
		dir = d + "/ubccr-medium-cluster/"
	}
	if _, err := os.Stat(dir + "workload_5k.events"); err != nil {
		t.Skip("UB trace not found")
	}
	tmp := t.TempDir()
	out, report := filepath.Join(tmp, "ub.json"), filepath.Join(tmp, "ub.html")
	simRun(t, "--trace", dir+"workload_5k.events", "--conf", dir+"slurm.conf", "--accounts", dir+"sacctmgr.script", "--json", out, "--report", report, "-q")
	b, _ := os.ReadFile(out)
	var doc struct {
		Policies []struct {
			Metrics struct {
				Started   int                           `json:"started"`
				ByQOS     map[string]map[string]float64 `json:"by_qos"`
				ByAccount map[string]map[string]float64 `json:"by_account"`
			} `json:"metrics"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Policies[0].Metrics
	for _, q := range []string{"general-compute", "priority", "supporters", "priority-supporters", "debug"} {
		s, ok := m.ByQOS[q]
		if !ok || s["started"] == 0 {
			t.Errorf("QOS %s: no started jobs in by_qos", q)
			continue
		}
		t.Logf("QOS %-20s %5.0f jobs, mean wait %8.0f s, p95 %8.0f s", q, s["jobs"], s["wait_mean"], s["wait_p95"])
	}
	if m.Started != 5000 || len(m.ByAccount) < 20 {
		t.Errorf("started %d of 5000, %d accounts", m.Started, len(m.ByAccount))
	}
	html, _ := os.ReadFile(report)
	for _, want := range []string{"Wait time per QOS", "Wait time per account", "priority-supporters", "account001"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestSimInspect asks what squeue, sprio -l and sshare -al would have
// printed two days into the SDSC trace under the backfill policy.
func TestSimInspect(t *testing.T) {
	out := simRun(t, "--trace", examples+"sdsc-sp2-5k.swf.gz", "--conf", examples+"sp2-128-backfill.conf", "--to", "10d", "--inspect", "8d")
	for _, want := range []string{
		"== sp2-128-backfill at t=691200 s ==",
		"JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)",
		" R ", "batch",
		"$ sprio -l", "PRIORITY", "FAIRSHARE",
		"$ sshare -al", "RawShares", "LevelFS", "group",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
			break
		}
	}
}

// TestSimPreemptionRequeueRerunsFullRuntime is SCENARIOS.md S3 steps 1-2
// replayed by sluice sim on examples/qos-demo: charlie's batch-lowprio job
// holds both GPU nodes; alice's research job preempts it
// (PreemptMode=REQUEUE); charlie's job runs again later for its full 4 h.
func TestSimPreemptionRequeueRerunsFullRuntime(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "s3.jsonl")
	os.WriteFile(trace, []byte(`{"id":1,"submit":0,"runtime":14400,"user":"charlie","qos":"batch-lowprio","gres":"gpu:8","min_nodes":2,"max_nodes":2,"time_limit_s":14400}
{"id":2,"submit":600,"runtime":3600,"user":"alice","qos":"research","gres":"gpu:8","min_nodes":2,"max_nodes":2,"time_limit_s":7200}
`), 0o644)
	jobs, out := filepath.Join(dir, "jobs.jsonl"), filepath.Join(dir, "s3.json")
	simRun(t, "--trace", trace, "--conf", "../../examples/qos-demo/slurm.conf", "--accounts", "../../examples/qos-demo/accounts.sacctmgr",
		"--jobs-out", jobs, "--json", out, "-q")
	got := map[int64]jobLine{}
	for _, j := range readJobLines(t, jobs) {
		got[j.ID] = j
	}
	charlie, alice := got[1], got[2]
	t.Logf("alice [%d, %d]; charlie requeued, re-ran [%d, %d] %s", alice.Start, alice.End, charlie.Start, charlie.End, charlie.State)
	if alice.Start != 600 || alice.End != 4200 {
		t.Errorf("alice's job ran [%d, %d], want [600, 4200] (starts at once by preemption)", alice.Start, alice.End)
	}
	if charlie.Start < 4200 || charlie.End-charlie.Start != 14400 || charlie.State != "COMPLETED" {
		t.Errorf("charlie's requeued job = %+v, want a second start at or after 4200 and its full 14400 s", charlie)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), `"preemptions": 1`) {
		t.Errorf("JSON does not count the preemption")
	}
}
