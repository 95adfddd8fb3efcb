package entitydoc

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
)

// A node decoded from a cached document equals one decoded afresh, keeps
// every field stored outside the document (whatever fields are added
// later), and shares nothing with the cache: changing it changes no later
// read.
func TestNodeDocCache(t *testing.T) {
	ready := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	orig := &node.Node{ID: "cpu-n1", Compute: "cpu", State: node.NodeIdle, VCPUs: 4, ReadyOn: &ready, IdleSince: &ready,
		PullingImages: []string{"ghcr.io/acme/train:1"}, Runtime: &catalog.ContainerRuntimeInfo{Engine: "podman", FreeBytes: 1 << 30, GPUs: []string{"GPU-0"}}}
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
		// Changes to what a caller read stay with it, in place too.
		*got.ReadyOn = got.ReadyOn.Add(time.Hour)
		*got.IdleSince = got.IdleSince.Add(time.Hour)
		got.State = node.NodeRunning
		got.PullingImages[0] = "changed"
		got.Runtime.FreeBytes, got.Runtime.GPUs[0] = 1, "changed"
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

// A shared read returns one record for one document and its columns
// (the cache's), equal to what DecodeNode reads; a column that differs
// (any field stored outside the document, whatever fields are added
// later) gets a record of its own with it; and DecodeNode's copies of a
// shared record share nothing with it.
func TestNodeDocSharedReads(t *testing.T) {
	ready := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	doc, err := json.Marshal(&node.Node{ID: "shared-n1", Compute: "cpu", State: node.NodeIdle, ReadyOn: &ready})
	if err != nil {
		t.Fatal(err)
	}
	cols := node.Node{Workspace: "ws", ProviderRef: "pid-1", JoinTokenHash: "j", CredentialHash: "c", Version: 3,
		JoinTokenExpires: ready.Add(time.Hour), LastHeartbeat: ready.Add(2 * time.Hour)}
	a, err := DecodeNodeShared(doc, &cols)
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeNodeShared(doc, &cols)
	if err != nil || a != b {
		t.Fatalf("two shared reads of one document and its columns: %p, %p (%v); want one record", a, b, err)
	}
	want := cols
	if err := DecodeNode(doc, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*a, want) {
		t.Fatalf("shared read:\n got %+v\nwant %+v", *a, want)
	}
	// A copy changed by its reader leaves the shared record alone.
	cp := cols
	if err := DecodeNode(doc, &cp); err != nil {
		t.Fatal(err)
	}
	*cp.ReadyOn, cp.State = ready.Add(time.Minute), node.NodeRunning
	if !a.ReadyOn.Equal(ready) || a.State != node.NodeIdle {
		t.Fatalf("a copy's change reached the shared record: %+v", *a)
	}
	// A copy read first keeps its columns in the cache, which a shared
	// read of the same columns then shares.
	doc2, err := json.Marshal(&node.Node{ID: "shared-n2", State: node.NodeIdle})
	if err != nil {
		t.Fatal(err)
	}
	first := cols
	if err := DecodeNode(doc2, &first); err != nil {
		t.Fatal(err)
	}
	s1, err1 := DecodeNodeShared(doc2, &cols)
	s2, err2 := DecodeNodeShared(doc2, &cols)
	if err1 != nil || err2 != nil || s1 != s2 || s1.Version != cols.Version {
		t.Fatalf("shared reads after a copy: %p, %p (%v, %v); want one record", s1, s2, err1, err2)
	}
	// The lease alone moved (a heartbeat written): still shared.
	beat := cols
	beat.LastHeartbeat = beat.LastHeartbeat.Add(time.Minute)
	if s3, err := DecodeNodeShared(doc2, &beat); err != nil || s3 != s1 {
		t.Fatalf("a shared read after a heartbeat: %p (%v); want the same record", s3, err)
	}
	// Each column, changed alone, is read as it is.
	v := reflect.ValueOf(cols)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Tag.Get("json") != "-" {
			continue
		}
		// The cache holds the first columns' record again.
		if a, err = DecodeNodeShared(doc, &cols); err != nil || a.Version != cols.Version || a.Workspace != cols.Workspace {
			t.Fatalf("shared read of the first columns: %+v, %v", a, err)
		}
		changed := cols
		fv := reflect.ValueOf(&changed).Elem().Field(i)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(fv.String() + "-new")
		case reflect.Int64, reflect.Int:
			fv.SetInt(fv.Int() + 1)
		case reflect.Struct:
			fv.Set(reflect.ValueOf(fv.Interface().(time.Time).Add(time.Second)))
		default:
			t.Fatalf("field %s (%s) stored outside the document: teach this test its kind", f.Name, fv.Kind())
		}
		got, err := DecodeNodeShared(doc, &changed)
		if err != nil {
			t.Fatal(err)
		}
		if got == a || !reflect.DeepEqual(reflect.ValueOf(*got).Field(i).Interface(), fv.Interface()) {
			t.Errorf("column %s changed: shared read kept the old record or value (%v)", f.Name, reflect.ValueOf(*got).Field(i).Interface())
		}
	}
}
