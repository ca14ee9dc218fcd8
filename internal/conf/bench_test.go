package conf

import (
	"fmt"
	"strings"
	"testing"
)

// bigConfig is a 10,000-node cluster in 100 node lines and 20 partitions,
// the size Sluice is designed for.
func bigConfig() []byte {
	var b strings.Builder
	b.WriteString("ClusterName=big\nSlurmctldHost=ctl\nGresTypes=gpu\n")
	for r := 0; r < 100; r++ {
		fmt.Fprintf(&b, "NodeName=r%03dn[001-100] CPUs=64 RealMemory=256000 Gres=gpu:a100:4\n", r)
	}
	for p := 0; p < 20; p++ {
		fmt.Fprintf(&b, "PartitionName=p%02d Nodes=r%03dn[001-100],r%03dn[001-100] MaxTime=1-0\n", p, p*5, p*5+1)
	}
	b.WriteString("PartitionName=all Nodes=ALL Default=YES\n")
	return []byte(b.String())
}

// BenchmarkParse10kNodes measures parsing a 10,000-node configuration.
func BenchmarkParse10kNodes(b *testing.B) {
	data := bigConfig()
	for b.Loop() {
		c, _, err := ParseOptions("big.conf", data, Options{})
		if err != nil || len(c.Nodes) != 10000 {
			b.Fatalf("nodes=%d err=%v", len(c.Nodes), err)
		}
	}
}

// BenchmarkTotalTRES10kNodes measures the cluster TRES sum.
func BenchmarkTotalTRES10kNodes(b *testing.B) {
	c, _, err := ParseOptions("big.conf", bigConfig(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if c.TotalTRES()["gres/gpu"] != 40000 {
			b.Fatal("wrong total")
		}
	}
}
