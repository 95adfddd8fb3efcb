package job

import "testing"

// Keeping a job's artifacts lists them once, never over an output the
// job declared of that name, and without changing the map the job was
// read with (a decision's input).
func TestKeepArtifacts(t *testing.T) {
	declared := map[string]*JobOutput{"model": {Type: InputTypeURIFolder}}
	j := &Job{JobSpec: JobSpec{Name: "j", Outputs: declared}}
	if !KeepArtifacts(j) || len(declared) != 1 {
		t.Fatalf("KeepArtifacts changed the map it was given or kept nothing: %v", declared)
	}
	if !IsKeptArtifacts("j", ArtifactsOutput, j.Outputs[ArtifactsOutput]) || KeepArtifacts(j) {
		t.Errorf("artifacts: %+v (kept twice?)", j.Outputs[ArtifactsOutput])
	}
	own := &Job{JobSpec: JobSpec{Name: "k", Outputs: map[string]*JobOutput{ArtifactsOutput: {Type: InputTypeURIFolder}}}}
	if KeepArtifacts(own) || IsKeptArtifacts("k", ArtifactsOutput, own.Outputs[ArtifactsOutput]) {
		t.Errorf("a declared output named artifacts was replaced: %+v", own.Outputs[ArtifactsOutput])
	}
}
