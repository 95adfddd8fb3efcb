package objstore

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Prober is a Source that can say cheaply whether a prefix holds
// anything the credential may read: one listing entry, not the whole
// listing. A node that already holds a registered version's bytes asks
// it instead of listing again, so a job's start does not grow with the
// number of objects while the source still decides, with the job's
// credential, whether the job may have them.
type Prober interface {
	// Probe returns nil when at least one object under prefix can be
	// listed; ErrNotFound when none; the class of the source's refusal
	// otherwise.
	Probe(ctx context.Context, prefix string) error
}

// Probe lists at most one blob under prefix.
func (s *azureBlob) Probe(ctx context.Context, prefix string) error {
	one := int32(1)
	p := s.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, MaxResults: &one})
	page, err := p.NextPage(ctx)
	if err != nil {
		return s.fail("list "+s.name+"/"+prefix, err)
	}
	if len(page.Segment.BlobItems) == 0 {
		return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("no objects under %s/%s", s.name, prefix)}
	}
	return nil
}

// Probe lists at most one object under prefix.
func (s *s3Source) Probe(ctx context.Context, prefix string) error {
	one := int32(1)
	out, err := s.c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix, MaxKeys: &one})
	if err != nil {
		return s.fail("list "+s.name+"/"+prefix, err)
	}
	if len(out.Contents) == 0 {
		return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("no objects under %s/%s", s.name, prefix)}
	}
	return nil
}
