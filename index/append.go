package index

import (
	"context"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// ErrReadOnlyFormat is returned when appending to (or creating) a file of a
// format recfs only reads (grailbio legacy recordio, Prometheus and etcd
// WALs, Kafka log segments); the error that wraps it says which and why. It
// matches codec.ErrUnsupported.
var ErrReadOnlyFormat = fmt.Errorf("%w: appending to a format recfs only reads", codec.ErrUnsupported)

// readOnlyErr is ErrReadOnlyFormat with the reason the driver drv gives.
func readOnlyErr(drv driver) error {
	if r, ok := drv.(readOnly); ok {
		return fmt.Errorf("%w: %s", ErrReadOnlyFormat, r.readOnly())
	}
	return ErrReadOnlyFormat
}

// AppendOptions configure Table.Append.
type AppendOptions struct {
	// Sync makes the append durable (fsync) before Append returns. recordio
	// appends are always synced: their crash safety depends on it.
	Sync bool
	// CountOnly is for a caller that closes the table right after the
	// append and needs only the number of the first new record and how
	// many there were (recfs append): the leveldb and TFRecord writers keep
	// no table entry per record, and the table is left as it was before
	// the append, as after another process's append (its next append or
	// Refresh takes the new records in). The file is checked as after any
	// append: still the same file, ending where the writer's last byte
	// went, the bytes the table covered starting as they did.
	CountOnly bool
}

// Append writes recs to the end of the source file as new records, through
// the format's own writer, and adds them to the table. It returns the
// number of the first new record. It writes through a descriptor of the
// file the table was made from, never re-resolving the path.
//
// Appends are serialised: within a table by a mutex, between tables and
// processes by an exclusive flock of the file, which every recfs appender
// and repair takes. Under the lock the table first catches up with what
// others appended since it was made, then appends at the file's true end.
// The result is the truth: Append succeeds if and only if all of recs are
// in the file; when it fails it puts the file back, still under the lock,
// exactly as it found it (byte for byte).
//
// A file whose directory holds a database LOCK file that a running
// database (leveldb, RocksDB, pebble) has locked is not touched: Append
// returns a *local.DBLockError (local.ErrDBLocked) unless Options.IgnoreDBLock is set.
//
// leveldb logs: records go after the last complete record. A torn tail left
// by a crashed writer (a record cut short at the end of the file) is first
// moved out of the way — its bytes are saved in a private directory next to
// the cached tables (see ErrNoPrivateDir) and the file is truncated to the
// end of the last good record — because goleveldb and pebble would
// otherwise glue it to the next record. A file that ends in App Engine block
// padding stays padded. Recyclable and WAL-sync logs (RocksDB, pebble) go on
// in their own chunk flavour with their own log number. A log its writer
// closed (pebble's end-of-log marker) or one that ends before a recycled
// file's stale data is refused before anything is written
// (leveldb.ErrClosedLog, leveldb.ErrRecycledTail): no reader would see records
// written after it.
//
// recordio: what a crashed append left is repaired first (see
// RepairRecordIO), then new body blocks go through
// RecordIOAppender, which keeps the trailer and is crash safe. Legacy
// recordio files are read-only.
func (t *Table) Append(ctx context.Context, recs [][]byte, o AppendOptions) (first int64, err error) {
	return t.appendRecords(ctx, appendReq{recs: recs, o: o})
}

// Stream is one record given as a stream: its Size bytes are read from R
// as the record is written (see [Table.AppendFrom]).
type Stream struct {
	R    io.Reader
	Size int64
}

// AppendFrom is Append for records given as streams (Size bytes read from
// R each): a record is never held in memory whole, so appending one of
// gigabytes takes a few chunk buffers. recordio items get a block each.
// If an input fails or ends early (codec.ErrShortInput), the file is put
// back as it was.
func (t *Table) AppendFrom(ctx context.Context, recs []Stream, o AppendOptions) (first int64, err error) {
	return t.appendRecords(ctx, appendReq{streams: recs, o: o})
}

// appendRecords appends what a holds.
func (t *Table) appendRecords(ctx context.Context, a appendReq) (first int64, err error) {
	if t.localFile() == nil {
		return 0, ErrWritableSource
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if unlock := t.held.Swap(nil); unlock != nil {
		// Create kept the lock, having probed the database LOCK.
		defer (*unlock)()
		a.locked = true
	} else if err := t.guardDBLock(); err != nil {
		return 0, fmt.Errorf("index: append to %s: %w", t.path, err)
	}
	t.saver.inside = true
	first, err = t.appendLocked(ctx, a)
	t.saver.inside = false
	if err != nil {
		return 0, fmt.Errorf("index: append to %s: %w", t.path, err)
	}
	return first, nil
}

// appendLocked is Append with t.mu held.
func (t *Table) appendLocked(ctx context.Context, a appendReq) (int64, error) {
	format := t.s().format
	drv, err := driverFor(format)
	if err != nil {
		return 0, err
	}
	ap, ok := drv.(appender)
	if !ok {
		return 0, readOnlyErr(drv)
	}
	f, done, err := t.writable()
	if err != nil {
		return 0, err
	}
	defer done()
	if wrapDest != nil {
		f = wrapDest(f)
	}
	if !a.locked {
		unlock, err := lockDest(f)
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	if err := t.pathIsFile(f); err != nil {
		return 0, err
	}
	if err := t.catchUp(ctx); err != nil {
		return 0, err
	}
	if err := t.scannedLocked(ctx); err != nil {
		return 0, err
	}
	if f := t.s().format; f != format {
		// The table was made from an empty file, in which another
		// writer has put records of this format since.
		if drv, err = driverFor(f); err != nil {
			return 0, err
		}
		if ap, ok = drv.(appender); !ok {
			return 0, readOnlyErr(drv)
		}
	}
	if rp, ok := drv.(repairer); ok {
		// Only under the lock is a journal or torn tail provably a crash's.
		if fixed, err := rp.repair(f, t.path, t.opt.tails()); err != nil {
			return 0, err
		} else if fixed {
			if err := t.catchUp(ctx); err != nil {
				return 0, err
			}
		}
	}
	s := t.s()
	// Reads of existing records go on during the append: it leaves them
	// where they are (see checkSource).
	t.writing.Add(1)
	defer t.writing.Add(-1)
	a.written = &written{}
	u, err := ap.append(t, f, s, a)
	if err == nil && a.o.Sync {
		err = t.syncNewEntry()
	}
	if err == nil {
		err = t.takeAppended(ctx, s, a, u)
	}
	if err != nil && u.set() {
		if rerr := u.restore(f); rerr != nil {
			err = fmt.Errorf("%w; putting the file back failed too: %v", err, rerr)
		}
		// The table must match the file again, even if ctx has ended.
		_, _ = t.rescanLocked(context.WithoutCancel(ctx))
	}
	if err != nil {
		return 0, err
	}
	if u.moved != nil {
		t.opt.tails().tell(*u.moved)
	}
	return s.n, nil
}

// catchUp brings the table up to date with the file, which the caller has
// locked: a cheap stat first, a scan of what changed only if it moved. The
// ctime counts: a same-size rewrite with its mtime put back moves only it,
// and an append must not extend the old version's table over such bytes.
func (t *Table) catchUp(ctx context.Context) error {
	s := t.s()
	if s.fst == nil {
		return ErrWritableSource // appendRecords let only local files in
	}
	st, err := s.fst.Fstat()
	if err != nil {
		return err
	}
	if st.Size == s.id.size && st.Mtime == s.id.mtime && st.Ctime == s.id.ctime {
		return nil
	}
	_, err = t.rescanLocked(ctx)
	return err
}

// takeAppended brings the table up to date after a wrote its records
// after the table s described: from the table the writer extended when
// it has one (and no torn tail was cut first), else by a rescan. A
// CountOnly append whose writer counted its records is only checked: the
// table stays s.
func (t *Table) takeAppended(ctx context.Context, s *snapshot, a appendReq, u undo) error {
	switch {
	case u.moved != nil:
	case a.written.tab != nil:
		return t.adoptWritten(s, a.written)
	case a.o.CountOnly && a.written.end > 0:
		_, _, _, err := t.checkWritten(s, a.written)
		return err
	}
	return t.checkAppended(ctx, s, a)
}

// checkAppended rescans the file (still locked) after a wrote records
// after the table old described, and checks that exactly a's records
// follow: their number and payload bytes, and each one's size when a's
// records were given, not streamed.
func (t *Table) checkAppended(ctx context.Context, old *snapshot, a appendReq) error {
	if _, err := t.rescanLocked(ctx); err != nil {
		return err
	}
	s := t.s()
	n, bytes, sizes := a.counts()
	if got := s.n - old.n; got != n {
		return fmt.Errorf("%d records written, %d found after it", n, got)
	}
	if got := s.bytes - old.bytes; got != bytes {
		return fmt.Errorf("%d payload bytes written, %d found after it", bytes, got)
	}
	first := old.n
	for i, n := range sizes {
		if s.size1(first+int64(i)) != n {
			return fmt.Errorf("record %d reads back with %d bytes, %d written", first+int64(i), s.size1(first+int64(i)), n)
		}
	}
	return nil
}

// appendReq is what one Append writes: recs, streams, or the records each
// yields when it is set.
type appendReq struct {
	recs    [][]byte
	streams []Stream
	each    *countedStream
	o       AppendOptions
	locked  bool // the caller holds the append lock already (Options.KeepCreateLock)
	// written, when set, receives the table the writer extended with the
	// records it wrote (see adoptWritten).
	written *written
}

// counts returns how many records a wrote, their payload bytes and, unless
// they were streamed, each one's payload length.
func (a appendReq) counts() (n, bytes int64, sizes []int64) {
	if a.each != nil {
		return a.each.n, a.each.bytes, nil
	}
	sizes = recordSizes(a.recs, a.streams)
	for _, s := range sizes {
		bytes += s
	}
	return int64(len(sizes)), bytes, sizes
}

// manyRecords is the number of records from which an append readies the
// table's columns for many (a whole chunk up front, no doubling).
const manyRecords = 4096

// many reports whether a is a stream, whose length is unknown, or holds at
// least manyRecords records.
func (a appendReq) many() bool {
	return a.each != nil || len(a.recs)+len(a.streams) >= manyRecords
}

// gathered returns a's records in memory, reading each's to the end (for
// writers that need them all first).
func (a appendReq) gathered() (appendReq, error) {
	if a.each == nil {
		return a, nil
	}
	var buf []byte
	var ends []int
	for a.each.Next() {
		buf = append(buf, a.each.Record()...)
		ends = append(ends, len(buf))
	}
	if err := a.each.Err(); err != nil {
		return a, err
	}
	recs := make([][]byte, len(ends))
	start := 0
	for i, e := range ends {
		recs[i] = buf[start:e:e]
		start = e
	}
	a.recs, a.each = recs, nil
	return a, nil
}

// writeAll writes a's records through write (a record in memory) and
// writeFrom (a stream of size bytes).
func (a appendReq) writeAll(write writeFunc, writeFrom writeFromFunc) error {
	for _, r := range a.recs {
		if _, err := write(r); err != nil {
			return err
		}
	}
	for _, r := range a.streams {
		if _, err := writeFrom(r.R, r.Size); err != nil {
			return err // the caller puts the file back
		}
	}
	if a.each == nil {
		return nil
	}
	for a.each.Next() {
		if _, err := write(a.each.Record()); err != nil {
			return err
		}
	}
	return a.each.Err()
}

// recordSizes returns the payload lengths of recs, or of streams when recs
// is nil.
func recordSizes(recs [][]byte, streams []Stream) []int64 {
	sizes := make([]int64, 0, len(recs)+len(streams))
	for _, r := range recs {
		sizes = append(sizes, int64(len(r)))
	}
	for _, r := range streams {
		sizes = append(sizes, r.Size)
	}
	return sizes
}

// offsetWriter writes sequentially at an explicit offset, so appends land
// where the table says the log ends even if the descriptor's offset differs.
// It keeps the last identBlock bytes it wrote (see kept). An append that
// will fsync has it sync behind (see newAppendWriter).
type offsetWriter struct {
	f      io.WriterAt
	off    int64
	start  int64  // off when the first write came; -1 before
	tail   []byte // the last (at most identBlock) bytes written
	behind *syncBehind
	kicked int64 // off when behind was last asked to sync
}

// newOffsetWriter returns an offsetWriter writing at off.
func newOffsetWriter(f io.WriterAt, off int64) *offsetWriter {
	return &offsetWriter{f: f, off: off, start: -1}
}

// newAppendWriter returns the offsetWriter of an append to f at off. With
// sync (the append will fsync) it fsyncs f in the background every
// writeBehind bytes it writes, while it goes on writing, so that the fsync
// at the end (syncAll) finds little left to write; stopSyncing must follow.
func newAppendWriter(f appendDest, off int64, sync bool) *offsetWriter {
	w := newOffsetWriter(f, off)
	if sync {
		w.behind = startSyncBehind(f)
		w.kicked = off
	}
	return w
}

// syncAll ends w's background fsyncs and fsyncs f, the file at path: what
// w wrote is on stable storage when it returns nil.
func (w *offsetWriter) syncAll(f appendDest, path string) error {
	if err := w.stopSyncing(); err != nil {
		return err
	}
	return syncFile(f, path)
}

// stopSyncing waits for w's background fsync to end and returns the
// first error it met; it can be called more than once, and does nothing
// without a background fsync.
func (w *offsetWriter) stopSyncing() error {
	if w.behind == nil {
		return nil
	}
	return w.behind.stop()
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	if w.start < 0 {
		w.start = w.off
	}
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	w.tail = keepLast(w.tail, p[:n])
	if w.behind != nil && w.off-w.kicked >= writeBehind {
		w.behind.kick()
		w.kicked = w.off
	}
	return n, err
}

// kept returns what the writer wrote, for the identity of the file after
// it (see lastBytes.extend): nothing if it wrote nothing.
func (w *offsetWriter) kept() *keptBytes {
	if w.start < 0 {
		return nil
	}
	return &keptBytes{from: w.start, to: w.off, b: w.tail}
}
