package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Attack: expressions are replaced once: a value that writes an
// expression around another (${{${{name}}}}), or a job name that would
// itself read as one, is not expanded again.
func TestExpandJobOnce(t *testing.T) {
	at := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	got, err := ExpandJob([]byte(`{"command": "${{${{name}}}} ${{creation_context.${{name}}}}", "tags": {"${{name}}": "k"}}`), "n-20260301t0200", at)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"command":"${{n-20260301t0200}} ${{creation_context.n-20260301t0200}}","tags":{"${{name}}":"k"}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Attack: a job document of ${{name}} repeated, which the firing's name
// (up to 214 characters) would make over twenty times larger than the
// request that stored it, is refused naming create_job.job rather than
// stored larger at every firing.
func TestExpandJobBounded(t *testing.T) {
	doc := `{"command": "` + strings.Repeat("${{name}}", 100000) + `"}`
	name := FiredJobName(strings.Repeat("a", MaxNameLength), time.Unix(0, 0))
	_, err := ExpandJob([]byte(doc), name, time.Unix(0, 0))
	if core.ErrorField(err) != "create_job.job" || !strings.Contains(core.ErrorMessage(err), "bytes") {
		t.Errorf("err = %v", err)
	}
	if _, err := ExpandJob([]byte(`{"command": "`+strings.Repeat("${{name}}", 1000)+`"}`), name, time.Unix(0, 0)); err != nil {
		t.Errorf("a document within the bound: %v", err)
	}
}
