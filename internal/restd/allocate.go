package restd

import (
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// allocateOp is slurmrestd's job/allocate.
func allocateOp() op {
	return op{method: "POST", path: "/slurm/VERSION/job/allocate", summary: "allocate resources without a script (salloc --no-shell)",
		body: "v0.0.42_job_alloc_req", resp: "v0.0.42_openapi_job_alloc_resp", h: postAllocate}
}

// allocScript is the waiting script of an allocation, as salloc submits
// one: the marker tells accounting it has no batch step.
const allocScript = "#!/bin/sh\n# restd " + api.AllocationMarker +
	" (until cancelled or its time limit)\nwhile :; do sleep 3600; done\n"

// postAllocate is salloc --no-shell: {"job": {job_desc_msg}} becomes an
// allocation with no holder, which stays until it is cancelled or reaches
// its time limit. Members other than "job" are ignored with slurmrestd's
// warning (oracle: a "script" is).
func postAllocate(c *call) reply {
	f, ok := readBody(c.r)
	if !ok {
		return badQuery
	}
	raw, has := f["job"]
	if _, het := f["hetjob"]; het {
		return parseFailure(nil, "Sluice has no heterogeneous jobs: allocate one \"job\"", "op_handler_alloc_job")
	}
	if !has {
		return parseFailure(nil, `Specifing either "job" or "hetjob" fields are required to allocate job`, "op_handler_alloc_job")
	}
	var warns []dataparser.Warning
	for k, v := range f {
		if k != "job" {
			warns = append(warns, dataparser.Warning{Description: unknownField("#/", k, v, "DATA_PARSER_JOB_ALLOC_REQ"), Source: "#/" + k + "/"})
		}
	}
	job := fields{}
	if err := jsonObject(raw, &job); err != nil {
		return badQuery
	}
	spec, w := jobDesc(job, "#/job/")
	warns = append(warns, w...)
	spec.Allocation, spec.NoShell = true, true
	spec.Script = allocScript
	spec.Output, spec.Error = "/dev/null", "/dev/null"
	if spec.WorkDir == "" {
		spec.WorkDir = "/"
	}
	res, err := c.cl.Submit(c.ctx, api.SubmitRequest{Spec: spec, Interactive: true})
	if err != nil {
		return failed(nil, callError(err, "Job allocation request failed", "slurm_allocate_resources_blocking()"))
	}
	return reply{data: dataparser.Obj{{Key: "job_id", Val: int64(res.JobID)}, {Key: "job_submit_user_msg", Val: ""}}, warns: warns}
}
