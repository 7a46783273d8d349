package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/source/s3obj"
)

// Published indexes: `recfs index --publish s3://b/k` uploads the saved
// index as the object k.recfs-idx; opening s3://b/k without a saved index
// of its own streams that object into the cache first (one larger than its
// source could need is refused from its length, before it is read), where
// the checks of every saved table decide whether it is used (the object's
// ETag and size are recorded inside).
const (
	flagPublish   = "publish"
	sidecarSuffix = ".recfs-idx"
)

// publishIndex uploads the saved index file cacheFile next to url's object.
func publishIndex(cmd *cobra.Command, url, cacheFile string) error {
	if cacheFile == "" {
		return fmt.Errorf("%s: no saved index to publish (the cache directory is not writable?)", url)
	}
	b, err := os.ReadFile(cacheFile)
	if err != nil {
		return err
	}
	bucket, key, err := s3obj.ParseURL(url)
	if err != nil {
		return usageError{err}
	}
	c, err := s3Client(cmd)
	if err != nil {
		return err
	}
	_, err = c.API().PutObject(cmd.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key + sidecarSuffix),
		Body: bytes.NewReader(b), ContentLength: aws.Int64(int64(len(b))), ContentType: aws.String("application/octet-stream")})
	if err != nil {
		return fmt.Errorf("publish %s%s: %w", url, sidecarSuffix, err)
	}
	if !wantJSON(cmd) {
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: index published as %s%s (%d bytes)\n", url, url, sidecarSuffix, len(b))
	}
	return err
}

// importSidecar fetches the published index of obj into the cache when
// there is no saved index for its version yet (one GET; a missing sidecar
// costs that GET's 404).
func importSidecar(ctx context.Context, c *s3obj.Client, bucket, key string, obj *s3obj.Object, o index.Options) {
	if o.Rebuild {
		return
	}
	cf := index.SourceCacheFile(o, obj.Identity())
	if cf == "" {
		return
	}
	if _, err := os.Stat(cf); err == nil {
		return
	}
	body, err := c.Get(ctx, bucket, key+sidecarSuffix)
	if err != nil {
		if !errors.Is(err, s3obj.ErrNotFound) {
			logrus.WithError(err).WithField("object", obj.URL()).Debug("no published index")
		}
		return
	}
	defer body.Close()
	if err := index.ImportSource(o, obj.Identity(), obj.Size(), body, body.Size); err != nil {
		logrus.WithError(err).WithField("object", obj.URL()).Warn("published index not usable; scanning the object")
		return
	}
	logrus.WithFields(logrus.Fields{"object": obj.URL(), "bytes": body.Size}).Debug("published index fetched")
}
