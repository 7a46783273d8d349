package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decoders"
	rfs "github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/source/s3obj"
)

// isS3Prefix tells whether url names a prefix of a bucket (the bucket
// itself, or a key ending in "/") rather than one object.
func isS3Prefix(url string) bool {
	_, key, err := s3obj.ParseURL(url)
	return err == nil && (key == "" || strings.HasSuffix(key, "/"))
}

// s3PrefixFS returns the file system of the objects under a prefix URL.
func s3PrefixFS(cmd *cobra.Command, url string) (*s3obj.Client, *s3obj.FS, error) {
	bucket, prefix, err := s3obj.ParseURL(url)
	if err != nil {
		return nil, nil, usageError{err}
	}
	c, err := s3Client(cmd)
	if err != nil {
		return nil, nil, err
	}
	return c, c.FS(cmd.Context(), bucket, prefix), nil
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
	bucket, _, _ := s3obj.ParseURL(url)
	open := func(ctx context.Context, name string, f iofs.File) (rfs.Source, error) {
		sf, ok := f.(*s3obj.File)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", name)
		}
		obj := sf.Object
		key := obj.Key() // name may be an alias (see s3obj.FS)
		ourl := "s3://" + bucket + "/" + key
		logrus.WithField("object", obj.URL()).Debug("indexing")
		importSidecar(ctx, c, bucket, key, obj, o)
		t, err := index.BuildSource(ctx, obj, s3Options(ourl, o))
		if err != nil {
			return nil, err
		}
		var src rfs.Source = closingTable{t, obj}
		if follow {
			src = newFollowedObject(c, bucket, key, t, obj, s3Options(ourl, o))
		}
		v, err := viewSource(plan, src, ourl)
		if err != nil {
			src.Close()
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

// lsPrefixJSON is one entry of `recfs ls --json s3://bucket/prefix/`.
type lsPrefixJSON struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// lsS3Prefix lists the objects and prefixes directly under a prefix URL,
// one a line (prefixes end in "/"), a list page at a time.
func lsS3Prefix(cmd *cobra.Command, url string, asJSON bool) error {
	_, fsys, err := s3PrefixFS(cmd, url)
	if err != nil {
		return err
	}
	f, err := fsys.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	d, ok := f.(iofs.ReadDirFile)
	if !ok {
		return fmt.Errorf("%s: not a prefix", url)
	}
	w := bufio.NewWriter(cmd.OutOrStdout())
	enc := json.NewEncoder(w)
	for {
		ents, err := d.ReadDir(1000)
		for _, e := range ents {
			var size int64
			if fi, err := e.Info(); err == nil && !e.IsDir() {
				size = fi.Size()
			}
			if asJSON {
				if err := enc.Encode(lsPrefixJSON{Name: e.Name(), Dir: e.IsDir(), Size: size}); err != nil {
					return err
				}
				continue
			}
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			if _, err := fmt.Fprintln(w, name); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("%s: %w", url, err)
		}
	}
	return w.Flush()
}
