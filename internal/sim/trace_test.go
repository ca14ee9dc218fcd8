package sim_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/cli"
	"github.com/sluice-hpc/sluice/internal/sim"
)

// sbatchParser adapts the sbatch option parser for the UB events reader.
func sbatchParser(args []string) (api.JobSpec, []string, error) {
	r, rest, err := cli.ParseSbatchOptions(args)
	if err != nil {
		return api.JobSpec{}, nil, err
	}
	return r.Spec, rest, nil
}

func read(t *testing.T, format, text string) *sim.Trace {
	t.Helper()
	tr, err := sim.Read(strings.NewReader(text), sim.ReadOptions{Format: format, SbatchParser: sbatchParser})
	if err != nil {
		t.Fatalf("read %s: %v", format, err)
	}
	return tr
}

const swfSample = `; Version: 2.2
; UnixStartTime: 893466664
; MaxNodes: 128
; MaxProcs: 128
; TimeZoneString: US/Pacific
; Queue:  0  interactive
; Queue:  3  normal
   11   566129      5  28826    1  27758    -1    1  28800    -1  5 153  75 18180  3 -1 -1 -1
   19   580157  20861     -1   -1     -1    -1   38   6900    -1  5 189  75 18288  5 -1 -1 -1
   13   567314  15757   8071    8   7334    -1   -1     -1    -1  1 150   6 13592  4 -1 -1 -1
   14   571164  21568  64832   32  44134    -1   32  64800    -1  0   6   6 13602  3 -1
   15   574294   4647  64384   -1  58033    -1   -1  64800    -1  1 151  75 13607  3 -1 -1 -1
`

func TestReadSWF(t *testing.T) {
	tr := read(t, "swf", swfSample)
	if tr.MaxProcs != 128 || tr.MaxNodes != 128 || tr.StartUnix != 893466664 || tr.TimeZone != "US/Pacific" || tr.Queues[3] != "normal" {
		t.Errorf("header: %+v", tr)
	}
	if len(tr.Jobs) != 2 || tr.Records != 5 {
		t.Fatalf("got %d jobs of %d records, want 2 of 5 (bad %v, skipped %v)", len(tr.Jobs), tr.Records, tr.Bad, tr.Skipped)
	}
	j := tr.Jobs[0] // job 11, submitted first
	if j.ID != 11 || j.Submit != 566129 || j.Runtime != 28826 || j.NTasks != 1 || j.TimeLimitSec != 28800 ||
		j.User != "user153" || j.Account != "group75" || j.Status != "CANCELLED" || j.RecordedWait != 5 {
		t.Errorf("job 11 = %+v", j)
	}
	if j := tr.Jobs[1]; j.ID != 13 || j.NTasks != 8 || j.TimeLimitSec != 8071 {
		t.Errorf("job 13 (no request: allocated procs and run time as limit) = %+v", j)
	}
	if len(tr.Bad) != 1 || tr.Bad[0].Line != 11 || !strings.Contains(tr.Bad[0].Err, "want 18 fields") {
		t.Errorf("bad lines = %+v, want line 11 with 16 fields", tr.Bad)
	}
	if tr.Skipped["never ran"] != 1 || tr.Skipped["no processor count"] != 1 {
		t.Errorf("skipped = %v", tr.Skipped)
	}
}

func TestReadSWFUserMap(t *testing.T) {
	m, err := sim.ReadUserMap(strings.NewReader("# uid user account\n153 alice physics\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.ReadSWF(strings.NewReader(swfSample), m)
	if err != nil {
		t.Fatal(err)
	}
	if j := tr.Jobs[0]; j.User != "alice" || j.Account != "physics" {
		t.Errorf("mapped user = %q/%q", j.User, j.Account)
	}
	if _, err := sim.ReadUserMap(strings.NewReader("x y\n")); err == nil {
		t.Error("a malformed user map must be an error")
	}
}

func TestReadSacct(t *testing.T) {
	text := `JobID|JobName|User|Account|QOS|Partition|Submit|Start|End|Timelimit|ReqTRES|State
100|train|alice|ml|normal|gpu|2026-03-01T10:00:00|2026-03-01T10:05:00|2026-03-01T11:05:00|02:00:00|billing=16,cpu=16,gres/gpu=4,mem=64G,node=2|COMPLETED
100.batch||||||2026-03-01T10:05:00|2026-03-01T10:05:00|2026-03-01T11:05:00||cpu=8|COMPLETED
101_3|arr|bob|bio|low|cpu|2026-03-01T09:00:00|2026-03-01T09:00:00|2026-03-01T09:30:00|UNLIMITED|cpu=1,node=1|TIMEOUT
102|never|bob|bio|low|cpu|2026-03-01T09:10:00|Unknown|Unknown|1:00:00|cpu=1|CANCELLED by 1000
103|bad|bob|bio|low|cpu|yesterday|2026-03-01T09:00:00|2026-03-01T09:30:00|1:00:00|cpu=1|COMPLETED
`
	tr := read(t, "sacct", text)
	if len(tr.Jobs) != 2 || tr.Skipped["never ran"] != 1 || len(tr.Bad) != 1 || tr.Bad[0].Line != 6 {
		t.Fatalf("jobs=%d skipped=%v bad=%v", len(tr.Jobs), tr.Skipped, tr.Bad)
	}
	arr, train := tr.Jobs[0], tr.Jobs[1]
	if tr.StartUnix != 1772355600 || arr.Submit != 0 || train.Submit != 3600 {
		t.Errorf("rebase: start %d, submits %d %d", tr.StartUnix, arr.Submit, train.Submit)
	}
	if train.ID != 100 || train.Runtime != 3600 || train.RecordedWait != 300 || train.NTasks != 16 || train.MinNodes != 2 ||
		train.MemPerNodeMB != 32768 || train.GPUs != 4 || train.TimeLimitSec != 7200 || train.Account != "ml" || train.QOS != "normal" {
		t.Errorf("job 100 = %+v", train)
	}
	if arr.TimeLimitSec != api.TimeInfinite || arr.Status != "TIMEOUT" {
		t.Errorf("array task = %+v", arr)
	}
}

func TestReadUBEvents(t *testing.T) {
	text := `-dt          10.50 -e submit_batch_job | -sim-walltime   84805.00 --uid=user001 -J jobid_00001 -N    1 -n     32 -t 3-00:00:00 -q general-compute -p general-compute --mem=500G pseudo.job
-dt          11.00 -e submit_batch_job | -sim-walltime      -1.00 --uid=user002 -J jobid_00002 -N 2 -n 4 -t 01:00:00 -q debug -p debug --gres=gpu:2 --constraint=P100 pseudo.job
-dt 12 -e submit_batch_job | -sim-walltime 5 --bogus pseudo.job
-dt 13 -e cancel_job | -sim-walltime 5 pseudo.job
`
	tr := read(t, "ub", text)
	if len(tr.Jobs) != 2 || len(tr.Bad) != 2 || tr.Bad[0].Line != 3 || tr.Bad[1].Line != 4 {
		t.Fatalf("jobs=%d bad=%+v", len(tr.Jobs), tr.Bad)
	}
	a, b := tr.Jobs[0], tr.Jobs[1]
	if a.Submit != 10 || a.Runtime != 84805 || a.User != "user001" || a.NTasks != 32 || a.TimeLimitSec != 259200 ||
		a.QOS != "general-compute" || a.MemPerNodeMB != 512000 || a.Name != "jobid_00001" {
		t.Errorf("job 1 = %+v", a)
	}
	if b.Runtime != sim.RunToLimit || b.GPUs != 4 || b.Constraint != "P100" || b.Partitions[0] != "debug" {
		t.Errorf("job 2 = %+v", b)
	}
}

func TestReadJSONL(t *testing.T) {
	text := `{"id":1,"submit":0,"runtime":600,"user":"alice","account":"research","qos":"normal","partitions":["gpu"],"ntasks":8,"gres":"gpu:a100:2","min_nodes":1,"time_limit_s":3600}
{"submit":5,"runtime":-1,"user":"bob","ntasks":1,"array":"0-9%2","dependency":"afterok:1"}
{"id":1,"submit":7,"runtime":1}
{"submit":8,"runtime":1,"walltime":5}
not json
`
	tr := read(t, "jsonl", text)
	if len(tr.Jobs) != 2 || len(tr.Bad) != 3 {
		t.Fatalf("jobs=%d bad=%+v", len(tr.Jobs), tr.Bad)
	}
	if j := tr.Jobs[0]; j.GPUs != 2 || j.Account != "research" || j.TimeLimitSec != 3600 {
		t.Errorf("job 1 = %+v", j)
	}
	if j := tr.Jobs[1]; j.ID != 2 || j.Array != "0-9%2" || j.Dependency != "afterok:1" {
		t.Errorf("job on line 2 = %+v", j)
	}
	for i, want := range []string{"already used on line 1", "unknown field", "invalid character"} {
		if !strings.Contains(tr.Bad[i].Err, want) {
			t.Errorf("bad line %d: %q, want %q", tr.Bad[i].Line, tr.Bad[i].Err, want)
		}
	}
}

func TestTraceWithoutJobsIsAnError(t *testing.T) {
	for _, c := range []struct{ format, text string }{
		{"swf", "; MaxProcs: 4\n1 0 0 -1 1 -1 -1 1 10 -1 5 1 1 -1 -1 -1 -1 -1\n"},
		{"jsonl", "garbage\n"},
		{"sacct", ""},
		{"ub", "-dt 1 | nothing\n"},
	} {
		_, err := sim.Read(strings.NewReader(c.text), sim.ReadOptions{Format: c.format, SbatchParser: sbatchParser})
		if !errors.Is(err, sim.ErrNoJobs) {
			t.Errorf("%s: err = %v, want ErrNoJobs", c.format, err)
		}
	}
}

func TestGuessFormat(t *testing.T) {
	for _, c := range []struct{ name, head, want string }{
		{"x.swf", "", "swf"}, {"x.jsonl", "", "jsonl"}, {"w.events", "", "ub"},
		{"x.txt", "JobID|User|Submit\n", "sacct"}, {"x", `{"submit":1}`, "jsonl"}, {"x", "-dt 1 -e", "ub"}, {"x", "; MaxProcs", "swf"},
	} {
		if got := sim.GuessFormat(c.name, []byte(c.head)); got != c.want {
			t.Errorf("GuessFormat(%q, %q) = %q, want %q", c.name, c.head, got, c.want)
		}
	}
}

// TestSharedTraces reads the full traces of ../shared/traces when present
// and checks the counts their README records.
func TestSharedTraces(t *testing.T) {
	dir := sharedTraces(t)
	sdsc, err := sim.ReadFile(dir+"/SDSC-SP2-1998-4.2-cln.swf.gz", sim.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sdsc.Records != 59715 || len(sdsc.Jobs) != 54044 || sdsc.MaxProcs != 128 || len(sdsc.Bad) != 0 {
		t.Errorf("SDSC: %d records, %d jobs, MaxProcs %d, bad %d; want 59715, 54044, 128, 0", sdsc.Records, len(sdsc.Jobs), sdsc.MaxProcs, len(sdsc.Bad))
	}
	ub, err := sim.ReadFile(dir+"/ubccr-medium-cluster/workload_5k.events", sim.ReadOptions{SbatchParser: sbatchParser})
	if err != nil {
		t.Fatal(err)
	}
	gpuJobs := 0
	for _, j := range ub.Jobs {
		if j.GPUs > 0 {
			gpuJobs++
		}
	}
	if len(ub.Jobs) != 5000 || len(ub.Bad) != 0 || gpuJobs != 44 {
		t.Errorf("UB: %d jobs, %d bad (%s), %d GPU jobs; want 5000, 0, 44", len(ub.Jobs), len(ub.Bad), ub.BadSummary(3), gpuJobs)
	}
}

func sharedTraces(t testing.TB) string {
	dir := "../../../shared/traces"
	if d := os.Getenv("SLUICE_TRACES"); d != "" {
		dir = d
	}
	if _, err := os.Stat(dir + "/SDSC-SP2-1998-4.2-cln.swf.gz"); err != nil {
		t.Skipf("shared traces not found in %s (set SLUICE_TRACES)", dir)
	}
	return dir
}

func FuzzReadSWF(f *testing.F) {
	f.Add(swfSample)
	f.Fuzz(func(t *testing.T, s string) { _, _ = sim.ReadSWF(strings.NewReader(s), nil) })
}

func FuzzReadSacct(f *testing.F) {
	f.Add("JobID|Submit|Start|End|ReqTRES\n1|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:09|cpu=2,mem=1G\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = sim.ReadSacct(strings.NewReader(s)) })
}

func FuzzReadUBEvents(f *testing.F) {
	f.Add("-dt 10.50 -e submit_batch_job | -sim-walltime 84805.00 --uid=user001 -N 1 -n 32 -t 3-00:00:00 --gres=gpu:2 pseudo.job\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = sim.ReadUBEvents(strings.NewReader(s), sbatchParser) })
}

func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"id":1,"submit":0,"runtime":600,"ntasks":8,"gres":"gpu:a100:2"}`)
	f.Fuzz(func(t *testing.T, s string) { _, _ = sim.ReadJSONL(strings.NewReader(s)) })
}
