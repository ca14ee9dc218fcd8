package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// PathNodeUsage answers GET ?start=&end= (Unix seconds) with a
// NodeUsageResponse: the node time sreport cluster utilization reports as
// Down and PlannedDown.
const PathNodeUsage = "/v1/ext/nodeusage"

// NodeUsageResponse is the CPU time of the cluster's nodes in [start,
// end) that was Down (DOWN or fully drained) or PlannedDown (FUTURE, or
// idle in a MAINT reservation), from the controller's node state history.
type NodeUsageResponse struct {
	DownCPUSeconds        int64 `json:"down_cpu_s"`
	PlannedDownCPUSeconds int64 `json:"planned_down_cpu_s"`
}

// NodeUsage returns the Down and PlannedDown node time of [start, end).
func (c *Client) NodeUsage(ctx context.Context, start, end time.Time) (NodeUsageResponse, error) {
	v := url.Values{}
	v.Set("start", strconv.FormatInt(start.Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	var r NodeUsageResponse
	return r, c.call(ctx, http.MethodGet, PathNodeUsage+"?"+v.Encode(), nil, &r)
}
