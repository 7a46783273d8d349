package recfsio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/recfs/recfs/index"
	s3obj "github.com/recfs/recfs/source/s3"
)

// openTable opens the table of one file: local paths through index.Open
// (saved table, else one scan, saved), s3:// URLs through the object's
// published sidecar when there is no saved table yet, then
// index.BuildSource. It is the one place this package opens sources.
func openTable(ctx context.Context, path string, o Options) (*index.Table, error) {
	io, err := o.index()
	if err != nil {
		return nil, err
	}
	if !s3obj.IsURL(path) {
		return index.Open(ctx, path, io)
	}
	bucket, key, err := s3obj.ParseURL(path)
	if err != nil {
		return nil, err
	}
	c, err := s3Client(ctx, o.S3)
	if err != nil {
		return nil, err
	}
	obj, err := c.Open(ctx, bucket, key)
	if err != nil {
		return nil, err
	}
	if io.LegacyTransform == "" && strings.HasSuffix(key, ".grail-rpk-gz") {
		io.LegacyTransform = "flate"
	}
	if cf := index.SourceCacheFile(io, obj.Identity()); cf != "" {
		if _, err := os.Stat(cf); errors.Is(err, os.ErrNotExist) {
			importSidecar(ctx, c, bucket, key, obj, io)
		}
	}
	t, err := index.BuildSource(ctx, obj, io)
	if err != nil {
		obj.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// importSidecar stores obj's published table in the cache, when there is
// one; a missing or unusable one only means a scan.
func importSidecar(ctx context.Context, c *s3obj.Client, bucket, key string, obj *s3obj.Object, io index.Options) {
	body, err := c.GetSidecar(ctx, bucket, key)
	if err != nil {
		return
	}
	defer body.Close()
	_ = index.ImportSource(io, obj.Identity(), obj.Size(), body, body.Size)
}

// clients holds one S3 client per store configuration in a worker.
var clients struct {
	sync.Mutex
	m map[S3Options]*s3obj.Client
}

// s3Client returns the worker's client for o.
func s3Client(ctx context.Context, o S3Options) (*s3obj.Client, error) {
	clients.Lock()
	defer clients.Unlock()
	if c := clients.m[o]; c != nil {
		return c, nil
	}
	c, err := s3obj.NewClient(context.WithoutCancel(ctx), s3obj.Options{Endpoint: o.Endpoint, Region: o.Region, PathStyle: o.PathStyle})
	if err != nil {
		return nil, err
	}
	if clients.m == nil {
		clients.m = map[S3Options]*s3obj.Client{}
	}
	clients.m[o] = c
	return c, nil
}
