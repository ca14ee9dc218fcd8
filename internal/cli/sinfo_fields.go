package cli

import (
	"strconv"
	"strings"
)

// Fields of sinfo -O that have no %-letter of -o.
const (
	sfAllocMem byte = iota + 1
	sfGresUsed
	sfStateComplete
	sfPreemptMode
	sfPriorityJobFactor
	sfComment
	sfExtra
	sfAllocNodes
	sfCluster
)

// sinfoFieldNames maps sinfo -O names (sinfo(1), matched without case) to
// their -o letter or one of the sf fields.
var sinfoFieldNames = map[string]byte{
	"allocmem": sfAllocMem, "allocnodes": sfAllocNodes, "available": 'a', "cluster": sfCluster,
	"comment": sfComment, "cores": 'Y', "cpus": 'c', "cpusload": 'O', "cpusstate": 'C', "defaulttime": 'L',
	"disk": 'd', "extra": sfExtra, "features": 'f', "features_act": 'b', "freemem": 'e', "gres": 'G',
	"gresused": sfGresUsed, "groups": 'g', "maxcpuspernode": 'B', "memory": 'm', "nodeaddr": 'o', "nodeai": 'A',
	"nodeaiot": 'F', "nodehost": 'n', "nodelist": 'N', "nodes": 'D', "oversubscribe": 'h', "partition": 'P',
	"partitionname": 'R', "preemptmode": sfPreemptMode, "priorityjobfactor": sfPriorityJobFactor,
	"prioritytier": 'p', "priority": 'p', "reason": 'E', "root": 'r', "size": 's', "socketcorethread": 'z',
	"sockets": 'X', "statecompact": 't', "statelong": 'T', "statecomplete": sfStateComplete, "threads": 'Z',
	"time": 'l', "timestamp": 'H', "user": 'u', "userlong": 'U', "version": 'V', "weight": 'w',
}

// sinfoFieldHeaders are the -O headers: the -o ones, but OVERSUBSCRIBE
// in full and the fields -o lacks.
var sinfoFieldHeaders = func() map[byte]string {
	h := map[byte]string{'h': "OVERSUBSCRIBE", sfAllocMem: "ALLOCMEM", sfGresUsed: "GRES_USED",
		sfStateComplete: "STATECOMPLETE", sfPreemptMode: "PREEMPT_MODE", sfPriorityJobFactor: "PRIO_JOB_FACTOR",
		sfComment: "COMMENT", sfExtra: "EXTRA", sfAllocNodes: "ALLOCNODES", sfCluster: "CLUSTER"}
	for k, v := range sinfoHeaders {
		if _, ok := h[k]; !ok {
			h[k] = v
		}
	}
	return h
}()

// parseSinfoFields parses -O "type[:[.][size][suffix]],...": each field
// 20 characters wide unless sized, left-justified unless '.'. Unknown
// names are returned (sinfo reports them and prints the rest).
func parseSinfoFields(spec string) (items []fmtItem, bad []string) {
	for _, f := range strings.Split(spec, ",") {
		if f == "" {
			continue
		}
		name, opt, _ := strings.Cut(f, ":")
		c, ok := sinfoFieldNames[strings.ToLower(name)]
		if !ok {
			bad = append(bad, name)
			continue
		}
		it := fmtItem{field: c, width: 20}
		if strings.HasPrefix(opt, ".") {
			it.right, opt = true, opt[1:]
		}
		digits := len(opt) - len(strings.TrimLeft(opt, "0123456789"))
		if digits > 0 {
			it.width, _ = strconv.Atoi(opt[:digits])
			it.width = min(it.width, maxFieldWidth)
		}
		items = append(items, it)
		if suffix := opt[digits:]; suffix != "" {
			items = append(items, fmtItem{lit: suffix})
		}
	}
	return items, bad
}
