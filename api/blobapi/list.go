package blobapi

import (
	"encoding/xml"
	"net/http"
	"sort"
	"strings"

	domblobs "github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/service/blobs"
)

// enumeration is List Blobs' answer (Azure's EnumerationResults).
type enumeration struct {
	XMLName         xml.Name    `xml:"EnumerationResults"`
	ServiceEndpoint string      `xml:"ServiceEndpoint,attr"`
	ContainerName   string      `xml:"ContainerName,attr"`
	Prefix          string      `xml:"Prefix,omitempty"`
	Marker          string      `xml:"Marker,omitempty"`
	MaxResults      int         `xml:"MaxResults,omitempty"`
	Delimiter       string      `xml:"Delimiter,omitempty"`
	Blobs           listedBlobs `xml:"Blobs"`
	NextMarker      string      `xml:"NextMarker"`
}

type listedBlobs struct {
	Prefixes []blobPrefix `xml:"BlobPrefix"`
	Blobs    []listedBlob `xml:"Blob"`
}

type blobPrefix struct {
	Name string `xml:"Name"`
}

type listedBlob struct {
	Name       string         `xml:"Name"`
	Properties blobProperties `xml:"Properties"`
	Metadata   *metadataXML   `xml:"Metadata,omitempty"`
}

type blobProperties struct {
	CreationTime       string `xml:"Creation-Time"`
	LastModified       string `xml:"Last-Modified"`
	Etag               string `xml:"Etag"`
	ContentLength      int64  `xml:"Content-Length"`
	ContentType        string `xml:"Content-Type"`
	ContentEncoding    string `xml:"Content-Encoding"`
	ContentLanguage    string `xml:"Content-Language"`
	ContentMD5         string `xml:"Content-MD5"`
	CacheControl       string `xml:"Cache-Control"`
	ContentDisposition string `xml:"Content-Disposition"`
	BlobType           string `xml:"BlobType"`
	AccessTier         string `xml:"AccessTier"`
	AccessTierInferred bool   `xml:"AccessTierInferred"`
	LeaseStatus        string `xml:"LeaseStatus"`
	LeaseState         string `xml:"LeaseState"`
	ServerEncrypted    bool   `xml:"ServerEncrypted"`
}

// metadataXML is a blob's metadata as elements named by their keys.
type metadataXML struct{ m map[string]string }

// MarshalXML writes each pair as <key>value</key>, keys in order.
func (m *metadataXML) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	keys := make([]string, 0, len(m.m))
	for k := range m.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := e.EncodeElement(m.m[k], xml.StartElement{Name: xml.Name{Local: k}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, container string) error {
	q := r.URL.Query()
	prefix := q.Get("prefix")
	sas, err := h.Svc.Verify(q, container, prefix, 'l')
	if err != nil {
		return err
	}
	max, err := atoiOr(q.Get("maxresults"), blobs.MaxListResults)
	if err != nil {
		return err
	}
	marker := ""
	if m := q.Get("marker"); m != "" {
		if marker, err = decodeMarker(m); err != nil {
			return err
		}
	}
	delim := q.Get("delimiter")
	withMeta := strings.Contains(q.Get("include"), "metadata")
	out := enumeration{ServiceEndpoint: serviceEndpoint(r), ContainerName: strings.ToLower(container), Prefix: prefix,
		Marker: q.Get("marker"), MaxResults: max, Delimiter: delim}
	if max > blobs.MaxListResults {
		max = blobs.MaxListResults
	}
	count, more := 0, false
	// Pages of the store are read until max entries are listed: with a
	// delimiter, the blobs under one prefix fold into one entry, and the
	// next page starts past them.
	for count < max {
		page, after, err := h.Svc.List(r.Context(), sas.Workspace, container, prefix, marker, max-count)
		if err != nil {
			return err
		}
		folded := false
		for _, b := range page {
			if delim != "" {
				if i := strings.Index(b.Name[len(prefix):], delim); i >= 0 {
					p := b.Name[:len(prefix)+i+len(delim)]
					out.Blobs.Prefixes = append(out.Blobs.Prefixes, blobPrefix{Name: p})
					count++
					// 0xff is no byte of UTF-8 text: past every name under p.
					marker, folded = p+"\xff", true
					break
				}
			}
			out.Blobs.Blobs = append(out.Blobs.Blobs, listed(b, withMeta))
			count++
			marker = b.Name
		}
		more = folded || after != ""
		if !more {
			break
		}
	}
	if more {
		out.NextMarker = encodeMarker(marker)
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	enc, _ := xml.Marshal(out)
	_, _ = w.Write(append([]byte(xml.Header), enc...))
	return nil
}

// serviceEndpoint is the account URL the request reached.
func serviceEndpoint(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if hostStyle(r) {
		return scheme + "://" + r.Host + "/"
	}
	return scheme + "://" + r.Host + "/" + Account + "/"
}

func listed(b *domblobs.Blob, withMeta bool) listedBlob {
	l := listedBlob{Name: b.Name, Properties: blobProperties{
		CreationTime: b.Created.UTC().Format(http.TimeFormat), LastModified: b.Modified.UTC().Format(http.TimeFormat),
		Etag: b.ETag, ContentLength: b.Size, ContentType: b.ContentType, ContentEncoding: b.ContentEncoding,
		ContentLanguage: b.ContentLanguage, ContentMD5: b.ContentMD5, CacheControl: b.CacheControl, ContentDisposition: b.ContentDisposition,
		BlobType: "BlockBlob", AccessTier: "Hot", AccessTierInferred: true, LeaseStatus: "unlocked", LeaseState: "available", ServerEncrypted: true,
	}}
	if withMeta {
		l.Metadata = &metadataXML{m: b.Metadata}
	}
	return l
}
