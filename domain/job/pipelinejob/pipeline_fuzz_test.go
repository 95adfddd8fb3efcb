package pipelinejob_test

import (
	"encoding/json"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// FuzzPipelineSpec: no pipeline or component document (sweep steps and
// pipeline components among them) panics decoding,
// normalising, building the graph, deciding Ready or resolving a step;
// every refusal is an EINVALID error naming a field; an accepted
// pipeline's order holds every step once, after its dependencies.
func FuzzPipelineSpec(f *testing.F) {
	three, _ := json.Marshal(threeSteps())
	comp, _ := json.Marshal(jobtest.TrainComponent())
	sweep, _ := json.Marshal(sweepThenPredict())
	nested, _ := json.Marshal(twoModels())
	parallel, _ := json.Marshal(irisParallel())
	for _, s := range [][]byte{three, comp, sweep, nested, parallel,
		[]byte(`{"type":"parallel","input_data":"${{inputs.d}}","inputs":{"d":{"type":"mltable"}},"task":{"code":".","entry_script":"s.py"},"partition_keys":["a"]}`), []byte(``), []byte(`null`), []byte(`{"type":"pipeline"}`),
		// Hostile parallel steps: sizes and counts past their bounds, an
		// entry script leaving its folder, an append file with folders.
		[]byte(`{"type":"pipeline","compute":"cpu","jobs":{"p":{"type":"parallel","input_data":"${{inputs.d}}","inputs":{"d":{"type":"uri_folder","path":"azureml://datastores/x/paths/y"}},"outputs":{"o":{"type":"uri_folder"}},"mini_batch_size":"99999999999999999999tb","max_concurrency_per_instance":-7,"error_threshold":-9,"mini_batch_error_threshold":1e309,"retry_settings":{"max_retries":2147483648,"timeout":-1},"logging_level":"\u0000","task":{"type":"run_function","code":".","entry_script":"../../etc/x.py","append_row_to":"${{outputs.o}}","program_arguments":"--a $(id)"},"append_row_file":"../p.csv"}}}`),
		[]byte(`{"type":"pipeline","jobs":{"p":{"type":"parallel","input_data":"${{parent.inputs.d}}","partition_keys":["a","a",""],"task":{"type":"model","entry_script":"s.py"},"resources":{"instance_count":0}}},"inputs":{"d":{"type":"mltable"}}}`),
		[]byte(`{"type":"pipeline","jobs":{"a":{"command":"x ${{inputs.i}}","compute":"cpu","inputs":{"i":"${{parent.jobs.a.outputs.o}}"},"outputs":{"o":null}}}}`),
		[]byte(`{"type":"pipeline","compute":"cpu","jobs":{"a":{"component":"azureml:c@latest","inputs":{"i":{"path":"${{parent.inputs.x}}"}}}},"inputs":{"x":1}}`),
		[]byte(`{"type":"pipeline","compute":"cpu","jobs":{"a":{"component":{"command":"$[[x ${{inputs.i}}","inputs":{"i":{"type":"integer","min":3}}}}}}`),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if c, err := paralleljob.DecodeComponent(doc, ""); err != nil {
			coretest.FuzzCheckError(t, "DecodeComponent", doc, err)
		} else if err := paralleljob.NormalizeComponent(c, false); err != nil {
			coretest.FuzzCheckError(t, "NormalizeComponent", doc, err)
		}
		spec, err := pipelinejob.DecodePipelineSpec(doc)
		if err != nil {
			coretest.FuzzCheckError(t, "DecodePipelineSpec", doc, err)
			return
		}
		if err := pipelinejob.NormalizePipelineSpec(spec); err != nil {
			coretest.FuzzCheckError(t, "NormalizePipelineSpec", doc, err)
			return
		}
		g, err := pipelinejob.NewPipelineGraph(spec)
		if err != nil {
			t.Fatalf("a normalised pipeline has no graph: %v", err)
		}
		pos := map[string]int{}
		for i, s := range g.Order() {
			pos[s] = i
		}
		if len(pos) != len(spec.Jobs) {
			t.Fatalf("order %v does not hold the %d steps once each", g.Order(), len(spec.Jobs))
		}
		states := map[string]string{}
		for s := range spec.Jobs {
			for _, d := range g.Dependencies(s) {
				if pos[d] >= pos[s] {
					t.Fatalf("step %s ordered before its dependency %s", s, d)
				}
			}
			states[s] = job.JobFailed
		}
		g.Ready(nil)
		if p := g.Ready(states); !p.Done || p.Status != job.JobFailed {
			t.Fatalf("every step failed: %+v", p)
		}
		for _, s := range g.Order() {
			if spec.Jobs[s].Sweep != nil {
				_, _ = g.ResolveSweep(s, pipelinejob.PipelineRun{})
				continue
			}
			_, _ = g.Resolve(s, pipelinejob.PipelineRun{})
		}
	})
}
