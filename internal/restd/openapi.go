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
		{Key: "openapi", Val: "3.0.3"},
		{Key: "info", Val: dataparser.Obj{{Key: "title", Val: "Sluice REST API (slurmrestd " + api.SlurmRelease + " compatible)"},
			{Key: "version", Val: api.SlurmRelease}}},
		{Key: "paths", Val: out},
		{Key: "components", Val: dataparser.Obj{{Key: "securitySchemes", Val: dataparser.Obj{
			{Key: "user", Val: dataparser.Obj{{Key: "type", Val: "apiKey"}, {Key: "in", Val: "header"}, {Key: "name", Val: "X-SLURM-USER-NAME"}}},
			{Key: "token", Val: dataparser.Obj{{Key: "type", Val: "apiKey"}, {Key: "in", Val: "header"}, {Key: "name", Val: "X-SLURM-USER-TOKEN"}}},
		}}}},
		{Key: "security", Val: []any{dataparser.Obj{{Key: "user", Val: []any{}}, {Key: "token", Val: []any{}}}}},
	}
}

// operation describes one route.
func operation(rt route) dataparser.Obj {
	params := []any{}
	for _, pp := range rt.params {
		o := dataparser.Obj{{Key: "name", Val: pp.name}, {Key: "in", Val: pp.in}, {Key: "description", Val: pp.desc},
			{Key: "required", Val: pp.in == "path"}, {Key: "schema", Val: dataparser.Obj{{Key: "type", Val: "string"}}}}
		params = append(params, o)
	}
	op := dataparser.Obj{{Key: "summary", Val: rt.summary}, {Key: "operationId", Val: operationID(rt)}, {Key: "parameters", Val: params}}
	if rt.body != "" {
		op = append(op, dataparser.Field{Key: "requestBody", Val: dataparser.Obj{{Key: "required", Val: true},
			{Key: "content", Val: dataparser.Obj{{Key: "application/json", Val: dataparser.Obj{{Key: "schema", Val: ref(rt.body)}}}}}}})
	}
	op = append(op, dataparser.Field{Key: "responses", Val: dataparser.Obj{
		{Key: "200", Val: dataparser.Obj{{Key: "description", Val: "success"}, {Key: "content", Val: dataparser.Obj{{Key: "application/json", Val: dataparser.Obj{{Key: "schema", Val: ref(rt.resp)}}}}}}},
		{Key: "default", Val: dataparser.Obj{{Key: "description", Val: "failure"}, {Key: "content", Val: dataparser.Obj{{Key: "application/json", Val: dataparser.Obj{{Key: "schema", Val: ref(rt.resp)}}}}}}},
	}})
	return op
}

func ref(name string) dataparser.Obj {
	return dataparser.Obj{{Key: "$ref", Val: "#/components/schemas/" + name}}
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
