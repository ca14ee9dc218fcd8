package pmi

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PMI-1's wire protocol: one line per message, space-separated key=value
// words, the first "cmd=NAME" (MPICH's simple PMI client).

// parseV1 reads one PMI-1 line into its words.
func parseV1(line string) map[string]string {
	out := map[string]string{}
	for _, w := range strings.Fields(line) {
		k, v, _ := strings.Cut(w, "=")
		out[k] = v
	}
	return out
}

// serveV1 answers a PMI-1 client after its init.
func (s *Server) serveV1(rank int, r *bufio.Reader, w io.Writer) {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		req := parseV1(line)
		reply, last := s.v1(rank, req)
		if reply != "" {
			if _, err := io.WriteString(w, reply+"\n"); err != nil {
				return
			}
		}
		if last {
			return
		}
	}
}

// v1 answers one request; last ends the conversation.
func (s *Server) v1(rank int, req map[string]string) (reply string, last bool) {
	switch req["cmd"] {
	case "get_maxes":
		return fmt.Sprintf("cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d", kvsNameMax, keyLenMax, valLenMax), false
	case "get_appnum":
		return "cmd=appnum rc=0 appnum=0", false
	case "get_my_kvsname":
		return "cmd=my_kvsname rc=0 kvsname=" + s.cfg.JobID, false
	case "get_universe_size":
		return "cmd=universe_size rc=0 size=" + strconv.Itoa(s.cfg.Size), false
	case "put":
		if len(req["key"]) > keyLenMax || len(req["value"]) > valLenMax {
			return "cmd=put_result rc=-1 msg=key_or_value_too_long", false
		}
		s.put(req["key"], req["value"])
		return "cmd=put_result rc=0", false
	case "barrier_in":
		if err := s.enterFence(); err != nil {
			return "", true
		}
		return "cmd=barrier_out rc=0", false
	case "get":
		if v, ok := s.get(req["key"]); ok {
			return "cmd=get_result rc=0 value=" + v, false
		}
		return "cmd=get_result rc=-1 msg=key_" + req["key"] + "_not_found", false
	case "finalize":
		return "cmd=finalize_ack rc=0", true
	case "abort":
		code, _ := strconv.Atoi(req["exitcode"])
		s.abort(rank, code, "")
		return "", true
	}
	return "cmd=" + req["cmd"] + "_result rc=-1 msg=unsupported_command", false
}
