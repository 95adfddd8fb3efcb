package compute

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// Each prepull entry is an image or an environment reference, named by
// its index when it is neither.
func TestValidatePrepullImages(t *testing.T) {
	for _, ok := range [][]string{
		nil,
		{"python:3.11", "localhost:5000/team/train:3", "azureml:sklearn-env@latest", "azureml:train:2",
			"azureml://registries/azureml/environments/sklearn-1.5/labels/latest"},
	} {
		if err := ValidatePrepullImages(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, c := range []struct {
		list  []string
		field string
		says  string
	}{
		{[]string{"python:3.11", "azureml:"}, "prepull_images[1]", "names no version"},
		{[]string{"python:3.11 "}, "prepull_images[0]", "spaces"},
		{[]string{"UPPER/case"}, "prepull_images[0]", "lower-case"},
		{[]string{"a:1", "a:1"}, "prepull_images[1]", "twice"},
		{make([]string, MaxPrepullImages+1), "prepull_images", "at most"},
	} {
		err := ValidatePrepullImages(c.list)
		e, ok := err.(*core.Error)
		if !ok || e.Field != c.field || e.Code != core.EINVALID || !strings.Contains(e.Message, c.says) {
			t.Errorf("%q: %v, want EINVALID on %s saying %q", c.list, err, c.field, c.says)
		}
	}
}

// prepull_images is a key of the cluster document.
func TestDecodePrepullImages(t *testing.T) {
	spec, err := DecodeComputeSpec([]byte(`{"name":"cpu","type":"amlcompute","prepull_images":["python:3.11"]}`))
	if err != nil || len(spec.PrepullImages) != 1 || spec.PrepullImages[0] != "python:3.11" {
		t.Fatalf("%+v, %v", spec, err)
	}
}
