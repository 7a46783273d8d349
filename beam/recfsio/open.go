package recfsio

import (
	"context"
	"sync"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	s3obj "github.com/recfs/recfs/source/s3"
)

// openTable opens the table of one file the way recfs cat and recfs mount
// do, through the package that assembles recfs's sources (fs/open): a
// local path's saved table or one scan; an s3:// object's saved table,
// else its published sidecar, else one scan by ranged GETs; an http(s)://
// URL by ranged GETs. It is the one place this package opens sources.
func openTable(ctx context.Context, path string, o Options) (*index.Table, error) {
	io, err := o.index()
	if err != nil {
		return nil, err
	}
	return open.Table(ctx, path, open.Options{
		Index: io,
		S3:    s3obj.Options{Endpoint: o.S3.Endpoint, Region: o.S3.Region, PathStyle: o.S3.PathStyle},
	})
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
