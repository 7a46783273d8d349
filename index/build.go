package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
)

// Build scans r (size bytes) once and returns its table. It saves nothing
// and keeps r for later reads.
func Build(ctx context.Context, r io.ReaderAt, size int64, o Options) (*Table, error) {
	start := time.Now()
	s, err := build(ctx, r, size, o)
	if err != nil {
		return nil, err
	}
	s.elapsed = time.Since(start)
	s.setSource(readerSource{r, size})
	t := &Table{opt: o}
	t.snap.Store(s)
	return t, nil
}

// readerSource is the reader of a table made by Build as a source.Source:
// no identity and no Stater, so such a table never refreshes.
type readerSource struct {
	io.ReaderAt
	size int64
}

func (r readerSource) Size() int64               { return r.size }
func (r readerSource) Identity() source.Identity { return source.Identity{} }

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
func repair(d *local.File, path string, p tailPolicy) error {
	st, err := d.Fstat()
	if err != nil {
		return err
	}
	if st.Size == 0 {
		return nil
	}
	format, err := Detect(d, st.Size)
	if err != nil {
		return nil
	}
	drv, _ := driverFor(format)
	rp, ok := drv.(repairer)
	if !ok {
		return nil
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
