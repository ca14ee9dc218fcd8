package cli

import (
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

func TestSstatArgs(t *testing.T) {
	jobs := []struct {
		arg  string
		id   uint32
		step string
		ok   bool
	}{
		{"12", 12, "", true}, {"12.batch", 12, "batch", true}, {"12.3", 12, "3", true},
		{"abc", 0, "", false}, {"12.x", 0, "", false}, {"0", 0, "", false},
	}
	for _, c := range jobs {
		id, step, ok := sstatJob(c.arg)
		if id != c.id || step != c.step || ok != c.ok {
			t.Errorf("%q: %d %q %v", c.arg, id, step, ok)
		}
	}
	if _, err := sstatColumns("jobid,foo"); err == nil || err.Error() != `Invalid field requested: "foo"` {
		t.Errorf("bad field: %v", err)
	}
	cols, err := sstatColumns("")
	if err != nil || len(cols) != 47 || cols[0].name != "JobID" || cols[46].name != "TRESUsageOutTot" {
		t.Errorf("default columns: %d %v", len(cols), err)
	}
	if h := sstatHelpFormat(); !strings.HasPrefix(h, "AveCPU              AveCPUFreq") || !strings.HasSuffix(h, "TRESUsageOutTot    \n") {
		t.Errorf("helpformat:\n%s", h)
	}
}

func TestSstatValues(t *testing.T) {
	st := &api.StepStat{JobID: 3, Step: "batch", NodeList: "n1", NTasks: 1, Usage: api.Usage{Tasks: []api.TaskUsage{
		{Node: "n1", MaxRSS: 3508 << 10, MaxVMSize: 2920 << 10, DiskRead: 10467, Pids: []int{6239, 6240}, Sampled: true}}}}
	for field, want := range map[string]string{
		"JobID": "3.batch", "Nodelist": "n1", "Pids": "6240,6239", "MaxRSS": "3508K", "MaxRSSNode": "n1",
		"MaxDiskRead": "10467", "ReqCPUFreqMin": "0", "ConsumedEnergy": "0", "NTasks": "1",
		"TRESUsageInMax": "cpu=00:00:00,energy=0,fs/disk=10467,mem=3508K,pages=0,vmem=2920K",
	} {
		if got := sstatValue(field, st); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
}

// TestSacctUsageFields checks which sacct line carries which usage
// figure (oracle: the job line TotalCPU only, the batch line all).
func TestSacctUsageFields(t *testing.T) {
	u := &api.Usage{Tasks: []api.TaskUsage{{Node: "n1", MaxRSS: 426397696, UserUS: 2279000, SystemUS: 602000, Sampled: true}}}
	job := &sacctRow{AcctRecord: api.AcctRecord{JobID: 1, Usage: u}}
	step := &sacctRow{AcctRecord: api.AcctRecord{JobID: 1, Step: "batch", Usage: u}}
	none := &sacctRow{AcctRecord: api.AcctRecord{JobID: 2, Step: "0"}}
	cases := []struct {
		r           *sacctRow
		field, want string
	}{
		{job, "MaxRSS", ""}, {job, "TotalCPU", "00:02.881"}, {job, "AveCPUFreq", ""}, {job, "ConsumedEnergy", "0"},
		{step, "MaxRSS", "416404K"}, {step, "UserCPU", "00:02.279"}, {step, "SystemCPU", "00:00.602"},
		{step, "MaxRSSNode", "n1"}, {step, "MaxRSSTask", "0"}, {step, "AveCPUFreq", "0"},
		{none, "MaxRSS", ""}, {none, "TotalCPU", ""},
	}
	for _, c := range cases {
		if got := usageField(c.field)(c.r); got != c.want {
			t.Errorf("%s of %s: %q, want %q", c.field, c.r.jobID(), got, c.want)
		}
	}
}

// TestTRESUsageFields checks the TRESUsage* family against the oracle's
// forms (sacct-usage golden: 1.batch).
func TestTRESUsageFields(t *testing.T) {
	u := &api.Usage{Tasks: []api.TaskUsage{{Node: "n1", MaxRSS: 11344 << 10, MaxVMSize: 219584 << 10,
		DiskRead: 29331, DiskWrite: 4788, Sampled: true}}}
	for field, want := range map[string]string{
		"tresusageinmax":      "cpu=00:00:00,energy=0,fs/disk=29331,mem=11344K,pages=0,vmem=219584K",
		"tresusageintot":      "cpu=00:00:00,energy=0,fs/disk=29331,mem=11344K,pages=0,vmem=219584K",
		"tresusageoutmax":     "energy=0,fs/disk=4788",
		"tresusageinmaxnode":  "cpu=n1,energy=n1,fs/disk=n1,mem=n1,pages=n1,vmem=n1",
		"tresusageinmintask":  "cpu=0,fs/disk=0,mem=0,pages=0,vmem=0",
		"tresusageoutmaxnode": "energy=n1,fs/disk=n1",
		"tresusageoutmaxtask": "fs/disk=0",
	} {
		if got := tresUsage(u, field, false); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
	if got := tresUsage(u, "tresusageinmaxtask", true); got != "cpu=00:00:00,fs/disk=0,mem=0,pages=0,vmem=0" {
		t.Errorf("sstat's task form: %q", got)
	}
	if got := tresUsage(nil, "tresusageouttot", false); got != "energy=0" {
		t.Errorf("unmeasured step: %q", got)
	}
}

// TestSacctNoconvert checks --noconvert: memory usage in bytes (oracle:
// "1.batch|426397696").
func TestSacctNoconvert(t *testing.T) {
	u := &api.Usage{Tasks: []api.TaskUsage{{Node: "n1", MaxRSS: 426397696, Sampled: true}}}
	r := &sacctRow{AcctRecord: api.AcctRecord{JobID: 1, Step: "batch", Usage: u}, noconvert: true}
	if got := usageField("MaxRSS")(r); got != "426397696" {
		t.Errorf("MaxRSS --noconvert %q", got)
	}
	if got := usageField("TotalCPU")(r); got != "00:00:00" {
		t.Errorf("TotalCPU --noconvert %q", got)
	}
	o, err := parseSacct([]string{"--noconvert"})
	if err != nil || !o.noconvert {
		t.Errorf("--noconvert not parsed: %v", err)
	}
}
