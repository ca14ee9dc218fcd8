package ctld

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergeBatch: batches queued during a commit are stored as one; a
// row written by a later batch replaces the earlier one, events all stay
// in order, the later counter wins.
func TestMergeBatch(t *testing.T) {
	t.Parallel()
	row := func(id uint32, state int) JobRow {
		return JobRow{ID: id, State: state, Data: []byte{byte('0' + state)}}
	}
	first := &Batch{Jobs: []JobRow{row(1, 0), row(2, 0)}, Runs: []RunRow{{JobID: 1, Restart: 0, State: "RUNNING"}},
		Events: []EventRow{{JobID: 1, Event: "submit"}, {JobID: 2, Event: "submit"}},
		Nodes:  []NodeRow{{Name: "n1", Reason: "a"}}, Meta: map[string]string{"next_job_id": "3"}}
	second := &Batch{Jobs: []JobRow{row(2, 1), row(3, 0)}, Runs: []RunRow{{JobID: 1, Restart: 0, State: "COMPLETED"}, {JobID: 1, Restart: 1, State: "RUNNING"}},
		Events: []EventRow{{JobID: 2, Event: "start"}, {JobID: 3, Event: "submit"}},
		Nodes:  []NodeRow{{Name: "n1", Reason: "b"}, {Name: "n2"}}, Meta: map[string]string{"next_job_id": "4"}}
	want := &Batch{Jobs: []JobRow{row(1, 0), row(2, 1), row(3, 0)},
		Runs:   []RunRow{{JobID: 1, Restart: 0, State: "COMPLETED"}, {JobID: 1, Restart: 1, State: "RUNNING"}},
		Events: []EventRow{{JobID: 1, Event: "submit"}, {JobID: 2, Event: "submit"}, {JobID: 2, Event: "start"}, {JobID: 3, Event: "submit"}},
		Nodes:  []NodeRow{{Name: "n1", Reason: "b"}, {Name: "n2"}}, Meta: map[string]string{"next_job_id": "4"}}
	got := mergeBatch(mergeBatch(mergeBatch(nil, first), nil), second)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged batch (-want +got):\n%s", diff)
	}
	if mergeBatch(nil, nil) != nil {
		t.Error("merging nothing must give nothing")
	}
}
