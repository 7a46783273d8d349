//go:build !recfs_lean

package open

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// SidecarSuffix names the published index of an object: `recfs index
// --publish s3://b/k` uploads the saved index as the object k.recfs-idx;
// opening s3://b/k without a saved index of its own streams that object
// into the cache first (one larger than its source could need is refused
// from its length, before it is read), where the checks of every saved
// table decide whether it is used (the object's ETag and size are recorded
// inside).
const SidecarSuffix = s3.SidecarSuffix

// S3Options configure the client of s3:// targets.
type S3Options = s3.Options

// s3IsPrefix tells an s3:// URL of a prefix (s3://bucket, s3://bucket/dir/)
// from one of an object.
func s3IsPrefix(url string) bool {
	_, key, err := s3.ParseURL(url)
	return err == nil && (key == "" || strings.HasSuffix(key, "/"))
}

// s3Seq is Sequential of an s3:// object.
func s3Seq(ctx context.Context, url string, o Options) (Seq, error) {
	_, obj, err := openS3(ctx, url, o)
	if err != nil {
		return Seq{}, err
	}
	return remoteSeq(ctx, url, obj, o)
}

// s3Client builds the client of o.
func s3Client(ctx context.Context, o Options) (*s3.Client, error) {
	return s3.NewClient(ctx, o.S3)
}

// openS3 returns the client of o and the object url names (one HEAD).
func openS3(ctx context.Context, url string, o Options) (*s3.Client, *s3.Object, error) {
	bucket, key, err := s3.ParseURL(url)
	if err != nil {
		return nil, nil, &UsageError{Err: err}
	}
	if KindOf(url) != S3Object {
		return nil, nil, usagef("%s is a prefix; these commands read one object (s3://bucket/key)", url)
	}
	c, err := s3Client(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	obj, err := c.Open(ctx, bucket, key)
	if errors.Is(err, s3.ErrNotFound) {
		if berr := c.CheckBucket(ctx, bucket, key); berr != nil {
			err = berr // the bucket is what is missing
		}
	}
	return c, obj, err
}

// s3Table is Table for an s3:// URL of an object (its row's opener).
func s3Table(ctx context.Context, url string, o Options) (*index.Table, error) {
	t, _, _, err := s3ObjectTable(ctx, url, o)
	return t, err
}

// s3ObjectTable is Table for an s3:// URL: the object's table, loaded from the
// cache when one was saved for its ETag and size, else built by ranged
// GETs (and saved). An index published next to the object is fetched
// first when there is no saved one. The object stays open for the table's
// reads.
func s3ObjectTable(ctx context.Context, url string, o Options) (*index.Table, *s3.Object, *s3.Client, error) {
	c, obj, err := openS3(ctx, url, o)
	if err != nil {
		return nil, nil, nil, err
	}
	bucket, key, _ := s3.ParseURL(url)
	t, err := objectTable(ctx, c, bucket, key, obj, o)
	if err != nil {
		obj.Close()
		return nil, nil, nil, err
	}
	inf := t.Info()
	st := obj.Stats()
	logrus.WithFields(logrus.Fields{
		"object": obj.URL(), "format": inf.Format.String(), "records": inf.Records,
		"source": inf.Loaded, "time": inf.BuildTime, "gets": st.Gets, "fetched": st.BytesFetched,
	}).Debug("index ready")
	return t, obj, c, nil
}

// objectTable is the table of the object at bucket/key: the index
// published next to it imported into the cache when there is no saved one,
// then loaded or built by ranged GETs, progress reported through
// o.Progress. The table owns obj from then on (closes it) when err is nil.
func objectTable(ctx context.Context, c *s3.Client, bucket, key string, obj *s3.Object, o Options) (*index.Table, error) {
	importSidecar(ctx, c, bucket, key, obj, o.Index)
	url := "s3://" + bucket + "/" + key
	io := indexOptions(url, o.Index)
	done := o.progress("indexing "+url, &io)
	t, err := index.OpenSource(ctx, obj, io)
	done()
	return t, err
}

// s3ObjectTree is the read-only tree of one object (its records decoded
// as o.Decode says). With follow, the object is HEADed at the follow
// interval and a new version replaces the table (see followed).
func s3ObjectTree(ctx context.Context, url string, o TreeOptions) (*fs.Tree, error) {
	t, obj, _, err := s3ObjectTable(ctx, url, o.Options)
	if err != nil {
		return nil, err
	}
	if o.Follow {
		logrus.WithField("object", obj.URL()).Info("s3 object mounted read-only and followed: a new version replaces the records (reads of records opened before fail with EIO)")
	} else {
		logrus.WithField("object", obj.URL()).Info("s3 object mounted read-only: creating or changing files fails with EROFS; an overwritten object fails reads with EIO until remounted")
	}
	return objectTree(url, t, obj, obj.ModTime(), o)
}

// s3PrefixTree is the read-only tree of the objects under a prefix:
// directories are the prefixes below it ("/" separates them), listed when
// they are read; objects index.Detect takes for record files are record
// directories, indexed on first use as one object's tree is; other
// objects pass through as read-only files. With follow, each record object
// opened is followed as one object's tree follows it.
func s3PrefixTree(ctx context.Context, url string, o TreeOptions) (*fs.Tree, error) {
	c, fsys, err := prefixFS(ctx, url, o.Options)
	if err != nil {
		return nil, err
	}
	bucket, _, _ := s3.ParseURL(url)
	quiet := o.Options
	quiet.Progress = nil // objects are indexed as they are looked up, not as the mount starts
	open := func(ctx context.Context, name string, f iofs.File) (fs.Records, error) {
		sf, ok := f.(*s3.File)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", name)
		}
		obj := sf.Object
		key := obj.Key() // name may be an alias (see s3.FS)
		ourl := "s3://" + bucket + "/" + key
		logrus.WithField("object", obj.URL()).Debug("indexing")
		t, err := objectTable(ctx, c, bucket, key, obj, quiet)
		if err != nil {
			return nil, err
		}
		// The table owns the object (closes it), and follows it when the
		// tree does.
		v, err := View(o.Decode, t, ourl)
		if err != nil {
			t.Close()
			return nil, err
		}
		return v, nil
	}
	fo := o.FS
	fo.Detect = detect
	fo.HideOther = o.HideOther
	tree, err := fs.NewFSTree(url, fsys, open, fo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	logrus.WithField("prefix", url).Info("s3 prefix mounted read-only: creating or changing files fails with EROFS; an overwritten object fails reads with EIO until it is looked up again")
	return tree, nil
}

// PrefixFS returns the file system of the objects under an s3:// prefix
// URL, published indexes left out, and the client's options.
func PrefixFS(ctx context.Context, url string, o Options) (*s3.FS, error) {
	_, fsys, err := prefixFS(ctx, url, o)
	return fsys, err
}

func prefixFS(ctx context.Context, url string, o Options) (*s3.Client, *s3.FS, error) {
	bucket, prefix, err := s3.ParseURL(url)
	if err != nil {
		return nil, nil, &UsageError{Err: err}
	}
	c, err := s3Client(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	// The published indexes beside objects are recfs's own: not files.
	return c, c.FS(ctx, bucket, prefix).WithSidecars(SidecarSuffix), nil
}

// Publish uploads the saved index file cacheFile next to the object url
// names (as url + SidecarSuffix) and returns its length.
func Publish(ctx context.Context, url, cacheFile string, o Options) (int, error) {
	if cacheFile == "" {
		return 0, fmt.Errorf("%s: no saved index to publish (the cache directory is not writable?)", url)
	}
	b, err := os.ReadFile(cacheFile)
	if err != nil {
		return 0, err
	}
	bucket, key, err := s3.ParseURL(url)
	if err != nil {
		return 0, &UsageError{Err: err}
	}
	c, err := s3Client(ctx, o)
	if err != nil {
		return 0, err
	}
	if err := c.PutSidecar(ctx, bucket, key, b); err != nil {
		return 0, fmt.Errorf("publish %s%s: %w", url, SidecarSuffix, err)
	}
	return len(b), nil
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
