package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// Published indexes: `recfs index --publish s3://b/k` uploads the saved
// index as the object k.recfs-idx; opening s3://b/k without a saved index
// of its own streams that object into the cache first (one larger than its
// source could need is refused from its length, before it is read), where
// the checks of every saved table decide whether it is used (the object's
// ETag and size are recorded inside).
const (
	flagPublish   = "publish"
	sidecarSuffix = s3.SidecarSuffix
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
	bucket, key, err := s3.ParseURL(url)
	if err != nil {
		return usageError{err}
	}
	c, err := s3Client(cmd)
	if err != nil {
		return err
	}
	if err := c.PutSidecar(cmd.Context(), bucket, key, b); err != nil {
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
func importSidecar(ctx context.Context, c *s3.Client, bucket, key string, obj *s3.Object, o index.Options) {
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
	body, err := c.GetSidecar(ctx, bucket, key)
	if err != nil {
		if !errors.Is(err, s3.ErrNotFound) {
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
