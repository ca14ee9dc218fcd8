package noded

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat is the part of /proc/PID/stat the agent needs.
type procStat struct {
	State     byte   // R, S, D, T, Z, ...
	PGID      int    // process group
	StartTick uint64 // start time in clock ticks since boot
}

// readProcStat parses /proc/PID/stat. The command name may contain spaces
// and parentheses, so fields are counted from the last ')'.
func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(data))
}

func parseProcStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); pgrp is field 5, starttime field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc stat")
	}
	pgid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat")
	}
	return procStat{State: f[0][0], PGID: pgid, StartTick: start}, nil
}

// sameProcess reports whether pid is still the process that had start time
// tick, and not a zombie: a pid reused by another process has a different
// start time.
func sameProcess(pid int, tick uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := readProcStat(pid)
	return err == nil && st.StartTick == tick && st.State != 'Z' && st.State != 'X'
}

// groupStates returns the /proc state letter of every process in the
// process group pgid.
func groupStates(pgid int) map[int]byte {
	out := map[int]byte{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil && st.PGID == pgid {
			out[pid] = st.State
		}
	}
	return out
}
