package noded

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestBuildJobEnvJobToken: the token the controller sends with a launch
// is in the job's environment as SLUICE_JOB_TOKEN (srun and scontrol in a
// job on a node host, with no controller socket, reach the controller over
// TCP with it); without one there is no such variable.
func TestBuildJobEnvJobToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		want  bool
	}{{"tok.en.sig", true}, {"", false}} {
		req := &api.LaunchRequest{JobID: 7, User: "root", Script: "#!/bin/sh\n", JobToken: tc.token}
		env, err := BuildJobEnv(req, "n1", time.Unix(1_700_000_000, 0))
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(env, func(kv string) bool { return kv == api.JobTokenEnv+"="+tc.token })
		if got != tc.want {
			t.Errorf("token %q: %s in the job's environment = %v, want %v", tc.token, api.JobTokenEnv, got, tc.want)
		}
	}
}
