package recfsio

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/recfs/recfs/codec/decode"
)

func init() {
	register.DoFn4x1[context.Context, *sdf.LockRTracker, string, func([]byte), error](&readFn{})
	register.Emitter1[[]byte]()
	register.DoFn4x1[context.Context, *sdf.LockRTracker, string, func(Record), error](&readMetaFn{})
	register.Emitter1[Record]()
}

// Record is one record with where it came from, as ReadWithMeta gives it.
type Record struct {
	File    string // the path or s3:// URL the pattern matched
	N       int64  // record number in the file (as `recfs cat` numbers it)
	Offset  int64  // file offset of the record's first byte
	Seq     int64  // the format's own number of the record (a Kafka offset), when HasSeq
	HasSeq  bool
	Payload []byte
}

// Read returns a PCollection of []byte: the payload of every record of
// every file pattern matches (a local glob, or an s3:// URL whose key may
// hold a glob), each exactly once. See the package doc for how files are
// split.
func Read(s beam.Scope, pattern string, o Options) beam.PCollection {
	s = s.Scope("recfsio.Read")
	return beam.ParDo(s, &readFn{base{Opt: o}}, matches(s, pattern, o))
}

// ReadWithMeta is Read giving a Record (file, record number, offset, the
// format's sequence number) for each record.
func ReadWithMeta(s beam.Scope, pattern string, o Options) beam.PCollection {
	s = s.Scope("recfsio.ReadWithMeta")
	return beam.ParDo(s, &readMetaFn{base{Opt: o}}, matches(s, pattern, o))
}

// matches returns the files pattern matches, spread over the workers.
func matches(s beam.Scope, pattern string, o Options) beam.PCollection {
	m := beam.ParDo(s, &globFn{Opt: o}, beam.Create(s, pattern))
	return beam.Reshuffle(s, m)
}

// base holds the restriction methods shared by the reading DoFns: a
// restriction is a range of record numbers of one file.
type base struct {
	Opt Options
}

// CreateInitialRestriction opens the file's table and returns all its
// records.
func (fn *base) CreateInitialRestriction(ctx context.Context, path string) (offsetrange.Restriction, error) {
	f, done, err := acquire(ctx, path, fn.Opt)
	if err != nil {
		return offsetrange.Restriction{}, err
	}
	defer done()
	return offsetrange.Restriction{Start: 0, End: f.t.Len()}, nil
}

// SplitRestriction cuts a restriction into ranges of about
// Options.SplitBytes of payload, at record boundaries.
func (fn *base) SplitRestriction(ctx context.Context, path string, rest offsetrange.Restriction) ([]offsetrange.Restriction, error) {
	if rest.End-rest.Start <= 1 {
		return []offsetrange.Restriction{rest}, nil
	}
	f, done, err := acquire(ctx, path, fn.Opt)
	if err != nil {
		return nil, err
	}
	defer done()
	c := f.cuts(rest.Start, rest.End, fn.Opt.splitBytes())
	out := make([]offsetrange.Restriction, len(c)-1)
	for i := range out {
		out[i] = offsetrange.Restriction{Start: c[i], End: c[i+1]}
	}
	return out, nil
}

// RestrictionSize returns the payload bytes of the restriction's records
// (at least 1, so that runners do not take a range of empty records for
// no work).
func (fn *base) RestrictionSize(ctx context.Context, path string, rest offsetrange.Restriction) (float64, error) {
	f, done, err := acquire(ctx, path, fn.Opt)
	if err != nil {
		return 0, err
	}
	defer done()
	return float64(max(f.payload(rest.Start, rest.End), 1)), nil
}

// CreateTracker returns Beam's offsetrange tracker over the restriction,
// counting the runner's dynamic splits.
func (fn *base) CreateTracker(rest offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(&tracker{Tracker: offsetrange.NewTracker(rest)})
}

// readHook, when set (tests), is called before record n of path is read.
var readHook func(path string, n int64)

// process reads the records of the restriction rt tracks, calling emit
// with each (n, payload, table), and counts them in the metrics.
func (fn *base) process(ctx context.Context, rt *sdf.LockRTracker, path string, emit func(f *file, n int64, p []byte) error) error {
	f, done, err := acquire(ctx, path, fn.Opt)
	if err != nil {
		return err
	}
	defer done()
	rest := rt.GetRestriction().(offsetrange.Restriction)
	restrictions.Inc(ctx, 1)
	if rest.Start == 0 {
		reportFile(ctx, path, f)
	}
	var records, bytes int64
	var err2 error
	for n := rest.Start; rt.TryClaim(n); n++ {
		if readHook != nil {
			readHook(path, n)
		}
		p := make([]byte, f.t.Size(n))
		if k, err := f.t.ReadAt(n, p, 0); k < len(p) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			err2 = fmt.Errorf("%s: record %d: %w", path, n, err)
			break
		}
		if err := emit(f, n, p); err != nil {
			err2 = err
			break
		}
		records++
		bytes += int64(len(p))
	}
	recordsRead.Inc(ctx, records)
	bytesRead.Inc(ctx, bytes)
	rt.Mu.Lock()
	splits.Inc(ctx, rt.Rt.(*tracker).splits)
	rt.Mu.Unlock()
	if err2 == nil {
		err2 = rt.GetError()
	}
	return err2
}

// readFn is Read's splittable DoFn.
type readFn struct{ base }

// ProcessElement emits the payload of each record of the restriction.
func (fn *readFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, path string, emit func([]byte)) error {
	return fn.process(ctx, rt, path, func(_ *file, _ int64, p []byte) error {
		emit(p)
		return nil
	})
}

// readMetaFn is ReadWithMeta's splittable DoFn.
type readMetaFn struct{ base }

// ProcessElement emits a Record for each record of the restriction.
func (fn *readMetaFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, path string, emit func(Record)) error {
	var m decode.Meta
	return fn.process(ctx, rt, path, func(f *file, n int64, p []byte) error {
		if err := f.t.RecordMeta(n, &m); err != nil {
			return fmt.Errorf("%s: record %d: %w", path, n, err)
		}
		emit(Record{File: path, N: n, Offset: f.t.Offset(n), Seq: m.Seq, HasSeq: m.HasSeq, Payload: p})
		return nil
	})
}
