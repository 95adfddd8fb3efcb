package batch

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
)

// FuzzBatchDocuments: no endpoint, deployment or invocation document
// panics decoding or validating; every refusal is an EINVALID error
// naming what is wrong; what is accepted is accepted again as decoded
// (validation settles it), and an accepted deployment's invocation is
// a parallel job with the deployment's scoring script and settings.
func FuzzBatchDocuments(f *testing.F) {
	for _, s := range []string{
		modelDeployment, ``, `null`, `[]`, `{"name":"ep1"}`,
		`{"name":"ep1","description":"d","tags":{"a":"b"},"auth_mode":"aad_token","defaults":{"deployment_name":"dep1"}}`,
		`{"name":"dep1","endpoint_name":"ep1","model":"azureml:m@latest","code_configuration":{"code":"azureml:c:1","scoring_script":"s.py"},"compute":"c","mini_batch_size":"10mb","environment_variables":{"A":1}}`,
		`{"name":"dep1","endpoint_name":"ep1","model":{"name":"m","version":"1"},"code_configuration":{"code":"x","scoring_script":"../s.py"},"compute":"c","settings":{"output_action":"summary_only","retry_settings":{"max_retries":-1,"timeout":-5},"error_threshold":-2,"mini_batch_size":"-1kb","logging_level":"loud"}}`,
		`{"name":"dep1","endpoint_name":"ep1","model":"azureml:m:1","code_configuration":{"code":"x","scoring_script":"s.py"},"compute":"c","settings":{"output_file_name":"a\u0000b","max_concurrency_per_instance":1e300},"resources":{"instance_count":-1}}`,
		`{"name":"dép","endpoint_name":"` + "\xff\xfe" + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if e, err := DecodeEndpoint(doc); err != nil {
			coretest.FuzzCheckError(t, "DecodeEndpoint", doc, err)
		} else if err := ValidateEndpoint(e); err != nil {
			t.Fatalf("a decoded endpoint is refused again: %v (document %q)", err, doc)
		}
		d, err := DecodeDeployment(doc)
		if err != nil {
			coretest.FuzzCheckError(t, "DecodeDeployment", doc, err)
			return
		}
		if err := ValidateDeployment(d); err != nil {
			t.Fatalf("a decoded deployment is refused again: %v (document %q)", err, doc)
		}
		spec := InvocationJob(&Endpoint{Name: d.EndpointName}, d, &Invocation{Input: Input{Path: "azureml://datastores/workspaceblobstore/paths/x"}})
		if spec.Parallel == nil || spec.Parallel.EntryScript != d.CodeConfiguration.ScoringScript || spec.Command != job.ParallelCommand("") {
			t.Fatalf("the invocation of %q is not the deployment's parallel job: %+v", doc, spec)
		}
	})
}
