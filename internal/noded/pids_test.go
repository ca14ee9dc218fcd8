package noded

import (
	"reflect"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestTaskPids: a task's processes are its leader with its ranks, then
// by pid its descendants (a child that left the process group included)
// and the other members of its process group (an orphan reparented to
// init), ranked -1; processes of other groups are not listed, and a
// leader that is gone lists nothing.
func TestTaskPids(t *testing.T) {
	table := map[int]procUsage{
		1:   {pid: 1, ppid: 0, pgrp: 1},
		100: {pid: 100, ppid: 50, pgrp: 100},  // the leader
		105: {pid: 105, ppid: 100, pgrp: 100}, // its child
		103: {pid: 103, ppid: 105, pgrp: 103}, // a grandchild in its own group
		101: {pid: 101, ppid: 1, pgrp: 100},   // an orphan of the group
		200: {pid: 200, ppid: 50, pgrp: 200},  // another task
	}
	want := []api.StepPid{{PID: 100, Local: 2, Global: 5}, {PID: 101, Local: -1, Global: -1},
		{PID: 103, Local: -1, Global: -1}, {PID: 105, Local: -1, Global: -1}}
	if got := taskPids(table, 100, 2, 5); !reflect.DeepEqual(got, want) {
		t.Errorf("taskPids: %+v, want %+v", got, want)
	}
	if got := taskPids(table, 300, 0, 0); got != nil {
		t.Errorf("gone leader: %+v", got)
	}
}
