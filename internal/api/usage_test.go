package api

import "testing"

func TestUsageFormats(t *testing.T) {
	cases := []struct {
		name, got, want string
	}{
		{"MaxRSS in K", FormatMemKB(426397696), "416404K"}, // oracle: 1.batch MaxRSS
		{"MaxRSS reduced when exact", FormatMemKB(1 << 30), "1G"},
		{"MaxRSS zero", FormatMemKB(0), "0"},
		{"sacct disk in M", FormatDiskMB(10467), "0.01M"}, // oracle: MaxDiskRead 0.01M
		{"sstat disk in bytes", formatDiskSstat(10467), "10467"},
		{"TotalCPU under an hour", FormatCPUTime(4833000), "00:04.833"}, // oracle: 1 TotalCPU
		{"TotalCPU over an hour", FormatCPUTime(3723 * 1000000), "01:02:03"},
		{"TotalCPU over a day", FormatCPUTime(90061 * 1000000), "1-01:01:01"},
		{"TotalCPU none", FormatCPUTime(0), "00:00:00"},                 // oracle: 1.0 SystemCPU
		{"AveCPU whole seconds", FormatCPUSeconds(2881000), "00:00:02"}, // oracle: 1.batch AveCPU
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestUsageFields(t *testing.T) {
	two := &Usage{Tasks: []TaskUsage{
		{Task: 0, Node: "n1", MaxRSS: 100 << 20, MaxVMSize: 200 << 20, UserUS: 1000000, SystemUS: 500000, DiskRead: 1 << 20, Sampled: true},
		{Task: 1, Node: "n2", MaxRSS: 300 << 20, MaxVMSize: 100 << 20, UserUS: 250000, SystemUS: 250000, Sampled: true},
	}}
	unsampled := &Usage{Tasks: []TaskUsage{{Node: "n1", UserUS: 1951000}}}
	cases := []struct {
		u           *Usage
		field, want string
	}{
		{two, "MaxRSS", "300M"},
		{two, "maxrssnode", "n2"},
		{two, "MaxRSSTask", "1"},
		{two, "AveRSS", "200M"},
		{two, "MaxVMSizeNode", "n1"},
		{two, "MinCPU", "00:00:00"},
		{two, "MinCPUTask", "1"},
		{two, "AveCPU", "00:00:01"},
		{two, "TotalCPU", "00:02.000"},
		{two, "UserCPU", "00:01.250"},
		{two, "SystemCPU", "00:00.750"},
		{two, "MaxDiskRead", "1.00M"},
		// A step no sample saw: CPU times only (oracle: "1.0" of a 2 s
		// step, TotalCPU 00:01.951 and MaxRSS empty).
		{unsampled, "TotalCPU", "00:01.951"},
		{unsampled, "MaxRSS", ""},
	}
	for _, c := range cases {
		got, ok := c.u.UsageField(c.field, false)
		if !ok || got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.field, got, ok, c.want)
		}
	}
	if _, ok := two.UsageField("JobName", false); ok {
		t.Error("JobName taken for a usage field")
	}
}

func TestRAMLimit(t *testing.T) {
	cases := []struct {
		c    *CgroupConstraints
		node int64
		want int64
	}{
		{nil, 1000, 0},
		{&CgroupConstraints{RAM: false, MemLimitMB: 100}, 1000, 0},
		{&CgroupConstraints{RAM: true, MemLimitMB: 100}, 1000, 100 << 20},
		{&CgroupConstraints{RAM: true, MemLimitMB: 100, AllowedRAMPercent: 150}, 1000, 150 << 20},
		{&CgroupConstraints{RAM: true, MemLimitMB: 800, MaxRAMPercent: 50}, 1000, 500 << 20},
		{&CgroupConstraints{RAM: true, MemLimitMB: 10, MinRAMMB: 30}, 1000, 30 << 20},
	}
	for i, c := range cases {
		if got := c.c.RAMLimitBytes(c.node); got != c.want {
			t.Errorf("case %d: %d, want %d", i, got, c.want)
		}
	}
}
