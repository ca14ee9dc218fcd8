package conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFiles adds the shared fixtures and the UB CCR config as fuzz seeds.
func seedFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
}

// FuzzParse: any input gives a config or an error whose every line starts
// with "FILE:LINE:", never a panic or a hang.
func FuzzParse(f *testing.F) {
	seedFiles(f, examples+"*/slurm.conf")
	seedFiles(f, ubccr+"slurm.conf")
	for _, s := range []string{
		"NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n",
		"NodeName=DEFAULT CPUs=2\nNodeName=a Gres=gpu:a100:2(S:0)\nGresTypes=gpu\n",
		"PartitionName=p Nodes=n[1-\\\n3]\n",
		"Include x\nA=\"b\nC D=E\n",
		"SchedulerParameters=bf_window=0,bf_interval=-1,x=\n",
		"PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG,WITHIN\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := ParseOptions("f.conf", data, Options{})
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.conf:") {
					t.Fatalf("error line without position: %q", line)
				}
			}
			return
		}
		_ = c.TotalTRES().String()
		for _, p := range c.Partitions {
			_ = c.PartitionTRES(p)
			for _, n := range p.Nodes {
				if c.Node(n) == nil {
					t.Fatalf("partition %s names unknown node %s", p.Name, n)
				}
			}
		}
	})
}

// FuzzParseGres: gres.conf input never panics; errors carry positions.
func FuzzParseGres(f *testing.F) {
	seedFiles(f, ubccr+"gres.conf")
	for _, s := range []string{
		"AutoDetect=nvml\nName=gpu Type=tesla File=/dev/nvidia[0-1] Cores=0,1\n",
		"NodeName=tux[0-7] Name=bandwidth Type=lustre Count=4G Flags=CountOnly\n",
		"NodeName=x Name=gpu File=/dev/nvidia[0-3\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _, err := ParseGres("g.conf", data)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "g.conf:") {
					t.Fatalf("error line without position: %q", line)
				}
			}
			return
		}
		for _, l := range g.Lines {
			if l.Name == "" || l.Count < 0 {
				t.Fatalf("bad line %+v", l)
			}
		}
	})
}
