package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

// followStart returns the record cat --follow starts at, from its
// selection: none (0), A- (A) or last:K (resolved when the file is open, so
// returned as a negative count). Any other selection is a usage error.
func followStart(sel []recordRange) (start, last int64, err error) {
	switch {
	case len(sel) == 0:
		return 0, 0, nil
	case len(sel) > 1:
	case sel[0].last > 0:
		return 0, sel[0].last, nil
	case sel[0].hi < 0:
		return sel[0].lo, 0, nil
	}
	return 0, 0, usagef("--follow writes records as they come: give no selection, A- (from record A) or last:K")
}

// catFollower writes the records of a followed table as they appear: it
// remembers the next record to write and the generation it belongs to, and
// starts again from record 0 of a rewritten or replaced file (as tail -F
// does), saying so on standard error.
type catFollower struct {
	t      *index.Table
	path   string
	m      catMode
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

// catchUp writes the records from f.next to the end of the table. A
// record the source no longer holds (the file changed under the table) is
// left for the refresh that will follow; nothing of it is written.
func (f *catFollower) catchUp(ctx context.Context) error {
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
// maxTextRecord (then it streams).
func (f *catFollower) record(ctx context.Context, n int64) error {
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
		_, err = f.w.WriteString(f.m.sep)
		return err
	}
	if f.t.Size(n) > maxTextRecord {
		return f.m.write(ctx, f.w, f.t, n)
	}
	f.stage.Reset()
	f.sw.Reset(&f.stage)
	if err := f.m.write(ctx, f.sw, f.t, n); err != nil {
		return err
	}
	if err := f.sw.Flush(); err != nil {
		return err
	}
	_, err := f.w.Write(f.stage.Bytes())
	return err
}

// reportOnce writes a follow error to standard error unless it is the one
// written last (a deleted file fails every check the same way).
func (f *catFollower) reportOnce(err error) {
	if msg := err.Error(); msg != f.last {
		f.last = msg
		fmt.Fprintf(f.stderr, "recfs: following %s: %s\n", f.path, msg)
	}
}

// catFollow is cat --follow: it writes the records of the file (or remote
// object: a new version of it is written again from record 0) at path from
// the selection's start, then every record appended to it, until the
// command's context ends (SIGINT or SIGTERM), when it returns nil. It
// follows through index.Table.Follow, with the rules of a --follow mount.
func catFollow(cmd *cobra.Command, path string, o index.Options, sel []recordRange, m catMode,
	dec *decodeFlags, interval time.Duration) error {
	start, last, err := followStart(sel)
	if err != nil {
		return err
	}
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	warnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	f := &catFollower{t: t, path: path, m: m, w: bufio.NewWriterSize(cmd.OutOrStdout(), copyBufSize),
		stderr: cmd.ErrOrStderr(), next: start, gen: t.Generation()}
	f.sw = bufio.NewWriterSize(&f.stage, 4096)
	if last > 0 {
		f.next = max(0, t.Len()-last)
	}
	if dec.decoding() {
		if f.s, err = catSession(dec, t, path, m.asJSON, m.number); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	var failed error
	if failed = f.catchUp(ctx); failed != nil {
		return failed
	}
	err = t.Follow(ctx, interval, func(_, _ int64) {
		if failed = f.catchUp(ctx); failed != nil {
			cancel()
		}
	}, f.reportOnce)
	if failed != nil {
		return failed
	}
	if cmd.Context().Err() != nil {
		return nil // interrupted: the way to end following
	}
	return err
}
