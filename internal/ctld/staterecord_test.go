package ctld

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// recordCtl starts a controller on dir's own SQLite database (no agents:
// jobs pend), submits n jobs and stops; it returns the last job id.
func recordCtl(t *testing.T, dir string, mode StartMode, n int) (uint32, error) {
	t.Helper()
	ctl, err := New(context.Background(), Options{Conf: testConf(t, dir, 1, ""), StateDir: dir, Socket: shortSocket(t),
		Listen: "none", Logger: quietLogger(), StartMode: mode})
	if err != nil {
		return 0, err
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	cl := api.NewUnixClient(ctl.Socket())
	var last uint32
	for i := 0; i < n; i++ {
		res, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: api.JobSpec{Script: "#!/bin/sh\ntrue\n",
			WorkDir: dir, Name: "rec", Partitions: []string{"debug"}}})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		last = res.JobID
	}
	return last, nil
}

func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(from, n))
		if os.IsNotExist(err) {
			os.Remove(filepath.Join(to, n))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, n), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStateLossRefused is issue 17's finding 7: a controller whose
// database is missing, another one, or older than its state record
// (a lost WAL, a restored backup) refuses to start, naming the record
// and the -c / -R ways to start anyway; with them it starts and never
// hands out a job id twice.
func TestStateLossRefused(t *testing.T) {
	t.Parallel()
	dbFiles := []string{"ctld.db", "ctld.db-wal", "ctld.db-shm"}
	cases := []struct {
		name    string
		lose    func(t *testing.T, dir, backup, other string)
		problem string
	}{
		{"missing", func(t *testing.T, dir, _, _ string) {
			for _, f := range dbFiles {
				os.Remove(filepath.Join(dir, f))
			}
		}, "is missing or empty"},
		{"older", func(t *testing.T, dir, backup, _ string) { copyFiles(t, backup, dir, dbFiles...) }, "is older than the record"},
		{"another", func(t *testing.T, dir, _, other string) { copyFiles(t, other, dir, dbFiles...) }, "is another database"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, backup, other := t.TempDir(), t.TempDir(), t.TempDir()
			if _, err := recordCtl(t, other, StartNormal, 3); err != nil {
				t.Fatal(err)
			}
			if _, err := recordCtl(t, dir, StartNormal, 2); err != nil {
				t.Fatal(err)
			}
			copyFiles(t, dir, backup, dbFiles...)
			last, err := recordCtl(t, dir, StartNormal, 2)
			if err != nil {
				t.Fatal(err)
			}
			tc.lose(t, dir, backup, other)
			_, err = recordCtl(t, dir, StartNormal, 0)
			if err == nil {
				t.Fatal("started on a lost state")
			}
			for _, want := range []string{tc.problem, filepath.Join(dir, StateRecordFile), "sluice ctld -R", "sluice ctld -c",
				"job ids up to " + idStr(last)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			next, err := recordCtl(t, dir, StartRecover, 1)
			if err != nil || next <= last {
				t.Fatalf("-R: job %d, %v; want an id after %d", next, err, last)
			}
			// Started once with -R, the record follows the database again.
			if _, err := recordCtl(t, dir, StartNormal, 0); err != nil {
				t.Fatalf("restart after -R: %v", err)
			}
		})
	}
	t.Run("clear", func(t *testing.T) {
		dir := t.TempDir()
		last, err := recordCtl(t, dir, StartNormal, 2)
		if err != nil {
			t.Fatal(err)
		}
		next, err := recordCtl(t, dir, StartClear, 1)
		if err != nil || next != last+1 {
			t.Fatalf("-c: job %d, %v; want %d", next, err, last+1)
		}
		if _, err := recordCtl(t, dir, StartNormal, 0); err != nil {
			t.Fatalf("restart after -c: %v", err)
		}
	})
}
