package s3

import (
	"bytes"
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// SidecarSuffix names an object's published index: the sidecar of
// bucket/key is the object key+SidecarSuffix beside it, holding a saved
// table of the object's version (which records the ETag and size it was
// built from, so a stale sidecar is refused by the index's checks).
const SidecarSuffix = ".recfs-idx"

// GetSidecar GETs the published index of bucket/key as a stream, as Get
// does (a missing sidecar gives ErrNotFound).
func (c *Client) GetSidecar(ctx context.Context, bucket, key string) (*Body, error) {
	return c.Get(ctx, bucket, key+SidecarSuffix)
}

// PutSidecar uploads b as the published index of bucket/key, under the
// client's deadlines and retries.
func (c *Client) PutSidecar(ctx context.Context, bucket, key string, b []byte) error {
	key += SidecarSuffix
	_, err := c.api.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: bytes.NewReader(b), ContentLength: aws.Int64(int64(len(b))), ContentType: aws.String("application/octet-stream")})
	if err == nil {
		return nil
	}
	if e := explain(err, bucket, key); e != nil {
		return e
	}
	return fmt.Errorf("s3: PUT s3://%s/%s: %w", bucket, key, err)
}
