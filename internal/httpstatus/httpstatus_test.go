package httpstatus

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWriterRemembersStatus(t *testing.T) {
	rr := httptest.NewRecorder()
	w := Wrap(rr)
	if w.Status != http.StatusOK {
		t.Fatalf("Status before WriteHeader = %d", w.Status)
	}
	w.WriteHeader(http.StatusTeapot)
	w.Flush()
	if w.Status != http.StatusTeapot || rr.Code != http.StatusTeapot || !rr.Flushed {
		t.Fatalf("Status %d, written %d, flushed %v", w.Status, rr.Code, rr.Flushed)
	}
	if w.Unwrap() != rr {
		t.Fatal("Unwrap is not the wrapped writer")
	}
}
