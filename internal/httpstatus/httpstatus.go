// Package httpstatus remembers the status code a handler wrote: the
// request log, the API's metrics and its audit of failed requests all
// wrap the response writer with it.
package httpstatus

import "net/http"

// Writer is a response writer that remembers the status code written.
type Writer struct {
	http.ResponseWriter
	// Status is the code written, 200 until WriteHeader is called.
	Status int
}

// Wrap returns a Writer around w.
func Wrap(w http.ResponseWriter) *Writer {
	return &Writer{ResponseWriter: w, Status: http.StatusOK}
}

// WriteHeader remembers code and writes it.
func (s *Writer) WriteHeader(code int) {
	s.Status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the underlying writer: the
// application proxy hijacks connections for WebSockets (Jupyter's
// kernels) and flushes streamed answers through it.
func (s *Writer) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes streaming flushes through.
func (s *Writer) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
