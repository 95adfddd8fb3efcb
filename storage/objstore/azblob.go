package objstore

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// AzureBlobConfig says how to reach one Azure Blob container (an ADLS
// Gen2 filesystem is reached the same way, through its account's Blob
// endpoint). At most one credential is set; none means anonymous access
// (a public container).
type AzureBlobConfig struct {
	// ServiceURL is the account's Blob service URL, from AzureServiceURL.
	ServiceURL string
	// Container is the container (or ADLS Gen2 filesystem).
	Container string
	// AccountName and AccountKey are a shared-key credential.
	AccountName, AccountKey string
	// SASToken is a shared access signature (with or without its "?").
	SASToken string
	// TenantID, ClientID and ClientSecret are a service principal, which
	// Shoal does not take here (it would reach Microsoft Entra ID).
	TenantID, ClientID, ClientSecret string
	// Dial reaches the network; required.
	Dial Dialer
}

// AzureServiceURL is the Blob service URL of an account as Azure ML's
// datastore YAML gives it: an endpoint holding "://" is the full service
// URL with the account (Azurite and Azure Stack:
// http://10.1.2.3:10000/devstoreaccount1); otherwise endpoint is the DNS
// suffix ("core.windows.net" when empty) and the URL is
// <protocol>://<account>.blob.<endpoint>, where protocol wasbs means
// https (the default).
func AzureServiceURL(account, endpoint, protocol string) (string, error) {
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return "", fmt.Errorf("endpoint %q is not an http(s) URL", endpoint)
		}
		return strings.TrimSuffix(endpoint, "/"), nil
	}
	if account == "" {
		return "", errors.New("account_name is required")
	}
	if endpoint == "" {
		endpoint = "core.windows.net"
	}
	scheme := "https"
	switch protocol {
	case "", "https", "wasbs":
	case "http", "wasb":
		scheme = "http"
	default:
		return "", fmt.Errorf("protocol %q is not one of https, wasbs, http", protocol)
	}
	return fmt.Sprintf("%s://%s.blob.%s", scheme, account, endpoint), nil
}

// azureBlob is a Source over one container.
type azureBlob struct {
	c    *container.Client
	name string // the container's URL without credentials, for messages
}

// NewAzureBlob returns a Source over cfg's container.
func NewAzureBlob(cfg AzureBlobConfig) (Source, error) {
	if cfg.TenantID != "" || cfg.ClientID != "" || cfg.ClientSecret != "" {
		return nil, errorf(ErrUnsupported, nil, "a service principal (tenant_id, client_id, client_secret) is not supported here: Shoal reaches Azure Blob Storage with account_key, sas_token or anonymous access")
	}
	if cfg.Container == "" {
		return nil, errors.New("objstore: no container")
	}
	if cfg.AccountKey != "" && cfg.SASToken != "" {
		return nil, errors.New("objstore: both an account key and a SAS token: give one")
	}
	hc, err := httpClient(cfg.Dial)
	if err != nil {
		return nil, err
	}
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hc,
		Retry:     policy.RetryOptions{MaxRetries: 2, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 2 * time.Second},
		Telemetry: policy.TelemetryOptions{Disabled: true},
	}}
	curl := strings.TrimSuffix(cfg.ServiceURL, "/") + "/" + url.PathEscape(cfg.Container)
	s := &azureBlob{name: curl}
	switch {
	case cfg.AccountKey != "":
		cred, err := container.NewSharedKeyCredential(cfg.AccountName, cfg.AccountKey)
		if err != nil {
			return nil, errorf(ErrDenied, nil, "account_key: not a valid base64 account key")
		}
		s.c, err = container.NewClientWithSharedKeyCredential(curl, cred, opts)
		if err != nil {
			return nil, err
		}
	case cfg.SASToken != "":
		s.c, err = container.NewClientWithNoCredential(curl+"?"+strings.TrimPrefix(cfg.SASToken, "?"), opts)
		if err != nil {
			return nil, errors.New("objstore: the container URL with the SAS token is not a valid URL")
		}
	default:
		s.c, err = container.NewClientWithNoCredential(curl, opts)
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// List lists the container's blobs under prefix.
func (s *azureBlob) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	p := s.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.fail("list "+s.name+"/"+prefix, err)
		}
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil {
				continue
			}
			o := Object{Key: *b.Name}
			if b.Properties != nil {
				if b.Properties.ContentLength != nil {
					o.Size = *b.Properties.ContentLength
				}
				if b.Properties.ETag != nil {
					o.ETag = string(*b.Properties.ETag)
				}
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// Open streams one blob.
func (s *azureBlob) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	resp, err := s.c.NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, 0, s.fail("get "+s.name+"/"+key, err)
	}
	size := int64(-1)
	if resp.ContentLength != nil {
		size = *resp.ContentLength
	}
	return resp.Body, size, nil
}

// Put writes one block blob, streaming it in 4 MiB blocks.
func (s *azureBlob) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.c.NewBlockBlobClient(key).UploadStream(ctx, r, &blockblob.UploadStreamOptions{BlockSize: 4 << 20, Concurrency: 4})
	if err != nil {
		return s.fail("put "+s.name+"/"+key, err)
	}
	return nil
}

// fail turns an SDK error into an Error with Azure's words: the HTTP
// status, the storage error code and its message.
func (s *azureBlob) fail(op string, err error) error {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return transportError(op, err)
	}
	msg := fmt.Sprintf("%s: HTTP %d", op, re.StatusCode)
	if re.ErrorCode != "" {
		msg += " " + re.ErrorCode
	}
	if m := azureMessage(re); m != "" {
		msg += ": " + m
	}
	return errorf(statusKind(re.StatusCode), nil, msg)
}

// azureMessage is the first line of the <Message> of a storage error's
// body ("Server failed to authenticate the request..."), without the
// request ID lines that follow it.
func azureMessage(re *azcore.ResponseError) string {
	if re.RawResponse == nil || re.RawResponse.Body == nil {
		return ""
	}
	body, err := io.ReadAll(io.LimitReader(re.RawResponse.Body, 64<<10))
	if err != nil || len(body) == 0 {
		return ""
	}
	var doc struct {
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(body, &doc) != nil {
		return ""
	}
	m, _, _ := strings.Cut(strings.TrimSpace(doc.Message), "\n")
	return strings.TrimSpace(m)
}
