package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
)

// ErrWritableSource is returned by OpenSource for Options.Writable, and by
// Append and Sync, when the source is not a local file: tables of other
// sources are read-only.
var ErrWritableSource = errors.New("index: sources other than local files are read-only")

// Open opens the file at path and returns its table: OpenSource of the
// file as a local.File, read-only, or read-write with o.Writable (the
// table keeps that descriptor, and appends write through it). The table
// is named by path in messages and Info.
func Open(ctx context.Context, path string, o Options) (*Table, error) {
	f, err := local.OpenPath(path, o.Writable, false)
	if err != nil {
		return nil, err
	}
	src, err := local.New(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	t, err := openSource(ctx, src, path, o)
	if err != nil {
		src.Close()
		return nil, err
	}
	return t, nil
}

// OpenSource returns the table of src: loaded from the cache directory
// when a table saved for the same version of the source is there (see
// Options.CacheDir), built by one scan of src (through a mapping when src
// is a source.Mapper) and saved otherwise. A damaged, foreign or stale
// saved table is ignored. The table reads src and takes it over: Close
// closes the version it reads then (a source.Closer); on failure src is
// left to the caller.
//
// A local file (a *local.File) keeps its saved table under its path,
// checked against its device, inode, size, times and end checksums; it
// may be Writable (appends, and the repair of what a crashed append left),
// and its name infers options (InferOptions). Another source keeps one
// saved table a version (its Identity's Key and Version, so that a table
// published next to an object can be imported: ImportSource), used without
// reading the source when the version is an entity tag, after a check of
// its first and last records otherwise; it is read-only
// (ErrWritableSource).
//
// Reads that src refuses because its bytes changed (source.ErrChanged)
// fail with ErrChanged. Refresh and Follow ask src's source.Stater whether
// the version moved (see Refresh).
func OpenSource(ctx context.Context, src source.Source, o Options) (*Table, error) {
	return openSource(ctx, src, src.Identity().Key, o)
}

// openSource is OpenSource for a source named name in messages.
func openSource(ctx context.Context, src source.Source, name string, o Options) (*Table, error) {
	t, err := openVersion(ctx, src, name, o, true)
	if err != nil {
		return nil, err
	}
	if t.opt.Writable {
		if err := t.repairWritable(ctx, name); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// openVersion is openSource without the repair of a torn log tail: the
// table of one version of the source, and how its next one is loaded.
// Without repair, a Writable local file is not repaired first (a file
// Create has just made under its lock: nothing crashed in it).
func openVersion(ctx context.Context, src source.Source, name string, o Options, repair bool) (*Table, error) {
	t := &Table{path: name, opt: o}
	t.reload = func(ctx context.Context, src source.Source) (*Table, error) {
		o := o
		o.Progress = nil
		return openVersion(ctx, src, name, o, true)
	}
	if l, ok := src.(*local.File); ok {
		if err := t.openLocal(ctx, l, name, o, repair); err != nil {
			return nil, err
		}
		return t, nil
	}
	if o.Writable {
		return nil, ErrWritableSource
	}
	if err := t.openObject(ctx, src, o); err != nil {
		return nil, err
	}
	return t, nil
}

// openLocal makes t the table of a local file: loaded from the table saved
// under its path, else built and saved; for o.Writable, what a crashed
// append or writer left is repaired first.
func (t *Table) openLocal(ctx context.Context, l *local.File, name string, o Options, repairFirst bool) error {
	o = InferOptions(name, o)
	if o.Format == codec.Unknown && l.Size() == 0 && EmptyRecordName(filepath.Base(name)) {
		o.Format = codec.Kafka // a segment its broker has just rolled
	}
	t.opt = o
	start := time.Now()
	// A descriptor we cannot write through (a refresh's reopen, a file we
	// may not write) is not repaired here: the next append repairs it
	// under its lock, through a writable descriptor.
	if repairFirst && o.Writable && l.Writable() && (o.IgnoreDBLock || checkDBLock(l.Identity().Key) == nil) {
		if err := repair(l, name, o.tails()); err != nil {
			return err
		}
		var err error
		if l, err = l.Now(); err != nil { // the repair may have cut the file
			return err
		}
	}
	id, err := identify(l)
	if err != nil {
		return err
	}
	cf := cachePath(o.CacheDir, l.Identity().Key)
	s := t.loadSaved(ctx, cf, id, l, true, start)
	if s == nil {
		var r io.ReaderAt = l
		if m, err := l.Map(); err == nil {
			defer m.Close()
			r = m
		}
		if s, err = build(ctx, r, id.size, o); err != nil {
			return fmt.Errorf("index: %s: %w", name, err)
		}
		s.id, s.elapsed, s.origin = id, time.Since(start), l.Identity().Key
		s.setSource(l)
		if cf != "" {
			// A failure to save costs only speed next time; the table is good.
			_ = saveCache(ctx, cf, s, o)
		}
	}
	t.snap.Store(s)
	return nil
}

// repairWritable repairs, for a Writable open, a leveldb log left torn by
// a crashed writer before anyone appends to it (recordio files were
// repaired in openLocal), as a scan of it says, not a saved table.
func (t *Table) repairWritable(ctx context.Context, name string) error {
	if off, _, _ := t.s().tail(); off >= 0 {
		t.mu.Lock()
		err := t.scannedLocked(ctx)
		t.mu.Unlock()
		if err != nil {
			return err
		}
	}
	fixed, err := t.repairLogTail()
	switch {
	case errors.Is(err, ErrNoPrivateDir):
		// The file stays as it is; an append will say why it cannot.
		logrus.Warnf("recfs: %s has a torn tail that stays in place: %v", name, err)
	case err != nil:
		return err
	case fixed:
		if _, err := t.Refresh(ctx); err != nil {
			return err
		}
	}
	return nil
}

// openObject makes t the table of a read-only source that is not a local
// file: loaded from the table saved for its version, else built and saved.
func (t *Table) openObject(ctx context.Context, src source.Source, o Options) error {
	start := time.Now()
	sid := src.Identity()
	id := sourceIdent(sid, src.Size())
	cf := versionCachePath(o.CacheDir, sid)
	// An entity tag names the bytes: a table saved for it is used without
	// reading the source. A weaker version (size and time) is checked
	// against the first and last records first.
	s := t.loadSaved(ctx, cf, id, src, !strongVersion(sid), start)
	if s == nil {
		var r io.ReaderAt = src
		if mp, ok := src.(source.Mapper); ok {
			if m, err := mp.Map(); err == nil {
				defer m.Close()
				r = m
			}
		}
		var err error
		if s, err = build(ctx, r, src.Size(), o); err != nil {
			return fmt.Errorf("index: %s: %w", sid.Key, err)
		}
		// No origin: pruning stats origins as local paths; age and size decide.
		s.id, s.elapsed = id, time.Since(start)
		s.setSource(src)
		if cf != "" {
			_ = saveCache(ctx, cf, s, o) // a failure to save costs only speed next time
		}
	}
	t.snap.Store(s)
	return nil
}

// loadSaved returns the table saved in cf for the version id of src, once
// it passes its checks (read: the records at its ends are read back), or
// nil when there is none that does (or o.Rebuild).
func (t *Table) loadSaved(ctx context.Context, cf string, id identity, src source.Source, read bool, start time.Time) *snapshot {
	if cf == "" || t.opt.Rebuild {
		return nil
	}
	s, err := loadCache(ctx, cf, id, t.opt)
	if err != nil {
		if errors.Is(err, errBadCache) {
			logrus.WithFields(logrus.Fields{"file": t.path, "saved_index": cf}).
				Warnf("index: the saved index of %s is damaged (torn or cut short): scanning the source", t.path)
		}
		return nil
	}
	s.setSource(src)
	if t.loaded(ctx, s, cf, read) != nil {
		releaseSaved(s)
		return nil
	}
	s.source, s.elapsed = "cached", time.Since(start)
	return s
}

// strongVersion tells whether a source version names the content itself
// (an object's entity tag) rather than its size and time.
func strongVersion(sid source.Identity) bool { return strings.HasPrefix(sid.Version, "etag=") }

// sourceIdent is the saved table's identity record of a source version:
// its size and version string. The key is left out so that a saved table
// can be published next to its object and used under any endpoint's name
// for it (ImportSource).
func sourceIdent(sid source.Identity, size int64) identity {
	return identity{size: size, version: sid.Version}
}

// Stat returns the attributes of the local file the table reads now (the
// one it was opened on, or the one a refresh reopened), whatever is at its
// path. A table of another source has none (errors.ErrUnsupported).
func (t *Table) Stat() (os.FileInfo, error) {
	l := t.localFile()
	if l == nil {
		return nil, fmt.Errorf("index: %s is not a local file: %w", t.path, errors.ErrUnsupported)
	}
	return l.OSFile().Stat()
}
