package api

import (
	"context"
	"net/http"
)

// PathPartitionAdmin takes a PartitionCommandRequest: scontrol create,
// update or delete partition.
const PathPartitionAdmin = "/v1/partitions/admin"

// Partition administration verbs (PartitionCommandRequest.Verb).
const (
	PartitionCreate = "create"
	PartitionUpdate = "update"
	PartitionDelete = "delete"
)

// PartitionUsageReason marks an Error whose Message is scontrol's own
// usage complaint ("Invalid input: ...", "PartitionName must be given."),
// printed as "scontrol: error: MESSAGE" rather than after the
// verb's prefix ("Error creating the partition: ", "slurm_update error: ").
const PartitionUsageReason = "usage"

// PartitionCommandRequest is one partition command: the verb and
// scontrol's KEY=VALUE words (PartitionName=NAME among them).
type PartitionCommandRequest struct {
	Verb  string   `json:"verb"`
	Words []string `json:"words"`
}

// PartitionCommandResponse names the partition the command changed.
type PartitionCommandResponse struct {
	Name string `json:"name"`
}

// PartitionCommand runs scontrol create|update|delete partition. A
// rejection is an *Error with Slurm's message (Reason
// PartitionUsageReason for a malformed command).
func (c *Client) PartitionCommand(ctx context.Context, req PartitionCommandRequest) (PartitionCommandResponse, error) {
	var r PartitionCommandResponse
	return r, c.call(ctx, http.MethodPost, PathPartitionAdmin, req, &r)
}

// PathPartitionBilling answers GET with a PartitionBillingResponse.
const PathPartitionBilling = "/v1/partitions/billing"

// PartitionBillingResponse holds each partition's TRESBillingWeights as
// written (partitions without weights are absent), which scontrol show
// partition prints after TRES=.
type PartitionBillingResponse struct {
	Weights map[string]string `json:"weights"`
}

// PartitionBilling returns the partitions' TRESBillingWeights.
func (c *Client) PartitionBilling(ctx context.Context) (PartitionBillingResponse, error) {
	var r PartitionBillingResponse
	return r, c.call(ctx, http.MethodGet, PathPartitionBilling, nil, &r)
}
