package conf

import (
	"strings"
	"testing"
)

// TestGresConf covers gres.conf(5)'s example forms.
func TestGresConf(t *testing.T) {
	g, _, err := ParseGres("gres.conf", []byte(`AutoDetect=nvml
Name=gpu Type=gtx560 File=/dev/nvidia0 COREs=0,1
NodeName=tux[0-2] Name=gpu File=/dev/nvidia[0-3]
NodeName=tux3 Name=gpu File=/dev/nvidia[0,2-3]
NodeName=tux[0-7] Name=bandwidth Type=lustre Count=4G Flags=CountOnly
NodeName=tux[8-11] AutoDetect=rsmi
Name=mps Count=100 File=/dev/nvidia0
`))
	if err != nil {
		t.Fatal(err)
	}
	if g.AutoDetect != "nvml" || len(g.Lines) != 5 {
		t.Fatalf("gres = %+v", g)
	}
	for i, want := range []struct {
		name, typ string
		count     int64
		files     int
		nodes     int
	}{{"gpu", "gtx560", 1, 1, 0}, {"gpu", "", 4, 4, 3}, {"gpu", "", 3, 3, 1}, {"bandwidth", "lustre", 4 << 30, 0, 8}, {"mps", "", 100, 1, 0}} {
		l := g.Lines[i]
		if l.Name != want.name || l.Type != want.typ || l.Count != want.count || len(l.Files) != want.files || len(l.Nodes) != want.nodes {
			t.Errorf("line %d = %+v, want %+v", i, l, want)
		}
	}
	if g.Lines[0].Cores != "0,1" || g.Lines[2].Files[1] != "/dev/nvidia2" {
		t.Errorf("cores/files: %+v %+v", g.Lines[0], g.Lines[2])
	}
	for _, bad := range []struct{ text, want string }{
		{"Name=gpu Colour=red\n", "gres.conf:1: Colour: unrecognized key"},
		{"NodeName=x File=/dev/nvidia0\n", "gres.conf:1: Name: missing Name="},
		{"Name=gpu Count=lots\n", "gres.conf:1: Count: invalid count"},
		{"Name=gpu File=/dev/nvidia[0-3\n", "gres.conf:1: File: unclosed '['"},
		{"AutoDetect=magic\n", "gres.conf:1: AutoDetect: invalid value"},
	} {
		_, _, err := ParseGres("gres.conf", []byte(bad.text))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.text, err, bad.want)
		}
	}
}
