package cli

import (
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// TestGeneratedConf checks the configuration `sluice up` writes: it
// parses, splits the machine between the nodes (at least one CPU each)
// and has one default partition over every node.
func TestGeneratedConf(t *testing.T) {
	cases := []struct {
		nodes, cpus int
		mem         int64
		wantCPUs    int
	}{{4, 2, 8000, 1}, {4, 16, 64000, 4}, {1, 8, 16000, 8}, {3, 8, 9000, 2}}
	for _, c := range cases {
		text := GenerateConf(GenConf{State: "/tmp/st", Nodes: c.nodes, CPUs: c.cpus, MemoryMB: c.mem, Port: 7000, User: "root"})
		cfg, _, err := conf.Parse("slurm.conf", []byte(text))
		if err != nil {
			t.Fatalf("%+v: %v\n%s", c, err, text)
		}
		cl, err := sched.ClusterFromConf(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(cl.Nodes) != c.nodes || int(cl.Nodes[0].CPUs) != c.wantCPUs || cl.Nodes[0].RealMemory != c.mem/int64(c.nodes)*9/10 {
			t.Errorf("%+v: %d nodes of %d CPUs and %d MB", c, len(cl.Nodes), cl.Nodes[0].CPUs, cl.Nodes[0].RealMemory)
		}
		if cl.DefaultPartition < 0 || len(cl.Partitions[cl.DefaultPartition].NodeList) != c.nodes {
			t.Errorf("%+v: default partition %d", c, cl.DefaultPartition)
		}
		if cfg.SlurmctldPort != 7000 || cfg.StateSaveLocation != "/tmp/st" {
			t.Errorf("port %d state %q", cfg.SlurmctldPort, cfg.StateSaveLocation)
		}
	}
}

func TestUpFlags(t *testing.T) {
	env, _, _ := testEnv()
	env.Getenv = func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	env.UID = 1000
	f, err := parseUpFlags(env, nil)
	if err != nil || f.nodes != 4 || f.state != "/home/u/.sluice" {
		t.Errorf("defaults: %+v %v", f, err)
	}
	env.UID = 0
	if f, _ := parseUpFlags(env, nil); f.state != "/var/lib/sluice" {
		t.Errorf("root state dir %q", f.state)
	}
	for _, bad := range [][]string{{"--nodes", "0"}, {"extra"}, {"--bogus"}} {
		if _, err := parseUpFlags(env, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if f, _ := parseUpFlags(env, []string{"--conf", "x.conf"}); f.state != "" || !strings.HasSuffix(f.conf, "x.conf") {
		t.Errorf("--conf alone: %+v", f)
	}
}
