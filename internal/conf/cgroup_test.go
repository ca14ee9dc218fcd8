package conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCgroupConf(t *testing.T) {
	c, warns, err := ParseCgroup("cgroup.conf", []byte(
		"CgroupPlugin=cgroup/v1\nConstrainCores=yes\nConstrainRAMSpace=YES\nAllowedRAMSpace=110\nConstrainDevices=no\n"+
			"MinRAMSpace=64\nIgnoreSystemd=yes\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Plugin != "cgroup/v1" || !c.ConstrainCores || !c.ConstrainRAMSpace || c.ConstrainDevices ||
		c.AllowedRAMSpace != 110 || c.MinRAMSpaceMB != 64 || c.MaxRAMPercent != 100 {
		t.Errorf("parsed %+v", c)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), "cgroup.conf:7") {
		t.Errorf("warnings %v, want one for IgnoreSystemd at line 7", warns)
	}
}

// TestCgroupConfErrors checks that cgroup.conf errors name the file and
// line, as slurm.conf's do.
func TestCgroupConfErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"ConstrainCores=maybe\n", "cgroup.conf:1"},
		{"# comment\nCgroupPlugin=cgroup/v3\n", "cgroup.conf:2"},
		{"ConstrainRAMSpace=yes\nAllowedRAMSpace=lots\n", "cgroup.conf:2"},
		{"ConstrainCore=yes\n", "cgroup.conf:1"},
	}
	for _, c := range cases {
		_, _, err := ParseCgroup("cgroup.conf", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %s", c.text, err, c.want)
		}
	}
}

// TestLoadReadsCgroupConf checks that Load reads the cgroup.conf beside
// slurm.conf (defaults without one) and reports its errors.
func TestLoadReadsCgroupConf(t *testing.T) {
	dir := t.TempDir()
	slurm := filepath.Join(dir, "slurm.conf")
	os.WriteFile(slurm, []byte("ClusterName=c\nNodeName=n1 CPUs=2\nPartitionName=p Nodes=n1\n"), 0o644)
	cfg, _, err := Load(slurm)
	if err != nil || cfg.Cgroup == nil || cfg.Cgroup.ConstrainRAMSpace || cfg.Cgroup.Path != "" {
		t.Fatalf("without cgroup.conf: %v %+v", err, cfg.Cgroup)
	}
	os.WriteFile(filepath.Join(dir, "cgroup.conf"), []byte("ConstrainRAMSpace=yes\n"), 0o644)
	if cfg, _, err = Load(slurm); err != nil || !cfg.Cgroup.ConstrainRAMSpace {
		t.Fatalf("with cgroup.conf: %v %+v", err, cfg.Cgroup)
	}
	os.WriteFile(filepath.Join(dir, "cgroup.conf"), []byte("\nConstrainRAMSpace=perhaps\n"), 0o644)
	if _, _, err = Load(slurm); err == nil || !strings.Contains(err.Error(), "cgroup.conf:2") {
		t.Fatalf("bad cgroup.conf: %v", err)
	}
}

func TestJobAcctGatherFrequency(t *testing.T) {
	cases := []struct {
		v    string
		want string
		bad  bool
	}{
		{"30", "30s", false}, {"task=5,energy=0", "5s", false}, {"0", "0s", false},
		{"task=abc", "", true}, {"disk=3", "", true},
	}
	for _, c := range cases {
		d, err := parseGatherFrequency(c.v)
		if (err != nil) != c.bad || !c.bad && d.String() != c.want {
			t.Errorf("%q: %v %v", c.v, d, err)
		}
	}
}
