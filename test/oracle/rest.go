package oracle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// restClient sends a scenario's REST requests with each user's token,
// made once per cluster by token (the side's way: oracle.sh token,
// scontrol token).
type restClient struct {
	token func(ctx context.Context, user string) (jwt, url string, err error)
	url   string // the API's base URL when token does not say it
	mu    sync.Mutex
	jwts  map[string]string
}

// do sends one request; the result's stdout is the body and its exit the
// HTTP status (-1 when no reply came).
func (c *restClient) do(ctx context.Context, user, method, path, body string) Result {
	jwt, url, err := c.credentials(ctx, user)
	if err != nil {
		return Result{Stderr: err.Error() + "\n", Exit: -1}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url+path, strings.NewReader(body))
	if err != nil {
		return Result{Stderr: err.Error() + "\n", Exit: -1}
	}
	req.Header.Set("X-SLURM-USER-NAME", user)
	req.Header.Set("X-SLURM-USER-TOKEN", jwt)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Result{Stderr: fmt.Sprintf("%s %s: %v\n", method, path, err), Exit: -1}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Result{Stderr: err.Error() + "\n", Exit: -1}
	}
	return Result{Stdout: string(b), Exit: resp.StatusCode}
}

// credentials returns the user's token and the API's URL, asking for the
// token at the first request of each user.
func (c *restClient) credentials(ctx context.Context, user string) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == nil {
		return "", "", fmt.Errorf("the cluster is not up")
	}
	if jwt, ok := c.jwts[user]; ok {
		return jwt, c.url, nil
	}
	jwt, url, err := c.token(ctx, user)
	if err != nil {
		return "", "", err
	}
	if jwt == "" || url == "" {
		return "", "", fmt.Errorf("no token or REST URL for %s", user)
	}
	if c.jwts == nil {
		c.jwts = map[string]string{}
	}
	c.jwts[user], c.url = jwt, url
	return jwt, url, nil
}

// envLines reads NAME=VALUE lines (oracle.sh token, scontrol token).
func envLines(text string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			out[k] = v
		}
	}
	return out
}
