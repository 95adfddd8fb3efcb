package blobapi

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// byteRange is an inclusive range of a blob's bytes.
type byteRange struct{ start, end int64 }

// parseRange reads x-ms-range (or Range): bytes=<start>-[<end>], clipped
// to size. ok is false when the request asks for no range; an error is
// InvalidRange (a range outside the blob, or not one range).
func parseRange(r *http.Request, size int64) (br byteRange, ok bool, err error) {
	v := r.Header.Get("x-ms-range")
	if v == "" {
		v = r.Header.Get("Range")
	}
	if v == "" {
		return byteRange{}, false, nil
	}
	invalid := fail(http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "the range %q is not bytes=<start>-[<end>] within the blob's %d bytes", v, size)
	spec, found := strings.CutPrefix(v, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return byteRange{}, false, invalid
	}
	a, b, _ := strings.Cut(spec, "-")
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 || start >= size {
		return byteRange{}, false, invalid
	}
	end := size - 1
	if b != "" {
		e, err := strconv.ParseInt(b, 10, 64)
		if err != nil || e < start {
			return byteRange{}, false, invalid
		}
		end = min(e, size-1)
	}
	return byteRange{start, end}, true, nil
}

// getBlob answers Get Blob (body true) and Get Blob Properties.
func (h *Handler) getBlob(w http.ResponseWriter, r *http.Request, container, name string, body bool) error {
	ws, err := h.authorize(r, container, name, 'r')
	if err != nil {
		return err
	}
	if !body {
		b, err := h.Svc.Properties(r.Context(), ws, container, name)
		if err != nil {
			return err
		}
		writeBlobHeaders(w, b, true)
		w.Header().Set("Content-Length", strconv.FormatInt(b.Size, 10))
		if b.ContentMD5 != "" {
			w.Header().Set("Content-MD5", b.ContentMD5)
		}
		w.WriteHeader(http.StatusOK)
		return nil
	}
	b, rc, err := h.Svc.Open(r.Context(), ws, container, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	br, ranged, err := parseRange(r, b.Size)
	if err != nil {
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(b.Size, 10))
		return err
	}
	writeBlobHeaders(w, b, true)
	if !ranged {
		w.Header().Set("Content-Length", strconv.FormatInt(b.Size, 10))
		if b.ContentMD5 != "" {
			w.Header().Set("Content-MD5", b.ContentMD5)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, rc)
		return nil
	}
	if err := skip(rc, br.start); err != nil {
		return err
	}
	n := br.end - br.start + 1
	if b.ContentMD5 != "" {
		w.Header().Set("x-ms-blob-content-md5", b.ContentMD5)
	}
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(br.start, 10)+"-"+strconv.FormatInt(br.end, 10)+"/"+strconv.FormatInt(b.Size, 10))
	w.WriteHeader(http.StatusPartialContent)
	_, _ = io.CopyN(w, rc, n)
	return nil
}

// skip moves r past n bytes: a seek where the file store's reader can,
// else a read.
func skip(r io.Reader, n int64) error {
	if s, ok := r.(io.Seeker); ok {
		_, err := s.Seek(n, io.SeekStart)
		return err
	}
	_, err := io.CopyN(io.Discard, r, n)
	return err
}
