package conf

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// group is one generated NodeName line.
type group struct {
	prefix    string
	count     int
	sockets   int
	cores     int
	threads   int
	mem       int64
	gpus      int
	gpuType   string
	withCPUs  bool
	cpusGiven int
}

// TestPropertyRenderedClusterParses: a randomly generated cluster, written
// as slurm.conf text (with DEFAULT lines, continuations and comments),
// parses back to exactly the nodes, CPUs, memory and GPUs it was made of.
func TestPropertyRenderedClusterParses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "groups")
		var b strings.Builder
		b.WriteString("ClusterName=prop\nSlurmctldHost=ctl # controller\nGresTypes=gpu\n")
		var wantNodes, wantCPUs, wantGPUs int64
		var wantMem int64
		wantTyped := map[string]int64{}
		var groups []group
		for i := 0; i < n; i++ {
			g := group{
				prefix:  fmt.Sprintf("g%dn", i),
				count:   rapid.IntRange(1, 40).Draw(t, "count"),
				sockets: rapid.IntRange(1, 4).Draw(t, "sockets"),
				cores:   rapid.IntRange(1, 32).Draw(t, "cores"),
				threads: rapid.IntRange(1, 2).Draw(t, "threads"),
				mem:     int64(rapid.IntRange(1, 2_000_000).Draw(t, "mem")),
				gpus:    rapid.IntRange(0, 8).Draw(t, "gpus"),
				gpuType: rapid.SampledFrom([]string{"", "a100", "h100"}).Draw(t, "type"),
			}
			g.withCPUs = rapid.Bool().Draw(t, "withCPUs")
			cpus := g.sockets * g.cores * g.threads
			if g.withCPUs {
				g.cpusGiven = rapid.IntRange(1, 512).Draw(t, "cpus")
				cpus = g.cpusGiven
			}
			groups = append(groups, g)
			fmt.Fprintf(&b, "NodeName=DEFAULT Sockets=%d CoresPerSocket=%d ThreadsPerCore=%d RealMemory=%d\n", g.sockets, g.cores, g.threads, g.mem)
			fmt.Fprintf(&b, "NodeName=%s[%03d-%03d] \\\n", g.prefix, 1, g.count)
			if g.withCPUs {
				fmt.Fprintf(&b, "  CPUs=%d \\\n", g.cpusGiven)
			}
			if g.gpus > 0 {
				spec := fmt.Sprintf("gpu:%d", g.gpus)
				if g.gpuType != "" {
					spec = fmt.Sprintf("gpu:%s:%d", g.gpuType, g.gpus)
					wantTyped[g.gpuType] += int64(g.gpus * g.count)
				}
				fmt.Fprintf(&b, "  Gres=%s\n", spec)
			} else {
				b.WriteString("  State=UNKNOWN\n")
			}
			wantNodes += int64(g.count)
			wantCPUs += int64(cpus * g.count)
			wantMem += g.mem * int64(g.count)
			wantGPUs += int64(g.gpus * g.count)
		}
		b.WriteString("PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE\n")
		pick := rapid.IntRange(0, n-1).Draw(t, "part")
		fmt.Fprintf(&b, "PartitionName=one Nodes=%s[%03d-%03d]\n", groups[pick].prefix, 1, groups[pick].count)

		c, _, err := ParseOptions("p.conf", []byte(b.String()), Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		total := c.TotalTRES()
		if total["node"] != wantNodes || total["cpu"] != wantCPUs || total["mem"] != wantMem || total["gres/gpu"] != wantGPUs {
			t.Fatalf("TRES %s, want node=%d cpu=%d mem=%d gpu=%d\n%s", total, wantNodes, wantCPUs, wantMem, wantGPUs, b.String())
		}
		for typ, cnt := range wantTyped {
			if total["gres/gpu:"+typ] != cnt {
				t.Fatalf("gres/gpu:%s = %d, want %d", typ, total["gres/gpu:"+typ], cnt)
			}
		}
		if got := c.PartitionTRES(c.Partition("all")); got["cpu"] != wantCPUs {
			t.Fatalf("partition all cpu = %d, want %d", got["cpu"], wantCPUs)
		}
		if got := len(c.Partition("one").Nodes); got != groups[pick].count {
			t.Fatalf("partition one has %d nodes, want %d", got, groups[pick].count)
		}
	})
}
