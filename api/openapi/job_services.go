package openapi

// The application proxy's routes to a running job's services, documented
// beside apiDocs as the instances' are in it.
func init() {
	const p = "/api/v1/workspaces/{ws}/jobs/{name}/nodes/{node}/applications/{svc}/{path}"
	for _, m := range []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"} {
		apiDocs[m+" "+p] = opDoc{summary: "Proxy to a running job's service on a node (its submitter only)"}
	}
}
