package pmi

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PMI-2's wire protocol: each message is its length in 6 characters
// ("%-6d") then "key=value;" pairs, the first "cmd=NAME;"; a ';' inside a
// value is doubled.

// maxV2Message bounds one PMI-2 message (its length field has 6 digits).
const maxV2Message = 999999

// readV2 reads one message.
func readV2(r io.Reader) (map[string]string, error) {
	var head [6]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(head[:])))
	if err != nil || n < 0 || n > maxV2Message {
		return nil, fmt.Errorf("pmi: bad PMI-2 length %q", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return parseV2(string(body)), nil
}

// parseV2 splits "k=v;k=v;" honouring doubled semicolons.
func parseV2(s string) map[string]string {
	out := map[string]string{}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			k, v, _ := strings.Cut(cur.String(), "=")
			out[k] = v
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ';' {
			if i+1 < len(s) && s[i+1] == ';' {
				cur.WriteByte(';')
				i++
				continue
			}
			flush()
			continue
		}
		cur.WriteByte(s[i])
	}
	flush()
	return out
}

// formatV2 writes a message: pairs in order, each "k=v;".
func formatV2(pairs ...string) []byte {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString(pairs[i] + "=" + strings.ReplaceAll(pairs[i+1], ";", ";;") + ";")
	}
	return []byte(fmt.Sprintf("%-6d%s", b.Len(), b.String()))
}

// serveV2 answers a PMI-2 client after its init.
func (s *Server) serveV2(rank int, r io.Reader, w io.Writer) {
	for {
		req, err := readV2(r)
		if err != nil {
			return
		}
		reply, last := s.v2(rank, req)
		if reply != nil {
			if _, err := w.Write(reply); err != nil {
				return
			}
		}
		if last {
			return
		}
	}
}

func found(ok bool) string {
	if ok {
		return "TRUE"
	}
	return "FALSE"
}

// v2 answers one request; last ends the conversation.
func (s *Server) v2(rank int, req map[string]string) (reply []byte, last bool) {
	cmd := req["cmd"]
	switch cmd {
	case "fullinit":
		return formatV2("cmd", "fullinit-response", "rc", "0", "pmi-version", "2", "pmi-subversion", "0",
			"rank", strconv.Itoa(rank), "size", strconv.Itoa(s.cfg.Size), "appnum", "0", "spawner-jobid", "",
			"debugged", "FALSE", "pmiverbose", "FALSE"), false
	case "job-getid":
		return formatV2("cmd", "job-getid-response", "rc", "0", "jobid", s.cfg.JobID), false
	case "info-getjobattr":
		v, ok := s.get(req["key"])
		return formatV2("cmd", "info-getjobattr-response", "rc", "0", "found", found(ok), "value", v), false
	case "info-putnodeattr":
		s.putNode(req["key"], req["value"])
		return formatV2("cmd", "info-putnodeattr-response", "rc", "0"), false
	case "info-getnodeattr":
		v, ok := s.getNode(req["key"], req["wait"] == "TRUE")
		return formatV2("cmd", "info-getnodeattr-response", "rc", "0", "found", found(ok), "value", v), false
	case "kvs-put":
		s.put(req["key"], req["value"])
		return formatV2("cmd", "kvs-put-response", "rc", "0"), false
	case "kvs-fence":
		if err := s.enterFence(); err != nil {
			return formatV2("cmd", "kvs-fence-response", "rc", "-1", "errmsg", err.Error()), true
		}
		return formatV2("cmd", "kvs-fence-response", "rc", "0"), false
	case "kvs-get":
		v, ok := s.get(req["key"])
		return formatV2("cmd", "kvs-get-response", "rc", "0", "found", found(ok), "value", v), false
	case "finalize":
		return formatV2("cmd", "finalize-response", "rc", "0"), true
	case "abort":
		s.abort(rank, 1, req["msg"])
		return nil, true
	}
	return formatV2("cmd", cmd+"-response", "rc", "-1", "errmsg", "unsupported command "+cmd), false
}

// putNode sets a node attribute (shared by the node's tasks at once).
func (s *Server) putNode(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.node[key] = value
	close(s.nodeCh)
	s.nodeCh = make(chan struct{})
}

// getNode reads a node attribute, waiting for it to be put when asked.
func (s *Server) getNode(key string, wait bool) (string, bool) {
	for {
		s.mu.Lock()
		v, ok := s.node[key]
		ch := s.nodeCh
		s.mu.Unlock()
		if ok || !wait {
			return v, ok
		}
		select {
		case <-ch:
		case <-s.ctx.Done():
			return "", false
		}
	}
}
