package restd

import (
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// pathParam finds {name} in a route's path.
var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// OpenAPI is the description of what this server serves, built from its
// route table: every path, method and parameter. Schemas are referenced
// by the component names Slurm's OpenAPI description gives them; their
// definitions are not included.
func (s *Server) OpenAPI() dataparser.Obj {
	byPath := map[string][]route{}
	var paths []string
	for _, rt := range s.routes {
		if _, ok := byPath[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		byPath[rt.path] = append(byPath[rt.path], rt)
	}
	sort.Strings(paths)
	out := dataparser.Obj{}
	for _, p := range paths {
		ops := dataparser.Obj{}
		for _, rt := range byPath[p] {
			ops = append(ops, dataparser.Field{Key: strings.ToLower(rt.method), Val: operation(rt)})
		}
		out = append(out, dataparser.Field{Key: p, Val: ops})
	}
	return dataparser.Obj{
		{"openapi", "3.0.3"},
		{"info", dataparser.Obj{{"title", "Sluice REST API (slurmrestd " + api.SlurmRelease + " compatible)"},
			{"version", api.SlurmRelease}}},
		{"paths", out},
		{"components", dataparser.Obj{{"securitySchemes", dataparser.Obj{
			{"user", dataparser.Obj{{"type", "apiKey"}, {"in", "header"}, {"name", "X-SLURM-USER-NAME"}}},
			{"token", dataparser.Obj{{"type", "apiKey"}, {"in", "header"}, {"name", "X-SLURM-USER-TOKEN"}}},
		}}}},
		{"security", []any{dataparser.Obj{{"user", []any{}}, {"token", []any{}}}}},
	}
}

// operation describes one route.
func operation(rt route) dataparser.Obj {
	params := []any{}
	for _, pp := range rt.params {
		o := dataparser.Obj{{"name", pp.name}, {"in", pp.in}, {"description", pp.desc},
			{"required", pp.in == "path"}, {"schema", dataparser.Obj{{"type", "string"}}}}
		params = append(params, o)
	}
	op := dataparser.Obj{{"summary", rt.summary}, {"operationId", operationID(rt)}, {"parameters", params}}
	if rt.body != "" {
		op = append(op, dataparser.Field{Key: "requestBody", Val: dataparser.Obj{{"required", true},
			{"content", dataparser.Obj{{"application/json", dataparser.Obj{{"schema", ref(rt.body)}}}}}}})
	}
	op = append(op, dataparser.Field{Key: "responses", Val: dataparser.Obj{
		{"200", dataparser.Obj{{"description", "success"}, {"content", dataparser.Obj{{"application/json", dataparser.Obj{{"schema", ref(rt.resp)}}}}}}},
		{"default", dataparser.Obj{{"description", "failure"}, {"content", dataparser.Obj{{"application/json", dataparser.Obj{{"schema", ref(rt.resp)}}}}}}},
	}})
	return op
}

func ref(name string) dataparser.Obj {
	return dataparser.Obj{{"$ref", "#/components/schemas/" + name}}
}

// operationID names an operation from its method and path, as Slurm's
// description does ("slurm_v0.0.42_get_jobs").
func operationID(rt route) string {
	p := strings.Trim(pathParam.ReplaceAllString(rt.path, ""), "/")
	p = strings.ReplaceAll(strings.Trim(strings.ReplaceAll(p, "//", "/"), "/"), "/", "_")
	parts := strings.SplitN(p, "_", 3)
	if len(parts) == 3 {
		return parts[0] + "_" + parts[1] + "_" + strings.ToLower(rt.method) + "_" + parts[2]
	}
	return strings.ToLower(rt.method) + "_" + p
}

// openAPI serves the description (authenticated like every path, as
// slurmrestd's /openapi/v3).
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(dataparser.JSON(s.OpenAPI()))
}
