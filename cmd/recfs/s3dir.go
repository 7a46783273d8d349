package main

import (
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decoders"
	rfs "github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// isS3Prefix tells whether url names a prefix of a bucket (the bucket
// itself, or a key ending in "/") rather than one object.
func isS3Prefix(url string) bool {
	_, key, err := s3.ParseURL(url)
	return err == nil && (key == "" || strings.HasSuffix(key, "/"))
}

// s3PrefixFS returns the file system of the objects under a prefix URL,
// published indexes left out.
func s3PrefixFS(cmd *cobra.Command, url string) (*s3.Client, *s3.FS, error) {
	bucket, prefix, err := s3.ParseURL(url)
	if err != nil {
		return nil, nil, usageError{err}
	}
	c, err := s3Client(cmd)
	if err != nil {
		return nil, nil, err
	}
	// The published indexes beside objects are recfs's own: not files.
	return c, c.FS(cmd.Context(), bucket, prefix).WithSidecars(sidecarSuffix), nil
}

// s3DirTree is the read-only tree of the objects under a prefix for a
// mount: directories are the prefixes below it ("/" separates them),
// listed when they are read; objects index.Detect takes for record files
// are record directories, indexed on first use as one object's mount is;
// other objects pass through as read-only files. With follow, each record
// object opened is followed as one object's mount follows it.
func s3DirTree(cmd *cobra.Command, url string, o index.Options, plan *decoders.Plan, hideOther, follow bool, fo rfs.Options) (*rfs.Tree, error) {
	c, fsys, err := s3PrefixFS(cmd, url)
	if err != nil {
		return nil, err
	}
	bucket, _, _ := s3.ParseURL(url)
	open := func(ctx context.Context, name string, f iofs.File) (rfs.Source, error) {
		sf, ok := f.(*s3.File)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", name)
		}
		obj := sf.Object
		key := obj.Key() // name may be an alias (see s3.FS)
		ourl := "s3://" + bucket + "/" + key
		logrus.WithField("object", obj.URL()).Debug("indexing")
		importSidecar(ctx, c, bucket, key, obj, o)
		t, err := index.BuildSource(ctx, obj, s3Options(ourl, o))
		if err != nil {
			return nil, err
		}
		// The table owns the object (closes it), and follows it when the
		// mount does (index.Table.Follow HEADs it; a new version replaces
		// the table's records as one new generation).
		v, err := viewSource(plan, t, ourl)
		if err != nil {
			t.Close()
			return nil, err
		}
		return v, nil
	}
	fo.Detect = func(r io.ReaderAt, size int64) bool {
		_, err := index.Detect(r, size)
		return err == nil
	}
	fo.HideOther = hideOther
	tree, err := rfs.NewFSTree(url, fsys, open, fo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	logrus.WithField("prefix", url).Info("s3 prefix mounted read-only: creating or changing files fails with EROFS; an overwritten object fails reads with EIO until it is looked up again")
	return tree, nil
}
