package entitydoc

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// A node decoded from a cached document equals one decoded afresh, keeps
// every field stored outside the document (whatever fields are added
// later), and shares nothing with the cache: changing it changes no later
// read.
func TestNodeDocCache(t *testing.T) {
	ready := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	orig := &node.Node{ID: "cpu-n1", Compute: "cpu", State: node.NodeIdle, VCPUs: 4, ReadyOn: &ready, IdleSince: &ready}
	doc, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	// Every field the document leaves out gets a distinct value, as if
	// scanned from its column.
	scanned := func() node.Node {
		var n node.Node
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
		if err := DecodeNode(doc, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %+v\nwant %+v", round, got, want)
		}
		// Changes to what a caller read stay with it.
		*got.ReadyOn = got.ReadyOn.Add(time.Hour)
		got.State = node.NodeRunning
	}
}

// The cache forgets the documents no longer read (a node's earlier states,
// nodes gone) within a few turns, and keeps those read on every pass.
func TestNodeDocCacheForgetsUnreadDocuments(t *testing.T) {
	docOf := func(id string, state string) []byte {
		b, err := json.Marshal(&node.Node{ID: id, Compute: "cpu", State: state})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	size := func() int {
		nodeDocs.mu.Lock()
		defer nodeDocs.mu.Unlock()
		n := len(nodeDocs.cur)
		for k := range nodeDocs.old {
			if _, ok := nodeDocs.cur[k]; !ok {
				n++
			}
		}
		return n
	}
	var live [][]byte
	for i := range 300 {
		id := fmt.Sprintf("cpu-n%d", i)
		var n node.Node
		// Each node was preparing before it was idle.
		if err := DecodeNode(docOf(id, node.NodePreparing), &n); err != nil {
			t.Fatal(err)
		}
		live = append(live, docOf(id, node.NodeIdle))
	}
	// Passes that read the idle documents only.
	for range 60 {
		for _, doc := range live {
			var n node.Node
			if err := DecodeNode(doc, &n); err != nil {
				t.Fatal(err)
			}
			if n.State != node.NodeIdle {
				t.Fatalf("decoded state %q, want idle", n.State)
			}
		}
	}
	if got := size(); got < len(live) || got > len(live)+len(live)/2 {
		t.Errorf("the cache holds %d documents after passes over %d nodes, each of which had an earlier one: want the %d read, and few others", got, len(live), len(live))
	}
	for _, doc := range live {
		if nodeDocGet(sha256.Sum256(doc)) == nil {
			t.Fatal("a document read on every pass left the cache")
		}
	}
}
