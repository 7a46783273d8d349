package report

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

// Follower writes the records of a followed table as they appear: it
// remembers the next record to write and the generation it belongs to, and
// starts again from record 0 of a rewritten or replaced file (as tail -F
// does), saying so on its error writer.
type Follower struct {
	t      *index.Table
	path   string
	m      Mode
	s      *decode.Session // nil: not decoded
	w      *bufio.Writer
	stderr io.Writer

	next  int64
	gen   uint64
	stage bytes.Buffer  // one record's output, written once complete
	sw    *bufio.Writer // writes into stage
	out   []byte        // decoded text
	last  string        // the last follow error reported
}

// NewFollower returns a Follower of t (the file at path) that writes to w
// as m says, decoded by s when s is not nil, and reports to stderr. It
// starts at record start, or at the last records of t when last > 0 (see
// [FollowStart]).
func NewFollower(t *index.Table, path string, m Mode, s *decode.Session, w, stderr io.Writer, start, last int64) *Follower {
	f := &Follower{t: t, path: path, m: m, s: s, w: bufio.NewWriterSize(w, CopyBufSize),
		stderr: stderr, next: start, gen: t.Generation()}
	f.sw = bufio.NewWriterSize(&f.stage, 4096)
	if last > 0 {
		f.next = max(0, t.Len()-last)
	}
	return f
}

// Run writes the records from the start, then every record appended to
// the table, checking it every interval (0: index's default) through
// index.Table.Follow, until ctx ends, when it returns nil. A record that
// cannot be written ends it with that error.
func (f *Follower) Run(ctx context.Context, interval time.Duration) error {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var failed error
	if failed = f.catchUp(fctx); failed != nil {
		return failed
	}
	err := f.t.Follow(fctx, interval, func(_, _ int64) {
		if failed = f.catchUp(fctx); failed != nil {
			cancel()
		}
	}, f.reportOnce)
	if failed != nil {
		return failed
	}
	if ctx.Err() != nil {
		return nil // interrupted: the way to end following
	}
	return err
}

// catchUp writes the records from f.next to the end of the table. A
// record the source no longer holds (the file changed under the table) is
// left for the refresh that will follow; nothing of it is written.
func (f *Follower) catchUp(ctx context.Context) error {
	if g := f.t.Generation(); g != f.gen {
		fmt.Fprintf(f.stderr, "recfs: %s was rewritten or replaced; following it from record 0\n", f.path)
		f.gen, f.next = g, 0
	}
	for n := f.t.Len(); f.next < n && ctx.Err() == nil; f.next++ {
		err := f.record(ctx, f.next)
		if errors.Is(err, index.ErrChanged) {
			break
		}
		if err != nil {
			f.w.Flush()
			return fmt.Errorf("%s: %w", f.path, err)
		}
	}
	return f.w.Flush()
}

// record writes record n, whole or not at all unless it is larger than
// MaxTextRecord (then it streams).
func (f *Follower) record(ctx context.Context, n int64) error {
	if f.s != nil {
		var err error
		f.out, err = f.s.Render(f.out[:0], f.t, f.gen, n)
		if errors.Is(err, index.ErrChanged) {
			return err
		}
		f.w.Write(f.out)
		if err != nil {
			return err
		}
		_, err = f.w.WriteString(f.m.Sep)
		return err
	}
	if f.t.Size(n) > MaxTextRecord {
		return f.m.Write(ctx, f.w, f.t, n)
	}
	f.stage.Reset()
	f.sw.Reset(&f.stage)
	if err := f.m.Write(ctx, f.sw, f.t, n); err != nil {
		return err
	}
	if err := f.sw.Flush(); err != nil {
		return err
	}
	_, err := f.w.Write(f.stage.Bytes())
	return err
}

// reportOnce writes a follow error to the error writer unless it is the
// one written last (a deleted file fails every check the same way).
func (f *Follower) reportOnce(err error) {
	if msg := err.Error(); msg != f.last {
		f.last = msg
		fmt.Fprintf(f.stderr, "recfs: following %s: %s\n", f.path, msg)
	}
}
