package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	rfs "github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// followedObject is the table of an s3 object a --follow mount shows: it
// HEADs the object every follow interval and, when its ETag or size moved,
// opens the new version and builds its table (an object is replaced whole:
// there is no file that grew in place to scan the tail of; see rebuild),
// then switches to it in one step. A record opened at one version reads
// only that version: after a switch its reads fail with index.ErrChanged
// (EIO), never bytes of two versions.
type followedObject struct {
	c           *s3.Client
	bucket, key string
	opt         index.Options

	cur    atomic.Pointer[objectVersion]
	mu     sync.Mutex // serialises switches and Close
	closed bool
}

// objectVersion is one version of the object and its table.
type objectVersion struct {
	tab *index.Table
	obj *s3.Object
	gen uint64
}

var (
	_ rfs.Source    = (*followedObject)(nil)
	_ rfs.Versioned = (*followedObject)(nil)
	_ rfs.Follower  = (*followedObject)(nil)
)

// newFollowedObject follows the object of tab and obj (its opened
// version), which it takes over.
func newFollowedObject(c *s3.Client, bucket, key string, tab *index.Table, obj *s3.Object, o index.Options) *followedObject {
	f := &followedObject{c: c, bucket: bucket, key: key, opt: o}
	o.Progress = nil
	f.opt = o
	f.cur.Store(&objectVersion{tab: tab, obj: obj})
	return f
}

func (f *followedObject) v() *objectVersion { return f.cur.Load() }

// Len returns the number of records of the current version.
func (f *followedObject) Len() int64 { return f.v().tab.Len() }

// Size returns the payload length of record n.
func (f *followedObject) Size(n int64) int64 { return f.v().tab.Size(n) }

// Offset returns the object offset of record n.
func (f *followedObject) Offset(n int64) int64 { return f.v().tab.Offset(n) }

// ReadAt reads record n of the current version.
func (f *followedObject) ReadAt(n int64, p []byte, off int64) (int, error) {
	return f.v().tab.ReadAt(n, p, off)
}

// HasTrailer reports whether the current version has a grailbio trailer.
func (f *followedObject) HasTrailer() bool { return f.v().tab.HasTrailer() }

// TrailerSize returns the trailer's length.
func (f *followedObject) TrailerSize() int64 { return f.v().tab.TrailerSize() }

// ReadTrailerAt reads the trailer of the current version.
func (f *followedObject) ReadTrailerAt(p []byte, off int64) (int, error) {
	return f.v().tab.ReadTrailerAt(p, off)
}

// Header returns the recordio header entries.
func (f *followedObject) Header() []index.HeaderEntry { return f.v().tab.Header() }

// Damage returns the byte ranges the scan skipped.
func (f *followedObject) Damage() []codec.Damage { return f.v().tab.Damage() }

// Info summarises the current version.
func (f *followedObject) Info() index.Info { return f.v().tab.Info() }

// Generation counts the versions switched to.
func (f *followedObject) Generation() uint64 { return f.v().gen }

// ReadAtGeneration reads record n of version gen, or fails with
// index.ErrChanged once the object moved on.
func (f *followedObject) ReadAtGeneration(gen uint64, n int64, p []byte, off int64) (int, error) {
	v := f.v()
	if v.gen != gen {
		return 0, fmt.Errorf("%s: record %d: %w (object replaced)", v.obj.URL(), n, index.ErrChanged)
	}
	return v.tab.ReadAt(n, p, off)
}

// Close closes the current version.
func (f *followedObject) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	v := f.v()
	v.tab.Close()
	return v.obj.Close()
}

// Follow HEADs the object every interval until ctx ends; see
// followedObject. A failed HEAD or build is passed to onErr and tried again
// at the next tick.
func (f *followedObject) Follow(ctx context.Context, interval time.Duration, changed func(oldLen, newLen int64), onErr func(error)) error {
	if interval <= 0 {
		interval = index.DefaultFollowInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		old := f.v()
		id, size, err := old.obj.Stat()
		if err != nil {
			if onErr != nil && ctx.Err() == nil {
				onErr(err)
			}
			continue
		}
		if id == old.obj.Identity() && size == old.obj.Size() {
			continue
		}
		ok, err := f.rebuild(ctx, old)
		if err != nil {
			if onErr != nil && ctx.Err() == nil {
				onErr(err)
			}
			continue
		}
		if ok && changed != nil {
			changed(old.tab.Len(), f.Len())
		}
	}
}

// rebuild opens the object's new version and builds its table (or loads
// it from the cache, when this version was indexed before), then makes it
// current. It rebuilds rather than extends: the new version is another
// object whose first bytes would have to be read again to prove they are
// the old ones (an ETag is no checksum of a prefix), and the build's
// ranged GETs cost about as much as that check.
func (f *followedObject) rebuild(ctx context.Context, old *objectVersion) (bool, error) {
	obj, err := f.c.Open(ctx, f.bucket, f.key)
	if err != nil {
		return false, err
	}
	tab, err := index.BuildSource(ctx, obj, f.opt)
	if err != nil {
		obj.Close()
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.v() != old {
		tab.Close()
		obj.Close()
		return false, nil
	}
	f.cur.Store(&objectVersion{tab: tab, obj: obj, gen: old.gen + 1})
	// Reads of the old version still running fail (the object is closed,
	// and its GETs were pinned to the old ETag anyway).
	old.tab.Close()
	old.obj.Close()
	logrus.WithFields(logrus.Fields{"object": obj.URL(), "records": tab.Len(), "was": old.tab.Len()}).Info("s3: object replaced; following its new version")
	return true, nil
}
