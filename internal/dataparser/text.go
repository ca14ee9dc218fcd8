package dataparser

import (
	"strconv"
	"strings"
	"time"
)

// Records is scontrol's one-line text (`scontrol -o show res`, `show
// lic`), one record a line, as KEY=VALUE maps. The controller renders
// reservations and licenses as text; their data_parser records are read
// back from it.
func Records(text string) []map[string]string {
	var out []map[string]string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, keyValues(line))
	}
	return out
}

// keyValues splits "A=1 B=x y C=3" on the spaces before a KEY=: a value
// may hold spaces (a reason) but not a "WORD=" after one.
func keyValues(line string) map[string]string {
	m := map[string]string{}
	key := ""
	for _, w := range strings.Fields(line) {
		k, v, ok := strings.Cut(w, "=")
		if ok && k != "" && !strings.ContainsAny(k, ",:") {
			key = k
			m[key] = v
			continue
		}
		if key != "" {
			m[key] += " " + w
		}
	}
	return m
}

// textValue is a scontrol value with (null) as empty.
func textValue(m map[string]string, k string) string {
	if v := m[k]; v != "(null)" {
		return v
	}
	return ""
}

func textInt(m map[string]string, k string) int64 {
	n, _ := strconv.ParseInt(m[k], 10, 64)
	return n
}

// textTime reads scontrol's local time stamp (2026-11-26T23:47:18).
func textTime(m map[string]string, k string) Num {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", m[k], time.Local)
	if err != nil {
		return N(0)
	}
	return N(t.Unix())
}

// Reservations is the data of `scontrol show reservation --json` from
// `scontrol -o show res` records.
func Reservations(recs []map[string]string, now time.Time) Obj {
	list := []any{}
	for _, m := range recs {
		flags := []any{}
		if f := textValue(m, "Flags"); f != "" {
			flags = Strings(strings.Split(f, ",")...)
		}
		list = append(list, Obj{
			{"accounts", textValue(m, "Accounts")},
			{"burst_buffer", textValue(m, "BurstBuffer")},
			{"core_count", textInt(m, "CoreCnt")},
			{"core_specializations", []any{}},
			{"end_time", textTime(m, "EndTime")},
			{"features", textValue(m, "Features")},
			{"flags", flags},
			{"groups", textValue(m, "Groups")},
			{"licenses", textValue(m, "Licenses")},
			{"max_start_delay", textInt(m, "MaxStartDelay")},
			{"name", m["ReservationName"]},
			{"node_count", textInt(m, "NodeCnt")},
			{"node_list", textValue(m, "Nodes")},
			{"partition", textValue(m, "PartitionName")},
			{"purge_completed", Obj{{"time", N(300)}}},
			{"start_time", textTime(m, "StartTime")},
			{"watts", Obj{}},
			{"tres", textValue(m, "TRES")},
			{"users", textValue(m, "Users")},
		})
	}
	return Obj{{"reservations", list}, {"last_update", Time(now)}}
}

// Licenses is the data of `scontrol show license --json` from `scontrol
// -o show lic` records.
func Licenses(recs []map[string]string, now time.Time) Obj {
	list := []any{}
	for _, m := range recs {
		list = append(list, Obj{
			{"LicenseName", m["LicenseName"]},
			{"Total", textInt(m, "Total")},
			{"Used", textInt(m, "Used")},
			{"Free", textInt(m, "Free")},
			{"Remote", m["Remote"] == "yes"},
			{"Reserved", textInt(m, "Reserved")},
			{"LastConsumed", textInt(m, "LastConsumed")},
			{"LastDeficit", textInt(m, "LastDeficit")},
			{"LastUpdate", textTime(m, "LastUpdate").N},
		})
	}
	return Obj{{"licenses", list}, {"last_update", Time(now)}}
}
