package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/source/local"
)

// Open opens the file at path and returns its table: loaded from the cache
// when a saved table for the unchanged file exists, built (and saved)
// otherwise. A damaged, foreign or stale cache file is ignored. The file is
// opened read-only, or read-write with o.Writable; the table keeps that
// descriptor, and appends write through it.
func Open(ctx context.Context, path string, o Options) (*Table, error) {
	f, err := local.OpenPath(path, o.Writable, false)
	if err != nil {
		return nil, err
	}
	t, err := OpenFile(ctx, f, path, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

func openFile(ctx context.Context, f *os.File, path string, o Options) (*Table, error) {
	o = InferOptions(path, o)
	if o.Format == codec.Unknown && EmptyRecordName(filepath.Base(path)) {
		if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
			o.Format = codec.Kafka // a segment its broker has just rolled
		}
	}
	start := time.Now()
	// A descriptor we cannot write through (a refresh's reopen, a file we
	// may not write) is not repaired here: the next append repairs it
	// under its lock, through a writable descriptor.
	if o.Writable && local.ReadWrite(f) && (o.IgnoreDBLock || local.CheckDBLock(path) == nil) {
		if err := repair(f, path, o.tails()); err != nil {
			return nil, err
		}
	}
	// The table reads f as a local.File: its identity, the key of its
	// saved table and its reads come from there. The Local is not closed
	// on failure: f stays the caller's.
	src, err := local.New(f, path)
	if err != nil {
		return nil, err
	}
	id, err := identify(src)
	if err != nil {
		return nil, err
	}
	t := &Table{path: path, opened: true, file: f, fref: newFileRef(src), opt: o}
	cf := cachePath(o.CacheDir, src.Identity().Key)
	if cf != "" && !o.Rebuild {
		if s, err := loadCache(ctx, cf, id, o); err == nil {
			s.setSource(src, t.fref)
			if t.loaded(ctx, s, cf, true) == nil {
				s.source, s.elapsed = "cached", time.Since(start)
				t.snap.Store(s)
				return t, nil
			}
		}
	}
	var r io.ReaderAt = src
	if m, err := src.Map(); err == nil {
		defer m.Close()
		r = m
	}
	s, err := build(ctx, r, id.size, o)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	s.id, s.elapsed, s.origin = id, time.Since(start), src.Identity().Key
	s.setSource(src, t.fref)
	t.snap.Store(s)
	if cf != "" {
		// A failure to save costs only speed next time; the table is good.
		_ = saveCache(ctx, cf, s, o)
	}
	return t, nil
}

// setSource makes src, a version of r's file, the source s reads.
func (s *snapshot) setSource(src *local.File, r *fileRef) { s.local, s.ref = src, r }

// Build scans r (size bytes) once and returns its table. It saves nothing
// and keeps r for later reads.
func Build(ctx context.Context, r io.ReaderAt, size int64, o Options) (*Table, error) {
	start := time.Now()
	s, err := build(ctx, r, size, o)
	if err != nil {
		return nil, err
	}
	s.elapsed = time.Since(start)
	t := &Table{r: r, opt: o}
	t.snap.Store(s)
	return t, nil
}

// build detects the format and runs the matching builder, over r made to
// fail once ctx is done (interruptible): every scanner then stops within a
// read of an interruption, in records or in damage alike.
func build(ctx context.Context, r io.ReaderAt, size int64, o Options) (*snapshot, error) {
	r = interruptible(ctx, r)
	f := o.Format
	if f == codec.Unknown {
		if size == 0 {
			f = codec.LevelDB // an empty file is an empty log
		} else {
			var err error
			if f, err = Detect(r, size); err != nil {
				return nil, err
			}
		}
	}
	drv, err := driverFor(f)
	if err != nil {
		return nil, err
	}
	s, err := drv.build(ctx, r, size, f, o)
	if cerr := canceled(ctx); cerr != nil {
		return nil, cerr // whatever the scan made of its failed reads
	}
	if err != nil {
		return nil, err
	}
	if size == 0 && o.Format == codec.Unknown {
		// Nothing to detect: say so rather than claim a leveldb log.
		s.flavor = EmptyFlavor
	}
	s.source = "built"
	return s, nil
}

// EmptyRecordName reports whether an empty file of that name is a record
// file of a known format: a Kafka segment (its base offset in 20 digits,
// ".log"), which a broker creates empty. Open reads such a file as an
// empty Kafka segment, which following then fills.
func EmptyRecordName(name string) bool { return kafka.IsSegmentName(name) }

// EmptyFlavor is the flavour of an empty file opened without a format: it
// is served as an empty leveldb log (appends make it one).
const EmptyFlavor = "empty file (served as an empty leveldb log)"

// progress reports scanned bytes to the user's callback, if any.
type progress struct {
	fn    func(done, total int64)
	total int64
}

func (p progress) report(done int64) {
	if p.fn != nil {
		p.fn(min(done, p.total), p.total)
	}
}

// errCanceled wraps a context error so callers can tell it from damage.
func canceled(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("index: build interrupted: %w", err)
	}
	return nil
}

// repair undoes what a crashed append of ours left behind, for formats
// whose driver is a repairer (recordio: see RepairRecordIO), holding
// the file's append lock so that an append running in another process is
// never taken for a crashed one. A tail it may not cut stays: the file is
// served as it is, and appends refuse it.
// Other formats need nothing here: a torn leveldb tail is dealt with by
// repairLogTail and by the next Append.
func repair(f *os.File, path string, p tailPolicy) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	format, err := Detect(f, fi.Size())
	if err != nil {
		return nil
	}
	drv, _ := driverFor(format)
	rp, ok := drv.(repairer)
	if !ok {
		return nil
	}
	d, err := local.New(f, path) // not closed: f stays the caller's
	if err != nil {
		return err
	}
	unlock, err := lockDest(d)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = rp.repair(d, path, p)
	if errors.Is(err, ErrDamagedTail) {
		return nil
	}
	return err
}
