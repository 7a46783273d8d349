//go:build !recfs_lean

package open

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"sync"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// A prefix listing reads the first bytes of each object for its format,
// detectWorkers objects at once, each in blocks of detectBlock: one ranged
// GET tells most formats (the leveldb and Prometheus probes look at four
// 32 KiB blocks). Sizes and the published indexes come from the listing
// itself (no HEAD per object).
const (
	detectWorkers = 8
	detectBlock   = 128 << 10
)

// PrefixEntry is an entry directly under an S3 prefix: a prefix (Dir) or
// an object with its size, record format and published index.
type PrefixEntry struct {
	Name string
	Dir  bool
	Size int64
	// Format is a record format, "other" (none, or an empty object), "dir",
	// or "?" when the object's first bytes could not be read (Err says
	// why, unless the listing was interrupted).
	Format string
	// Published tells whether the object has a published index (its
	// name + SidecarSuffix).
	Published bool
	Key       string // the object's key ("" for a prefix)
	Err       error

	obj *s3.ListedObject
	fi  iofs.FileInfo
}

// PrefixLister lists the entries directly under an S3 prefix a page at a
// time, with the format of each object.
type PrefixLister struct {
	dir    iofs.ReadDirFile
	c      *s3.Client // reads the first blocks of objects
	bucket string
}

// ListPrefix opens the listing of the prefix url names.
func ListPrefix(ctx context.Context, url string, o Options) (*PrefixLister, error) {
	_, fsys, err := prefixFS(ctx, url, o)
	if err != nil {
		return nil, err
	}
	bucket, _, _ := s3.ParseURL(url)
	so := o.S3
	so.BlockSize, so.CacheBytes = detectBlock, 4*detectBlock
	c, err := s3.NewClient(ctx, so)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(".")
	if err != nil {
		return nil, err
	}
	d, ok := f.(iofs.ReadDirFile)
	if !ok {
		f.Close()
		return nil, fmt.Errorf("%s: not a prefix", url)
	}
	return &PrefixLister{dir: d, c: c, bucket: bucket}, nil
}

// Next returns up to n more entries, their formats read, and io.EOF after
// the last page, as fs.ReadDirFile.ReadDir. When ctx ends, the reads stop
// at once.
func (l *PrefixLister) Next(ctx context.Context, n int) ([]PrefixEntry, error) {
	ents, err := l.dir.ReadDir(n)
	rows := make([]PrefixEntry, len(ents))
	for i, e := range ents {
		r := &rows[i]
		r.Name, r.Dir, r.Format = e.Name(), e.IsDir(), "dir"
		if fi, ierr := e.Info(); ierr == nil && !e.IsDir() {
			r.fi, r.Size, r.Format = fi, fi.Size(), "other"
			r.obj, _ = fi.Sys().(*s3.ListedObject)
			if r.obj != nil {
				r.Key, r.Published = r.obj.Key, r.obj.Sidecar
			}
		}
	}
	l.detect(ctx, rows)
	return rows, err
}

// Close ends the listing.
func (l *PrefixLister) Close() error { return l.dir.Close() }

// detect sets the format of each listed object of rows from its first
// bytes, detectWorkers at a time; a read that fails sets Err and format
// "?".
func (l *PrefixLister) detect(ctx context.Context, rows []PrefixEntry) {
	sem := make(chan struct{}, detectWorkers)
	var wg sync.WaitGroup
	for i := range rows {
		r := &rows[i]
		if r.obj == nil || r.Size == 0 {
			continue // a prefix, or an empty object: no format
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r.Format, r.Err = l.detectOne(ctx, r)
		}()
	}
	wg.Wait()
}

// detectOne reads the format of the object of r.
func (l *PrefixLister) detectOne(ctx context.Context, r *PrefixEntry) (string, error) {
	obj := l.c.OpenListed(l.bucket, r.obj, r.Size, r.fi.ModTime())
	stop := context.AfterFunc(ctx, func() { obj.Close() })
	defer stop()
	defer obj.Close()
	format, err := index.Detect(obj, r.Size)
	switch {
	case err == nil:
		return format.String(), nil
	case errors.Is(err, codec.ErrFormat):
		return "other", nil
	case ctx.Err() != nil:
		return "?", nil
	}
	return "?", err
}
