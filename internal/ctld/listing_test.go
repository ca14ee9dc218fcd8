package ctld

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestListFilterServerSide: the controller answers squeue's filters with
// the matching jobs only (slurmctld's filtered job loads), and squeue -j
// of one id gets that id's records whatever their state, so that squeue
// can tell an unknown id from a finished job.
func TestListFilterServerSide(t *testing.T) {
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	held := func(name string) func(*api.JobSpec) {
		return func(s *api.JobSpec) { s.Hold, s.Name = true, name }
	}
	done := c.submit(c.wrap("true"))
	c.waitState(done, "COMPLETED", 10*time.Second)
	a := c.submit(c.wrap("true", held("alpha")))
	b := c.submit(c.wrap("true", held("beta")))
	b2 := c.submit(c.wrap("true", held("beta")))
	cases := []struct {
		name string
		f    api.ListFilter
		want []uint32
	}{
		{"one id", api.ListFilter{Jobs: idStr(b)}, []uint32{b}},
		{"id list", api.ListFilter{Jobs: idStr(a) + "," + idStr(b2)}, []uint32{a, b2}},
		{"name", api.ListFilter{Names: "beta"}, []uint32{b, b2}},
		{"state CD", api.ListFilter{States: "CD"}, []uint32{done}},
		{"state and name", api.ListFilter{States: "PD", Names: "alpha,beta"}, []uint32{a, b, b2}},
		{"finished job by id", api.ListFilter{Jobs: idStr(done)}, []uint32{done}},
		{"finished job in a list", api.ListFilter{Jobs: idStr(done) + "," + idStr(a)}, []uint32{a}},
		{"no such user", api.ListFilter{Users: "nosuchuser"}, nil},
		{"--start", api.ListFilter{Pending: true, Names: "alpha"}, []uint32{a}},
	}
	for _, tc := range cases {
		res, err := c.client.Jobs(c.ctx(), api.JobQuery{Filter: tc.f})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []uint32
		for _, j := range res.Jobs {
			got = append(got, j.JobID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: controller returned jobs %v, want %v", tc.name, got, tc.want)
		}
	}
}
