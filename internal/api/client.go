package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Client is the CLI's client for the controller. Over the Unix socket the
// controller identifies the caller by its peer credentials; over TCP the
// client sends a token (SLURM_JWT) as a Bearer authorization.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// maxClientBody bounds the answers a client reads.
const maxClientBody = 256 << 20

// NewUnixClient returns a client talking to the controller's Unix socket.
func NewUnixClient(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second,
	}
	return &Client{base: "http://sluice", http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// NewUnixOneShotClient returns a client for a short-lived command (sbatch)
// that makes one or two calls: each call dials the Unix socket, writes the
// request, reads the answer and closes the connection. No connection pool,
// no background reader and writer goroutines, no timer goroutine (bound a
// call with its context): a process that lives for one request starts
// fewer threads and touches less memory.
func NewUnixOneShotClient(socket string) *Client {
	return &Client{base: "http://sluice", http: &http.Client{Transport: unixOneShot(socket)}}
}

// unixOneShot is the RoundTripper of NewUnixOneShotClient: one request
// per connection, on the caller's goroutine.
type unixOneShot string

// RoundTrip sends req on a new connection and returns its answer.
func (s unixOneShot) RoundTrip(req *http.Request) (*http.Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(req.Context(), "unix", string(s))
	if err != nil {
		return nil, err
	}
	if dl, ok := req.Context().Deadline(); ok {
		conn.SetDeadline(dl)
	}
	r := *req // a RoundTripper must not change the caller's request
	r.Close = true
	if err := r.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %v", errWritten, err)
	}
	resp.Body = connBody{resp.Body, conn}
	return resp, nil
}

// connBody closes the connection with the body it carries.
type connBody struct {
	io.ReadCloser
	conn net.Conn
}

func (b connBody) Close() error {
	err := b.ReadCloser.Close()
	b.conn.Close()
	return err
}

// NewTCPClient returns a client for the controller at addr ("host:port"
// or a URL), authenticating with token.
func NewTCPClient(addr, token string) *Client {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return &Client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: 60 * time.Second}}
}

// Target is the base URL the client calls ("http://sluice" over the Unix
// socket) and the token it sends, if any: which way a command found the
// controller.
func (c *Client) Target() (base, token string) { return c.base, c.token }

// ErrUnreachable wraps a failure to reach the controller before the
// request was sent whole, so that the CLI prints Slurm's "Unable to
// contact slurm controller (connect failure)": nothing was done.
var ErrUnreachable = errors.New("Unable to contact slurm controller (connect failure)")

// ErrNoAnswer wraps a failure after the request was sent whole (the
// connection dropped, the answer timed out): Slurm's "(receive
// failure)". The request may have taken effect: a submission may be
// stored (sbatch retries it with its SubmitKey, which cannot make a
// second job).
var ErrNoAnswer = errors.New("Unable to contact slurm controller (receive failure)")

// errWritten marks a transport error after the request was written.
var errWritten = errors.New("request sent")

// transportErr classifies an error of Client.Do: wrote says the
// request was written whole.
func transportErr(err error, wrote bool) error {
	if wrote || errors.Is(err, errWritten) {
		return fmt.Errorf("%w: %v", ErrNoAnswer, err)
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	data, _, err := c.roundTrip(ctx, method, path, "", in)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// roundTrip sends a request (in as JSON; accept, when set, the answer's
// preferred encoding) and returns the answer's body and Content-Type, or
// the controller's error.
func (c *Client) roundTrip(ctx context.Context, method, path, accept string, in any) ([]byte, string, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, "", err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }}))
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", transportErr(err, wrote.Load())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxClientBody))
	if err != nil {
		return nil, "", transportErr(err, true)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		return nil, "", e
	}
	return data, resp.Header.Get("Content-Type"), nil
}

// Ping returns who the controller thinks the caller is.
func (c *Client) Ping(ctx context.Context) (Whoami, error) {
	var w Whoami
	return w, c.call(ctx, http.MethodGet, PathPing, nil, &w)
}

// Reconfigure asks the controller to reread slurm.conf.
func (c *Client) Reconfigure(ctx context.Context) (ReconfigureResponse, error) {
	var r ReconfigureResponse
	return r, c.call(ctx, http.MethodPost, PathReconfigure, struct{}{}, &r)
}

// Submit submits a batch job (or tests it with TestOnly).
func (c *Client) Submit(ctx context.Context, req SubmitRequest) (SubmitResponse, error) {
	var r SubmitResponse
	return r, c.call(ctx, http.MethodPost, PathSubmit, req, &r)
}

// Jobs lists jobs.
func (c *Client) Jobs(ctx context.Context, q JobQuery) (JobsResponse, error) {
	v := url.Values{}
	if len(q.IDs) > 0 {
		v.Set("id", strings.Join(q.IDs, ","))
	}
	if q.Detail {
		v.Set("detail", "1")
	}
	if q.All {
		v.Set("all", "1")
	}
	q.Filter.Encode(v)
	if q.Brief {
		v.Set("brief", "1")
	}
	path := PathJobs
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	accept := ListContentType
	if q.Brief {
		accept = RowsContentType + ", " + ListContentType
	}
	data, ctype, err := c.roundTrip(ctx, http.MethodGet, path, accept, nil)
	if err != nil {
		return JobsResponse{}, err
	}
	return DecodeJobs(data, ctype)
}

// Control applies a job operation (cancel, hold, requeue, ...).
func (c *Client) Control(ctx context.Context, req JobControlRequest) (JobControlResponse, error) {
	var r JobControlResponse
	return r, c.call(ctx, http.MethodPost, PathJobControl, req, &r)
}

// UpdateJob changes a job's attributes.
func (c *Client) UpdateJob(ctx context.Context, req JobUpdateRequest) error {
	return c.call(ctx, http.MethodPost, PathJobUpdate, req, nil)
}

// Nodes lists the nodes.
func (c *Client) Nodes(ctx context.Context) (NodesResponse, error) {
	var r NodesResponse
	return r, c.call(ctx, http.MethodGet, PathNodes, nil, &r)
}

// UpdateNode changes nodes' state (DRAIN, RESUME, DOWN, ...).
func (c *Client) UpdateNode(ctx context.Context, req NodeUpdateRequest) error {
	return c.call(ctx, http.MethodPost, PathNodeUpdate, req, nil)
}

// Partitions lists the partitions.
func (c *Client) Partitions(ctx context.Context) (PartitionsResponse, error) {
	var r PartitionsResponse
	return r, c.call(ctx, http.MethodGet, PathPartitions, nil, &r)
}

// Config returns the running configuration.
func (c *Client) Config(ctx context.Context) (ConfigResponse, error) {
	var r ConfigResponse
	return r, c.call(ctx, http.MethodGet, PathConfig, nil, &r)
}

// Token asks for a signed token.
func (c *Client) Token(ctx context.Context, req TokenRequest) (TokenResponse, error) {
	var r TokenResponse
	return r, c.call(ctx, http.MethodPost, PathToken, req, &r)
}

// RotateTokenKey replaces the controller's token signing key.
func (c *Client) RotateTokenKey(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, PathTokenRotate, struct{}{}, nil)
}

// NewHandlerClient returns a client that calls h in process, without a
// socket: the REST daemon served by the controller itself uses it, with
// h the controller's own client API (which authenticates the request as
// its listeners do), so that a REST call is authorized exactly as the
// command it stands for. token, when set, is sent as over TCP.
func NewHandlerClient(h http.Handler, token string) *Client {
	return &Client{base: "http://sluice", token: token, http: &http.Client{Transport: handlerTransport{h}}}
}

// handlerTransport is NewHandlerClient's RoundTripper.
type handlerTransport struct{ h http.Handler }

// RoundTrip serves req with the handler and returns what it wrote.
func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = req.URL.RequestURI()
	t.h.ServeHTTP(rec, r)
	return &http.Response{
		Status: http.StatusText(rec.status), StatusCode: rec.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

// bufferedResponse is an http.ResponseWriter that keeps the answer.
type bufferedResponse struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
