package arm_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
)

// FuzzJobDocument: whatever a client PUTs as a job, the translation never
// panics; a refusal is EINVALID (or ENOTIMPLEMENTED for code without code
// assets) naming a field, and what it accepts is a JSON document.
func FuzzJobDocument(f *testing.F) {
	for _, name := range []string{"command.json", "sweep.json", "pipeline.json"} {
		b, err := os.ReadFile("testdata/jobs/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"properties":{"jobType":"Sweep","searchSpace":{"a":["choice",[]]}}}`))
	f.Add([]byte(`{"properties":{"jobType":"Pipeline","jobs":{"a":{"inputs":{"x":{"job_input_type":"uri_file","uri":"/subscriptions/s/x"}}}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := armjob.JobDocument(context.Background(), "default", "j", body, nil)
		if err != nil {
			if c := core.ErrorCode(err); (c != core.EINVALID && c != core.ENOTIMPLEMENTED) || (c == core.EINVALID && core.ErrorField(err) == "") {
				t.Fatalf("%s: %v (code %s, field %q)", body, err, c, core.ErrorField(err))
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil || m["name"] != "j" {
			t.Fatalf("%s: document %s: %v", body, doc, err)
		}
	})
}
