package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// S3Config says how to reach one bucket of an S3-compatible server
// (MinIO, Ceph's RGW, versitygw, AWS itself): path-style requests to
// EndpointURL, signed with static keys, or anonymous when none are given.
type S3Config struct {
	// EndpointURL is the server's URL (http://10.0.0.5:9000).
	EndpointURL string
	// Bucket is the bucket.
	Bucket string
	// Region signs the requests; us-east-1 when empty.
	Region string
	// AccessKeyID and SecretAccessKey are static credentials.
	AccessKeyID, SecretAccessKey string
	// Dial reaches the network; required.
	Dial Dialer
}

// s3Source is a Source over one bucket.
type s3Source struct {
	c      *s3.Client
	bucket string
	name   string // s3://bucket, for messages
}

// NewS3 returns a Source over cfg's bucket.
func NewS3(cfg S3Config) (Source, error) {
	u, err := url.Parse(cfg.EndpointURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("objstore: endpoint_url %q is not an http(s) URL", cfg.EndpointURL)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("objstore: no bucket")
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("objstore: access_key_id and secret_access_key go together")
	}
	hc, err := httpClient(cfg.Dial)
	if err != nil {
		return nil, err
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	var creds aws.CredentialsProvider = aws.AnonymousCredentials{}
	if cfg.AccessKeyID != "" {
		creds = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")
	}
	c := s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(strings.TrimSuffix(cfg.EndpointURL, "/")),
		UsePathStyle: true,
		Credentials:  creds,
		HTTPClient:   hc,
		// Checksums only where the API requires them: S3-compatible
		// servers differ in which trailing checksums they take.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RetryMaxAttempts:           3,
	})
	return &s3Source{c: c, bucket: cfg.Bucket, name: "s3://" + cfg.Bucket}, nil
}

// List lists the bucket's objects under prefix.
func (s *s3Source) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	p := s3.NewListObjectsV2Paginator(s.c, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.fail("list "+s.name+"/"+prefix, err)
		}
		for _, o := range page.Contents {
			if o.Key == nil {
				continue
			}
			obj := Object{Key: *o.Key}
			if o.Size != nil {
				obj.Size = *o.Size
			}
			if o.ETag != nil {
				obj.ETag = *o.ETag
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// Open streams one object.
func (s *s3Source) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	out, err := s.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, 0, s.fail("get "+s.name+"/"+key, err)
	}
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	return out.Body, size, nil
}

// Put writes one object, streaming its body unsigned (the signature
// covers the headers): signing the payload would need the whole body
// first.
func (s *s3Source) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: r}
	if size >= 0 {
		in.ContentLength = aws.Int64(size)
	}
	_, err := s.c.PutObject(ctx, in, s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
	if err != nil {
		return s.fail("put "+s.name+"/"+key, err)
	}
	return nil
}

// fail turns an SDK error into an Error with the server's words: the
// HTTP status, the S3 error code and its message.
func (s *s3Source) fail(op string, err error) error {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() == 0 {
		// No answer at all (a refused or failed connection): the SDK
		// still wraps it in a ResponseError, of status 0; the words are
		// the transport's.
		return transportError(op, err)
	}
	status := re.HTTPStatusCode()
	msg := fmt.Sprintf("%s: HTTP %d", op, status)
	var api smithy.APIError
	if errors.As(err, &api) {
		if code := api.ErrorCode(); code != "" {
			msg += " " + code
		}
		if m := api.ErrorMessage(); m != "" {
			msg += ": " + m
		}
	}
	return errorf(statusKind(status), nil, msg)
}
