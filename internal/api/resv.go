package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Paths of the advanced reservation and license API (issue 8).
const (
	// PathReservations takes a ResvCommandRequest: one scontrol
	// create/update/delete/show reservation command.
	PathReservations = "/v1/reservations"
	// PathResvSinfo answers GET with a TextResponse: sinfo -T.
	PathResvSinfo = "/v1/reservations/sinfo"
	// PathResvUtilization answers GET ?start=&end=&parsable=1 with a
	// TextResponse: sreport reservation utilization.
	PathResvUtilization = "/v1/reservations/utilization"
	// PathLicenses answers GET ?name=&oneliner=1 with a TextResponse:
	// scontrol show licenses.
	PathLicenses = "/v1/licenses"
)

// ResvCommandRequest is one reservation command as scontrol's words
// after "scontrol" ("create", "reservation", "ReservationName=R", ...).
type ResvCommandRequest struct {
	Words []string `json:"words"`
	// OneLiner is scontrol -o (show only).
	OneLiner bool `json:"oneliner,omitempty"`
}

// ReservationCommand runs a reservation command; a rejection is an
// *Error whose Message is Slurm's (resv.ClientMessage adds the prefix).
func (c *Client) ReservationCommand(ctx context.Context, req ResvCommandRequest) (TextResponse, error) {
	var r TextResponse
	return r, c.call(ctx, http.MethodPost, PathReservations, req, &r)
}

// ReservationsSinfo returns sinfo -T.
func (c *Client) ReservationsSinfo(ctx context.Context) (TextResponse, error) {
	var r TextResponse
	return r, c.call(ctx, http.MethodGet, PathResvSinfo, nil, &r)
}

// ReservationUtilization returns sreport reservation utilization for
// [start, end).
func (c *Client) ReservationUtilization(ctx context.Context, start, end time.Time, parsable bool) (TextResponse, error) {
	v := url.Values{}
	v.Set("start", strconv.FormatInt(start.Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	if parsable {
		v.Set("parsable", "1")
	}
	var r TextResponse
	return r, c.call(ctx, http.MethodGet, PathResvUtilization+"?"+v.Encode(), nil, &r)
}

// Licenses returns scontrol show licenses (name "" = all).
func (c *Client) Licenses(ctx context.Context, name string, oneLiner bool) (TextResponse, error) {
	v := url.Values{}
	if name != "" {
		v.Set("name", name)
	}
	if oneLiner {
		v.Set("oneliner", "1")
	}
	path := PathLicenses
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var r TextResponse
	return r, c.call(ctx, http.MethodGet, path, nil, &r)
}
