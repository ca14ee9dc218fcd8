package restd

import (
	"fmt"
	"testing"
)

// TestRESTAllocate: job/allocate is salloc --no-shell (oracle, 24.11):
// the job's id, no script needed, a "script" ignored with a warning, a
// body without "job" 9000 and HTTP 422, a bad partition 2000 and HTTP 500.
func TestRESTAllocate(t *testing.T) {
	rc := newRestCluster(t)
	alice := rc.as("alice")
	type obj = map[string]any
	cases := []struct {
		body  any
		code  int
		errno int
		warn  bool
	}{
		{obj{"job": obj{"name": "al", "current_working_directory": "/tmp", "environment": []string{"PATH=/bin"}}}, 200, 0, false},
		{obj{"job": obj{"current_working_directory": "/tmp"}}, 200, 0, false},
		{obj{"script": "#!/bin/sh\nsleep 1", "job": obj{"current_working_directory": "/tmp"}}, 200, 0, true},
		{obj{"job": obj{"partition": "zz"}}, 500, 2000, false},
		{obj{}, 422, 9000, false},
	}
	for _, tc := range cases {
		code, m, raw := rc.do(alice, "POST", "/slurm/v0.0.42/job/allocate", tc.body)
		var errno float64
		if e := firstError(m); e != nil {
			errno, _ = e["error_number"].(float64)
		}
		warns, _ := m["warnings"].([]any)
		if code != tc.code || int(errno) != tc.errno || (len(warns) > 0) != tc.warn {
			t.Errorf("allocate %v: HTTP %d, error %v, warnings %v; want %d, %d, warning %v\n%s", tc.body, code, errno, warns, tc.code, tc.errno, tc.warn, raw)
			continue
		}
		if code != 200 {
			continue
		}
		id := int(m["job_id"].(float64))
		_, jm, jraw := rc.do(alice, "GET", fmt.Sprintf("/slurm/v0.0.42/job/%d", id), nil)
		jobs, _ := jm["jobs"].([]any)
		if len(jobs) != 1 || jobs[0].(map[string]any)["user_name"] != "alice" {
			t.Errorf("allocated job %d: %s", id, jraw)
		}
	}
}
