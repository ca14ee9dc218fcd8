package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestControllerClientJobToken: the commands find the controller through
// SLURM_JWT (TCP), else the local socket, else (a job on a node host with
// no controller socket) through the job's token in SLUICE_JOB_TOKEN, over
// TCP to SlurmctldHost's address.
func TestControllerClientJobToken(t *testing.T) {
	dir := t.TempDir()
	noSock := filepath.Join(dir, "nosock")
	withSock := filepath.Join(dir, "sock")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(noSock, 0o755))
	must(os.MkdirAll(withSock, 0o755))
	must(os.WriteFile(filepath.Join(withSock, api.SocketFile), nil, 0o600))
	confFor := func(state string) string {
		path := filepath.Join(state, "slurm.conf")
		must(os.WriteFile(path, []byte("ClusterName=c\nSlurmctldHost=ctl(10.9.8.7)\nSlurmctldPort=7001\nStateSaveLocation="+
			state+"\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n"), 0o644))
		return path
	}
	cases := []struct {
		name, state     string
		vars            map[string]string
		wantBase, token string
	}{
		{"job token, no socket", noSock, map[string]string{api.JobTokenEnv: "jt"}, "http://10.9.8.7:7001", "jt"},
		{"socket wins over job token", withSock, map[string]string{api.JobTokenEnv: "jt"}, "http://sluice", ""},
		{"SLURM_JWT wins", withSock, map[string]string{"SLURM_JWT": "uj", api.JobTokenEnv: "jt"}, "http://10.9.8.7:7001", "uj"},
		{"nothing", noSock, nil, "", ""},
	}
	for _, tc := range cases {
		vars := map[string]string{"SLURM_CONF": confFor(tc.state)}
		for k, v := range tc.vars {
			vars[k] = v
		}
		cl, err := controllerClient(&Env{Getenv: func(k string) string { return vars[k] }})
		var base, token string
		if err == nil {
			base, token = cl.Target()
		}
		switch {
		case tc.wantBase == "" && err == nil:
			t.Errorf("%s: got a client for %s, want no controller", tc.name, base)
		case tc.wantBase == "":
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case base != tc.wantBase || token != tc.token:
			t.Errorf("%s: client %s token %q, want %s token %q", tc.name, base, token, tc.wantBase, tc.token)
		}
	}
}
