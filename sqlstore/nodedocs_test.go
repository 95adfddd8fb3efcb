package sqlstore

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

// A node decoded from a cached document equals one decoded afresh, keeps
// every field stored outside the document (whatever fields are added
// later), and shares nothing with the cache: changing it changes no later
// read.
func TestNodeDocCache(t *testing.T) {
	ready := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	orig := &shoal.Node{ID: "cpu-n1", Compute: "cpu", State: shoal.NodeIdle, VCPUs: 4, ReadyOn: &ready, IdleSince: &ready}
	doc, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	// Every field the document leaves out gets a distinct value, as if
	// scanned from its column.
	scanned := func() shoal.Node {
		var n shoal.Node
		v := reflect.ValueOf(&n).Elem()
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Tag.Get("json") != "-" {
				continue
			}
			switch fv := v.Field(i); fv.Kind() {
			case reflect.String:
				fv.SetString("col-" + f.Name)
			case reflect.Int64, reflect.Int:
				fv.SetInt(int64(40 + i))
			case reflect.Struct:
				fv.Set(reflect.ValueOf(ready.Add(time.Duration(i) * time.Hour)))
			default:
				t.Fatalf("field %s (%s) stored outside the document: teach this test its kind", f.Name, fv.Kind())
			}
		}
		return n
	}
	for round := range 3 { // the first decodes, the others hit the cache
		want := scanned()
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		got := scanned()
		if err := decodeNodeDoc(doc, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %+v\nwant %+v", round, got, want)
		}
		// Changes to what a caller read stay with it.
		*got.ReadyOn = got.ReadyOn.Add(time.Hour)
		got.State = shoal.NodeRunning
	}
}
