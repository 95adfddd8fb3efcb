package pipelinejob_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// TestUndeclaredInputsAreDroppedAndSaid: an input given to a component
// step (a command component or a pipeline component) that the component
// does not declare is dropped, as Azure's SDK drops it (Azure's
// nyc_taxi_data_regression_with_pipeline_component example gives one),
// and the pipeline's warnings name its place; a document cannot claim
// inputs were ignored, and a flood of them is refused.
func TestUndeclaredInputsAreDroppedAndSaid(t *testing.T) {
	d := jobtest.Set(threeSteps(), "jobs.train.inputs.batch", 4)
	spec, err := decodePipeline(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := spec.Jobs["train"].Inputs["batch"]; kept {
		t.Error("the undeclared input reached the step")
	}
	w := pipelinejob.IgnoredWarnings(spec)
	if len(w) != 1 || !strings.Contains(w[0], "jobs.train.inputs.batch is an input its component does not declare: dropped") {
		t.Errorf("warnings %q", w)
	}

	n := twoModels()
	jobtest.Set(n, "jobs.model1.inputs.bogus", 1)
	spec, err = decodePipeline(t, n)
	if err != nil {
		t.Fatal(err)
	}
	if w := pipelinejob.IgnoredWarnings(spec); len(w) != 1 || !strings.Contains(w[0], "jobs.model1.inputs.bogus") {
		t.Errorf("a pipeline component's undeclared input: warnings %q", w)
	}

	// What a shown job says (read only) is not taken from a document.
	if spec, err := decodePipeline(t, jobtest.Set(threeSteps(), "ignored_inputs", []string{"jobs.x.inputs.y"})); err != nil {
		t.Errorf("a document naming ignored_inputs: %v", err)
	} else if len(spec.IgnoredInputs) != 0 {
		t.Errorf("a document naming ignored_inputs: ignored %q, want it read as nothing", spec.IgnoredInputs)
	}

	flood := threeSteps()
	for i := 0; i <= 64; i++ {
		jobtest.Set(flood, fmt.Sprintf("jobs.train.inputs.extra_%d", i), i)
	}
	if _, err := decodePipeline(t, flood); core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "undeclared inputs") {
		t.Errorf("65 undeclared inputs: %v, want refused", err)
	}
}
