package ctld

import "net/http"

// registerPartitionAdmin adds the endpoints behind `scontrol create|update|
// delete partition`.
func (c *Controller) registerPartitionAdmin(mux *http.ServeMux) {}
