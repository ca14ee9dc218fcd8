package cli

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpRESTListen: sluice up --rest-listen serves the REST API from the
// controller (here on a Unix socket, as the local user), and keeps
// serving it after scontrol reconfigure starts the next controller.
func TestUpRESTListen(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster")
	}
	sock := filepath.Join(t.TempDir(), "rest.sock")
	c := upClusterFiles(t, 1, "", nil, "--rest-listen", "unix:"+sock)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://local"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var m map[string]any
		json.Unmarshal(data, &m)
		return resp.StatusCode, m
	}
	code, m := call("POST", "/slurm/v0.0.42/job/submit",
		`{"script":"#!/bin/sh\ntrue","job":{"name":"rest","current_working_directory":"/tmp","environment":["PATH=/bin"],"hold":true}}`)
	if code != 200 || m["job_id"] == nil {
		t.Fatalf("submit: %d %v", code, m)
	}
	if rc, _, errs := c.run("scontrol", "reconfigure"); rc != 0 {
		t.Fatalf("scontrol reconfigure: %d %s", rc, errs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, m = call("GET", "/slurm/v0.0.42/jobs", "")
		if jobs, _ := m["jobs"].([]any); code == 200 && len(jobs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs after reconfigure: %d %v", code, m)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
